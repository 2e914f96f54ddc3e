"""Operations endpoints: `/healthz` (the process answers), `/readyz` (it can serve), `/metrics`."""

from __future__ import annotations

import asyncio
import contextlib

from starlette.requests import Request
from starlette.responses import Response

from router.pipeline import Gateway
from router.wire import json_response


async def healthz(request: Request) -> Response:
    return json_response({"status": "ok"})


async def readyz(request: Request) -> Response:
    gateway: Gateway = request.app.state.gateway
    names = list(gateway.upstreams)
    states = await asyncio.gather(*(gateway.upstreams[n].probe() for n in names))
    upstreams = {
        name: {
            "reachable": state.reachable,
            "detail": state.detail,
            "base_url": gateway.upstreams[name].settings.base_url,
            "model": gateway.upstreams[name].model,
        }
        for name, state in zip(names, states, strict=True)
    }
    ready = any(state.reachable for state in states)
    # The audit log's state is shown, not judged: a full audit disk must not take every replica
    # out of service (lines queue, then drop, counted in tandem_audit_lines).
    body = {"ready": ready, "upstreams": upstreams, "audit": gateway.audit.state}
    return json_response(body, status=200 if ready else 503)


async def metrics(request: Request) -> Response:
    gateway: Gateway = request.app.state.gateway
    # A scrape must answer even when the store does not: the gauge then keeps its last value.
    with contextlib.suppress(Exception):
        gateway.metrics.active_trajectories.set(await gateway.tracker.store.active_count())
    return Response(gateway.metrics.exposition(), media_type="text/plain; version=0.0.4; charset=utf-8")

"""Operations endpoints: `/healthz` (the process answers), `/readyz` (it can serve), `/metrics`.

`/readyz` needs no key, so it shows nothing that may be a credential: an upstream's base URL
without user:password@ and query, and no detail that could carry either. It reports apart
whether each upstream answers ("reachable") and whether it takes the gateway's key
("authorised"): a cloud upstream that answers 401 leaves the pod ready, since edge steps still
work, but shows in the field, in `tandem_upstream_authorised` and in a log line at start. The
two gauges are refreshed by every /readyz and, in the background, by every scrape of /metrics.
With `redis_failure: refuse`, a shared store (Redis) that is out makes the process unready (every
step would be refused), with a `reason`; in `degrade` mode it stays ready (steps go on from memory).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from router.api.http import json_response
from router.config.base import ConfigError, public_url
from router.engine import Engine
from router.trajectory.resilient import ResilientStore
from router.upstream import Upstream
from router.upstream_probe import UpstreamState

log = logging.getLogger("tandem")


async def healthz(request: Request) -> Response:
    return json_response({"status": "ok"})


def _scrubbed(text: str, upstream: Upstream) -> str:
    """`text` with the upstream's configured URL and key taken out (an error message may quote them)."""
    base_url = upstream.settings.base_url
    text = text.replace(base_url, public_url(base_url))
    try:
        key = upstream.settings.api_key()
    except ConfigError:  # a key file gone since start: nothing of it to take out
        key = None
    if key:
        text = text.replace(key, "***")
    return text


def _describe(upstream: Upstream, state: UpstreamState) -> dict[str, Any]:
    return {
        "reachable": state.reachable,
        "authorised": state.authorised,
        "detail": _scrubbed(state.detail, upstream),
        "base_url": public_url(upstream.settings.base_url),
        "model": upstream.model,
    }


async def _pooled_edge(engine: Engine, first: UpstreamState) -> tuple[UpstreamState, list[dict[str, Any]]]:
    """An edge pool is reachable while any replica is (the pool fails over between them), and
    authorised while any reachable one takes the key; each replica is shown apart."""
    pool = engine.edge_pool
    assert pool is not None
    states = [first, *await asyncio.gather(*(r.upstream.probe() for r in pool.replicas[1:]))]
    now = pool.clock()
    shown = [
        {**_describe(replica.upstream, state), "available": replica.alive(now)}
        for replica, state in zip(pool.replicas, states, strict=True)
    ]
    reachable = [state for state in states if state.reachable]
    best = next((state for state in reachable if state.authorised), reachable[0] if reachable else first)
    return best, shown


async def check_upstreams(engine: Engine) -> dict[str, dict[str, Any]]:
    """Probe every upstream; set the readiness gauges; what `/readyz` shows of each."""
    names = list(engine.upstreams)
    states = await asyncio.gather(*(engine.upstreams[n].probe() for n in names))
    replicas: list[dict[str, Any]] | None = None
    if engine.edge_pool is not None:
        edge = names.index("edge")
        pooled, replicas = await _pooled_edge(engine, states[edge])
        states[edge] = pooled
    report = {}
    for name, state in zip(names, states, strict=True):
        engine.metrics.upstream_reachable.labels(name).set(1 if state.reachable else 0)
        engine.metrics.upstream_authorised.labels(name).set(1 if state.authorised else 0)
        report[name] = _describe(engine.upstreams[name], state)
        if name == "edge" and replicas is not None:
            report[name]["replicas"] = replicas
    return report


async def log_upstreams(engine: Engine) -> None:
    """One line per upstream at start: reachable, and whether it took the gateway's key."""
    for name, state in (await check_upstreams(engine)).items():
        if not state["reachable"]:
            log.warning("upstream %s is not reachable (%s)", name, state["detail"])
        elif not state["authorised"]:
            log.warning(
                "upstream %s is reachable but NOT authorised (%s): steps sent to it will fail until "
                "its key (api_key_env / api_key_file) is right",
                name,
                state["detail"],
            )
        else:
            log.info("upstream %s is reachable and authorised (%s)", name, state["detail"])


async def _store_state(engine: Engine) -> tuple[dict[str, Any], str | None]:
    """What `/readyz` shows of the trajectory store, and why it makes the process unready."""
    store = engine.tracker.store
    if not isinstance(store, ResilientStore):
        return {"shared": False, "available": True}, None
    unready = await store.unready()
    return {"shared": True, "available": not store.degraded}, unready


async def readyz(request: Request) -> Response:
    engine: Engine = request.app.state.engine
    upstreams, (store, store_unready) = await asyncio.gather(check_upstreams(engine), _store_state(engine))
    # Ready while any upstream answers: an unauthorised cloud must not take edge traffic down.
    reasons = [] if any(state["reachable"] for state in upstreams.values()) else ["no upstream is reachable"]
    # Out of the shared store in `redis_failure: refuse` mode every step is refused: not ready,
    # so that a load balancer sends the steps elsewhere. In `degrade` mode steps go on.
    if store_unready is not None:
        reasons.append(store_unready)
    # The audit log's state is shown, not judged: a full audit disk must not take every replica
    # out of service (lines queue, then drop, counted in tandem_audit_lines).
    body: dict[str, Any] = {"ready": not reasons, "upstreams": upstreams, "store": store, "audit": engine.audit.state}
    if reasons:
        body["reason"] = "; ".join(reasons)
    return json_response(body, status=503 if reasons else 200)


def _refresh_upstream_gauges(request: Request) -> None:
    """Probe the upstreams in the background of a scrape, so that the readiness gauges (and the
    alerts on them) follow the upstreams where nothing calls /readyz; the scrape does not wait
    (a slow upstream must not slow it): the next one reads the result. One probe at a time."""
    running: asyncio.Task[Any] | None = getattr(request.app.state, "upstream_check", None)
    if running is None or running.done():
        request.app.state.upstream_check = asyncio.create_task(check_upstreams(request.app.state.engine))


async def metrics(request: Request) -> Response:
    engine: Engine = request.app.state.engine
    _refresh_upstream_gauges(request)
    # A scrape must answer even when the store does not: the gauge then keeps its last value.
    with contextlib.suppress(Exception):
        engine.metrics.active_trajectories.set(await engine.tracker.store.active_count())
    engine.refresh_edge_series()
    return Response(engine.metrics.exposition(), media_type="text/plain; version=0.0.4; charset=utf-8")

"""A key's cloud dollars per day hold under concurrency: each step holds its estimated cost
before it is sent, so 20 steps sent at once against a limit worth about two of them pass it by
at most one step's reservation; the rest get the OpenAI-shaped 429. Holds go back when a step
fails or stays on the edge. Real gateway, real slow upstream, in memory and with a real Redis.

    pytest -s tests/test_quota_concurrency.py   # prints the overshoot figure
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import orjson

from router.config.prices import Prices
from router.quota import reservation_usd
from router.trajectory.identify import namespace_of
from tests.both_stores import MakeGateway, make_gateway  # noqa: F401 (the fixture, both stores)
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, wait_until

KEY = "alice-key"
CLOUD_PRICES = Prices(input=2.50, cached_input=0.25, output=15.0)  # tests/gateway_server.py's cloud
MAX_TOKENS = 200
CONCURRENT = 20


def body(fake: dict[str, Any] | None = None, model: str = "tandem") -> bytes:
    raw: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "user", "content": "fix the failing test " * 20}],
        "max_tokens": MAX_TOKENS,
    }
    if fake is not None:
        raw["fake"] = fake
    return orjson.dumps(raw)


async def send_all(server: GatewayServer, payload: bytes, count: int) -> list[httpx.Response]:
    headers = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
    limits = httpx.Limits(max_connections=count)
    async with httpx.AsyncClient(timeout=30, limits=limits) as client:

        async def one() -> httpx.Response:
            # A new session each time: no per-trajectory budget could bind.
            own = {**headers, "X-Session-ID": uuid.uuid4().hex}
            return await client.post(f"{server.url}/v1/chat/completions", content=payload, headers=own)

        return list(await asyncio.gather(*(one() for _ in range(count))))


def settled(server: GatewayServer) -> bool:
    limits = server.gateway.tracker.limits
    return bool(server.run(limits.cloud_held(namespace_of(KEY))) < 1e-12)


def test_concurrent_steps_pass_a_dollar_limit_by_at_most_one_reservation(
    make_gateway: MakeGateway,  # noqa: F811
    cloud: FakeUpstream,
) -> None:
    # Each step answers slowly (all 20 are in flight together) and costs what it reserved: its
    # prompt at 4 bytes a token and all of its max_tokens.
    payload = body()
    reservation = reservation_usd(len(payload), MAX_TOKENS, 1024, CLOUD_PRICES)
    cloud.default = {"kind": "text", "delay": 0.5, "prompt_tokens": len(payload) // 4, "completion_tokens": MAX_TOKENS}
    cost = reservation
    limit = 2.5 * reservation
    server = make_gateway(
        routes={"tandem": {"strategy": "cloud", "failover": False}},
        client_api_keys=[KEY],
        client_limits={"cloud_usd_per_day": limit},
    )
    answers = asyncio.run(send_all(server, payload, CONCURRENT))
    codes = [answer.status_code for answer in answers]
    admitted = codes.count(200)
    assert codes.count(200) + codes.count(429) == CONCURRENT, codes
    assert 1 <= admitted < CONCURRENT, f"{admitted} of {CONCURRENT} admitted against a limit worth 2.5 steps"
    refused = next(answer for answer in answers if answer.status_code == 429)
    error = refused.json()["error"]
    assert error["type"] == "rate_limit_error" and error["code"] == "rate_limit_exceeded"
    assert "cloud today" in error["message"] and int(refused.headers["retry-after"]) > 0
    assert wait_until(lambda: settled(server))  # every hold settled by its step's record
    spent = server.run(server.gateway.tracker.limits.cloud_spent(namespace_of(KEY)))
    assert abs(spent - admitted * cost) < 1e-9
    overshoot = spent - limit
    print(
        f"\n{admitted} of {CONCURRENT} concurrent steps admitted: ${spent:.6f} spent against a limit of "
        f"${limit:.6f}; overshoot ${max(overshoot, 0):.6f} = {max(overshoot, 0) / reservation:.2f} of one "
        f"step's reservation (${reservation:.6f})"
    )
    assert overshoot <= reservation + 1e-12
    assert len(cloud.received) == admitted  # a refused step never reached the cloud


def test_a_failed_or_edge_step_gives_its_hold_back(
    make_gateway: MakeGateway,  # noqa: F811
    cloud: FakeUpstream,
    edge: FakeUpstream,
) -> None:
    payload = body()
    reservation = reservation_usd(len(payload), MAX_TOKENS, 1024, CLOUD_PRICES)
    # Room for one step's hold at a time: a hold that leaked would refuse the next step.
    server = make_gateway(
        routes={"tandem": {"strategy": "cloud", "failover": False}},
        client_api_keys=[KEY],
        client_limits={"cloud_usd_per_day": reservation * 0.9},
    )
    headers = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
    with httpx.Client(timeout=30) as client:

        def step(payload: bytes, **extra: str) -> httpx.Response:
            own = {**headers, "X-Session-ID": uuid.uuid4().hex, **extra}
            return client.post(f"{server.url}/v1/chat/completions", content=payload, headers=own)

        for _ in range(3):  # the cloud fails: nothing spent, the hold is back
            assert step(body({"kind": "error", "status": 500})).status_code == 500
            assert wait_until(lambda: settled(server))
        for _ in range(3):  # sent to the edge by the header: no cloud dollars
            assert step(payload, **{"x-tandem-target": "edge"}).status_code == 200
            assert wait_until(lambda: settled(server))
        assert server.run(server.gateway.tracker.limits.cloud_spent(namespace_of(KEY))) == 0
        cloud.default = {"kind": "text", "prompt_tokens": 10, "completion_tokens": 10}
        assert step(payload).status_code == 200  # the first cloud step still fits
        assert wait_until(lambda: settled(server))
        assert step(payload).status_code == 200  # $0.000175 spent of $0.0027: still under
    assert len(edge.received) == 3

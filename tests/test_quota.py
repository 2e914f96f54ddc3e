"""Limits per client key through the real gateway: requests per minute and cloud dollars per day,
in memory and shared by two replicas through a real redis-server. The limits read a fake clock
(tests/fake_clock.py) that the tests move: windows roll over without waiting for them."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from router.trajectory.identify import namespace_of
from tests.fake_clock import START, FakeClock
from tests.gateway_server import GatewayServer, wait_until
from tests.redis_server import RedisServer

MakeGateway = Callable[..., GatewayServer]
KEYS = ["alice-key", "bob-key"]


def ask(client: httpx.Client, server: GatewayServer, key: str, session: str | None = None) -> httpx.Response:
    # A fresh session id on every request: a per-trajectory budget would never bind.
    return client.post(
        f"{server.url}/v1/chat/completions",
        json={"model": "tandem", "messages": [{"role": "user", "content": "hi"}]},
        headers={"Authorization": f"Bearer {key}", "X-Session-ID": session or uuid.uuid4().hex},
    )


@pytest.fixture()
def clock() -> FakeClock:
    return FakeClock()  # five seconds into a UTC minute


@pytest.fixture()
def make_limited(make_gateway: MakeGateway, clock: FakeClock) -> MakeGateway:
    """Gateways whose client limits read the test's clock."""

    def make(**overrides: Any) -> GatewayServer:
        server = make_gateway(**overrides)
        if server.gateway.tracker.limits is not None:
            server.gateway.tracker.limits.clock = clock
        return server

    return make


@pytest.mark.parametrize("shared", [False, True])
def test_requests_per_minute_bound_a_key_whatever_its_sessions(
    make_limited: MakeGateway, client: httpx.Client, request: pytest.FixtureRequest, shared: bool, clock: FakeClock
) -> None:
    extra: dict[str, Any] = {"redis_url": request.getfixturevalue("redis_url")} if shared else {}
    server = make_limited(
        routes={"tandem": {"strategy": "edge"}},
        client_api_keys=KEYS,
        client_limits={"requests_per_minute": 3, "keys": {"bob-key": {"requests_per_minute": 5}}},
        **extra,
    )
    alice = [ask(client, server, "alice-key").status_code for _ in range(4)]
    assert alice == [200, 200, 200, 429]
    bob = [ask(client, server, "bob-key").status_code for _ in range(6)]
    assert bob == [200] * 5 + [429]  # its own override, its own count
    refused = ask(client, server, "alice-key")
    assert refused.status_code == 429
    error = refused.json()["error"]
    assert error["code"] == "rate_limit_exceeded" and "3 requests per minute" in error["message"]
    assert refused.headers["retry-after"] == "55"  # the clock stands 5 s into its minute
    metrics = client.get(f"{server.url}/metrics").text
    assert 'tandem_client_limit_refusals_total{limit="requests_per_minute"} 3.0' in metrics
    # The OpenAI SDK sees its own RateLimitError.
    sdk = openai.OpenAI(base_url=server.base_url, api_key="alice-key", max_retries=0)
    with pytest.raises(openai.RateLimitError):
        sdk.chat.completions.create(model="tandem", messages=[{"role": "user", "content": "hi"}])
    clock.advance(54)  # the minute's last second
    assert ask(client, server, "alice-key").status_code == 429
    clock.advance(1)  # the next minute: a fresh window
    assert [ask(client, server, "alice-key").status_code for _ in range(4)] == [200, 200, 200, 429]


def test_two_replicas_share_one_request_limit_through_redis(
    make_limited: MakeGateway, client: httpx.Client, redis_url: str
) -> None:
    settings: dict[str, Any] = {
        "routes": {"tandem": {"strategy": "edge"}},
        "client_api_keys": KEYS,
        "client_limits": {"requests_per_minute": 4},
        "redis_url": redis_url,
    }
    replicas = [make_limited(**settings), make_limited(**settings)]
    codes = [ask(client, replicas[i % 2], "alice-key").status_code for i in range(6)]
    assert codes == [200, 200, 200, 200, 429, 429]


@pytest.mark.parametrize("shared", [False, True])
def test_cloud_dollars_per_day_bound_a_key(
    make_limited: MakeGateway, client: httpx.Client, request: pytest.FixtureRequest, shared: bool, clock: FakeClock
) -> None:
    extra: dict[str, Any] = {"redis_url": request.getfixturevalue("redis_url")} if shared else {}
    # A cloud step of the fake cloud costs $0.000125 (20 prompt + 5 completion tokens).
    server = make_limited(
        routes={"tandem": {"strategy": "cloud"}},
        client_api_keys=KEYS,
        client_limits={"cloud_usd_per_day": 0.0002},
        **extra,
    )
    limits = server.gateway.tracker.limits

    def spent_at_least(steps: int) -> Callable[[], bool]:
        def check() -> bool:
            dollars = server.run(limits.cloud_spent(namespace_of("alice-key")))
            return bool(dollars >= steps * 0.000125 - 1e-9)

        return check

    assert ask(client, server, "alice-key").status_code == 200
    assert wait_until(spent_at_least(1))
    assert ask(client, server, "alice-key").status_code == 200
    assert wait_until(spent_at_least(2))  # the dollars are added off the request path
    refused = ask(client, server, "alice-key")
    assert refused.status_code == 429
    assert "cloud today" in refused.json()["error"]["message"]
    assert refused.headers["retry-after"] == str(86_400 - int(START % 86_400))  # to the UTC day's end
    assert ask(client, server, "bob-key").status_code == 200  # another key is not affected
    metrics = client.get(f"{server.url}/metrics").text
    assert 'tandem_client_limit_refusals_total{limit="cloud_usd_per_day"} 1.0' in metrics
    clock.advance(86_400)  # the next UTC day: a fresh budget
    assert ask(client, server, "alice-key").status_code == 200


def test_no_limits_configured_means_no_limiter(make_gateway: MakeGateway, client: httpx.Client) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "edge"}})
    assert server.gateway.tracker.limits is None
    assert all(ask(client, server, "any").status_code == 200 for _ in range(5))


def test_limits_hold_per_process_while_redis_is_out(
    make_limited: MakeGateway, client: httpx.Client, tmp_path: Path
) -> None:
    own = RedisServer(tmp_path / "redis").start()
    try:
        server = make_limited(
            routes={"tandem": {"strategy": "edge"}},
            client_api_keys=KEYS,
            client_limits={"requests_per_minute": 3},
            redis_url=own.url,
        )
        assert [ask(client, server, "alice-key").status_code for _ in range(2)] == [200, 200]
        own.stop()
        # Counted in this process from the outage on: never a 500, still bounded.
        codes = [ask(client, server, "alice-key").status_code for _ in range(5)]
        assert codes == [200, 200, 200, 429, 429]
    finally:
        own.stop()

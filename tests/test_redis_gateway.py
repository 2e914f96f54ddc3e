"""Several gateway replicas sharing one Redis, and a Redis that goes away and comes back."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import redis

from router.trajectory.resilient import ResilientStore
from tests.fake_clock import FakeClock
from tests.gateway_server import GatewayServer, wait_until
from tests.redis_server import RedisServer

MakeGateway = Callable[..., GatewayServer]
BODY = {"model": "tandem", "messages": [{"role": "user", "content": "task"}]}


def step(client: httpx.Client, server: GatewayServer, session: str, turn: int) -> httpx.Response:
    messages = [*BODY["messages"], *([{"role": "assistant", "content": "ok"}] * turn)]
    return client.post(
        f"{server.url}/v1/chat/completions", json={**BODY, "messages": messages}, headers={"X-Session-ID": session}
    )


def test_two_replicas_share_one_trajectory(make_gateway: MakeGateway, client: httpx.Client, redis_url: str) -> None:
    replicas = [make_gateway(redis_url=redis_url), make_gateway(redis_url=redis_url)]
    assert all(isinstance(r.gateway.tracker.store, ResilientStore) for r in replicas)
    steps = [int(step(client, replicas[turn % 2], "shared", turn).headers["x-tandem-step"]) for turn in range(6)]
    assert steps == [1, 2, 3, 4, 5, 6]

    # Step records are written off the request path by the replica that answered; a read on
    # the other replica sees them within moments, not necessarily at once.
    def views() -> list[dict[str, object]]:
        return [client.get(f"{r.url}/v1/trajectories/shared").json() for r in replicas]

    assert wait_until(lambda: all(len(v["records"]) == 6 for v in views()), timeout=5)  # type: ignore[arg-type]
    seen = views()
    assert seen[0]["steps"] == seen[1]["steps"] == 6
    assert seen[0]["cost_usd"] == seen[1]["cost_usd"]
    assert float(seen[0]["cost_usd"]) > 0  # type: ignore[arg-type]


def test_redis_going_away_degrades_to_memory_and_recovers(
    make_gateway: MakeGateway, client: httpx.Client, tmp_path: Path
) -> None:
    own = RedisServer(tmp_path / "redis").start()
    try:
        server = make_gateway(redis_url=own.url)
        store = server.gateway.tracker.store
        assert isinstance(store, ResilientStore)
        store.clock = clock = FakeClock()  # the breaker waits on it: the test moves it
        assert step(client, server, "r", 0).headers["x-tandem-step"] == "1"
        own.stop()
        degraded = step(client, server, "r", 1)
        assert degraded.status_code == 200  # the agent never sees the store's failure
        metrics = client.get(f"{server.url}/metrics").text
        assert "tandem_store_errors_total{operation=" in metrics
        own.start()  # same port: Redis is back
        assert wait_until(lambda: clock.sleeping == 1) and clock.slept == [1.0]  # the breaker: 1 s
        assert step(client, server, "early", 0).status_code == 200
        assert store.degraded  # the breaker has not probed yet: still served from memory
        clock.advance(1.0)
        # After the breaker, the journal goes back and steps reach Redis again.
        assert wait_until(lambda: not store.degraded)
        assert step(client, server, "back", 0).status_code == 200
        direct = redis.Redis.from_url(own.url)
        assert direct.hget("tandem:t:back", "steps") == b"1"
        assert direct.hget("tandem:t:early", "steps") == b"1"  # written back from the journal
        direct.close()
    finally:
        own.stop()


def test_refuse_mode_answers_503_while_redis_is_down(
    make_gateway: MakeGateway, client: httpx.Client, tmp_path: Path
) -> None:
    own = RedisServer(tmp_path / "redis").start()
    server = make_gateway(redis_url=own.url, redis_failure="refuse")
    own.stop()
    response = step(client, server, "x", 0)
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["code"] == "store_unavailable" and "Redis" in error["message"]
    assert response.headers["retry-after"] == "5"


def test_keys_of_another_type_under_the_gateways_names_fail_no_other_step(
    make_gateway: MakeGateway, client: httpx.Client, tmp_path: Path
) -> None:
    """The indexes written over by hand (a string where a sorted set is) failed every step of
    every run with a 503; a trajectory's hash written over failed the whole listing."""
    own = RedisServer(tmp_path / "redis").start()
    try:
        server = make_gateway(redis_url=own.url)
        raw = redis.Redis.from_url(own.url)
        assert step(client, server, "typed-1", 0).status_code == 200
        keys = {key.decode() for key in raw.keys("*")}
        prefix = next(key.removesuffix("recent") for key in keys if key.endswith("recent"))
        raw.set(f"{prefix}open", "x")
        raw.set(f"{prefix}recent", "x")
        for turn, session in enumerate(("typed-1", "typed-2")):
            response = step(client, server, session, turn if session == "typed-1" else 0)
            assert response.status_code == 200, response.text
        assert raw.type(f"{prefix}recent") == b"zset" and raw.type(f"{prefix}open") == b"zset"
        # A trajectory's hash written over by a list: that row is left out of the listing.
        assert wait_until(lambda: len(client.get(f"{server.url}/v1/trajectories").json()["data"]) == 2)
        broken = next(key for key in raw.keys(f"{prefix}*typed-2") if raw.type(key) == b"hash")
        raw.delete(broken)
        raw.lpush(broken, "a")
        listing = client.get(f"{server.url}/v1/trajectories")
        assert listing.status_code == 200, listing.text
        assert [t["id"] for t in listing.json()["data"]] == ["typed-1"]
    finally:
        own.stop()

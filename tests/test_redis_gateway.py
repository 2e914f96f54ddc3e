"""Several gateway replicas sharing one Redis, and a Redis that goes away and comes back."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import redis

from router.trajectory.resilient import ResilientStore
from tests.gateway_server import GatewayServer
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
    views = [client.get(f"{r.url}/v1/trajectories/shared").json() for r in replicas]
    assert views[0]["steps"] == views[1]["steps"] == 6
    assert len(views[0]["records"]) == len(views[1]["records"]) == 6
    assert views[0]["cost_usd"] == views[1]["cost_usd"] > 0


def test_redis_going_away_degrades_to_memory_and_recovers(
    make_gateway: MakeGateway, client: httpx.Client, tmp_path: Path
) -> None:
    own = RedisServer(tmp_path / "redis").start()
    try:
        server = make_gateway(redis_url=own.url)
        assert step(client, server, "r", 0).headers["x-tandem-step"] == "1"
        own.stop()
        degraded = step(client, server, "r", 1)
        assert degraded.status_code == 200  # the agent never sees the store's failure
        metrics = client.get(f"{server.url}/metrics").text
        assert 'tandem_store_errors_total{operation="begin_step"}' in metrics
        own.start()  # same port: Redis is back
        # After the breaker (1 s), steps reach Redis again.
        import time

        time.sleep(1.1)
        assert step(client, server, "back", 0).status_code == 200
        direct = redis.Redis.from_url(own.url)
        assert direct.hget("tandem:t:back", "steps") == b"1"
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

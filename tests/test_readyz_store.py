"""`/readyz` and the shared store: with `redis_failure: refuse` a Redis that is out (frozen or
down) makes the process unready, since it refuses every step; in `degrade` mode it stays ready.
A real gateway and a real redis-server, frozen with SIGSTOP or stopped."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.gateway_server import GatewayServer, chat, wait_until
from tests.redis_server import RedisServer

MakeGateway = Callable[..., GatewayServer]
ROUTES = {"tandem": {"strategy": "edge"}}


@pytest.fixture()
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path / "redis").start()
    yield server
    server.stop()


def ready(client: httpx.Client, server: GatewayServer) -> bool:
    return client.get(f"{server.url}/readyz").status_code == 200


def test_a_frozen_redis_in_refuse_mode_makes_the_process_unready_until_it_is_back(
    make_gateway: MakeGateway, client: httpx.Client, own_redis: RedisServer
) -> None:
    server = make_gateway(redis_url=own_redis.url, redis_failure="refuse", routes=ROUTES)
    answer = client.get(f"{server.url}/readyz")
    assert answer.status_code == 200, answer.text
    assert answer.json()["store"] == {"shared": True, "available": True}
    assert "reason" not in answer.json()
    own_redis.pause()
    try:
        # No step has run since: `/readyz` itself finds the store out.
        answer = client.get(f"{server.url}/readyz")
        assert answer.status_code == 503, answer.text
        body = answer.json()
        assert body["ready"] is False
        assert body["store"] == {"shared": True, "available": False}
        assert "redis_failure is refuse" in body["reason"]
        assert body["upstreams"]["edge"]["reachable"] is True  # the upstreams are not the cause
        step = chat(client, server.url)
        assert step.status_code == 503 and step.json()["error"]["code"] == "store_unavailable"
    finally:
        own_redis.resume()
    assert wait_until(lambda: ready(client, server), timeout=10)
    assert chat(client, server.url).status_code == 200


def test_a_stopped_redis_in_refuse_mode_is_unready_after_a_refused_step(
    make_gateway: MakeGateway, client: httpx.Client, own_redis: RedisServer
) -> None:
    server = make_gateway(redis_url=own_redis.url, redis_failure="refuse", routes=ROUTES)
    own_redis.stop()
    assert chat(client, server.url).status_code == 503
    answer = client.get(f"{server.url}/readyz")
    assert answer.status_code == 503
    assert "Redis" in answer.json()["reason"]
    own_redis.start()
    assert wait_until(lambda: ready(client, server), timeout=10)


def test_redis_out_in_degrade_mode_leaves_the_process_ready(
    make_gateway: MakeGateway, client: httpx.Client, own_redis: RedisServer
) -> None:
    server = make_gateway(redis_url=own_redis.url, routes=ROUTES)
    own_redis.stop()
    assert chat(client, server.url).status_code == 200  # served from memory
    answer = client.get(f"{server.url}/readyz")
    assert answer.status_code == 200, answer.text
    assert answer.json()["ready"] is True
    assert answer.json()["store"] == {"shared": True, "available": False}


def test_an_idle_process_in_degrade_mode_shows_redis_out_without_a_step(
    make_gateway: MakeGateway, client: httpx.Client, own_redis: RedisServer
) -> None:
    """No step and no scrape since Redis went: `/readyz` itself asks it, and says it is out
    (still ready: steps are served from memory); and back once it is."""
    server = make_gateway(redis_url=own_redis.url, routes=ROUTES)
    assert client.get(f"{server.url}/readyz").json()["store"] == {"shared": True, "available": True}
    own_redis.stop()
    answer = client.get(f"{server.url}/readyz")
    assert answer.status_code == 200, answer.text
    assert answer.json()["store"] == {"shared": True, "available": False}
    own_redis.start()
    assert wait_until(lambda: client.get(f"{server.url}/readyz").json()["store"]["available"] is True, timeout=15)


def test_a_process_without_redis_shows_its_store_in_memory(make_gateway: MakeGateway, client: httpx.Client) -> None:
    answer = client.get(f"{make_gateway(routes=ROUTES).url}/readyz")
    assert answer.status_code == 200
    assert answer.json()["store"] == {"shared": False, "available": True}

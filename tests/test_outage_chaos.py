"""Chaos: 50 agent-like clients against a real gateway while its Redis is stopped and restarted
(SIGKILL, SIGTERM) or frozen (SIGSTOP/SIGCONT) for 8 s mid-load. After recovery the
shared ledger must hold every answered step once, each with its record. Bounded: ~20 s a run.

Run with `-s` to print the figures (answered, counted, recorded, duplicates, missing).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from router.trajectory.resilient import ResilientStore
from tests.gateway_server import GatewayServer, wait_until
from tests.ledger_audit import audit
from tests.redis_server import RedisServer

MakeGateway = Callable[..., GatewayServer]
CLIENTS = 50
LOAD_S = 12.0
OUTAGE_AT_S, OUTAGE_S = 2.0, 8.0


@pytest.fixture()
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    # Persistent (an append-only file synced at every write): the gateway cannot bring back
    # what Redis itself forgets on a restart, and a production Redis persists.
    server = RedisServer(tmp_path / "redis", persistent=True).start()
    yield server
    server.stop()


async def agent(http: httpx.AsyncClient, urls: list[str], session: str, until: float, answered: list[int]) -> int:
    """One multi-step trajectory: each step resends the history plus the last answer; with
    several replicas, its steps go to each in turn."""
    messages = [{"role": "user", "content": f"task of {session}: fix the failing test"}]
    errors = 0
    while time.monotonic() < until:
        response = await http.post(
            f"{urls[len(answered) % len(urls)]}/v1/chat/completions",
            json={"model": "tandem", "messages": messages},
            headers={"X-Session-ID": session},
        )
        if response.status_code != 200:
            errors += 1
            continue
        answered.append(int(response.headers["x-tandem-step"]))
        messages = [*messages, {"role": "assistant", "content": f"step {len(answered)} done"}]
        await asyncio.sleep(0.02)
    return errors


async def load(*urls: str) -> tuple[dict[str, list[int]], int]:
    until = time.monotonic() + LOAD_S
    answered: dict[str, list[int]] = {f"agent-{i}": [] for i in range(CLIENTS)}
    limits = httpx.Limits(max_connections=CLIENTS, max_keepalive_connections=CLIENTS)
    async with httpx.AsyncClient(timeout=20, limits=limits) as http:
        errors = await asyncio.gather(*(agent(http, list(urls), s, until, steps) for s, steps in answered.items()))
    return answered, sum(errors)


def outage(redis: RedisServer, how: str) -> None:
    time.sleep(OUTAGE_AT_S)
    if how == "sigstop":
        redis.pause()
        time.sleep(OUTAGE_S)
        redis.resume()
        return
    redis.stop() if how == "sigkill" else redis.terminate()
    time.sleep(OUTAGE_S)
    redis.start()  # the same port


@pytest.mark.parametrize("how", ["sigkill", "sigterm", "sigstop"])
def test_no_step_is_lost_when_redis_goes_away_under_load(
    make_gateway: MakeGateway, own_redis: RedisServer, how: str
) -> None:
    server = make_gateway(redis_url=own_redis.url, routes={"tandem": {"strategy": "edge"}})
    store = server.gateway.tracker.store
    assert isinstance(store, ResilientStore)
    chaos = threading.Thread(target=outage, args=(own_redis, how))
    started = time.monotonic()
    chaos.start()
    answered, errors = asyncio.run(load(server.url))
    chaos.join()
    assert wait_until(lambda: not store.degraded and len(store.journal) == 0, timeout=10)
    server.run(server.gateway.tracker.recorder.flush())
    found = audit(own_redis.url)
    total = sum(len(steps) for steps in answered.values())
    figures = {
        "how": how,
        "clients": CLIENTS,
        "outage_s": OUTAGE_S,
        "answered": total,
        "client_errors": errors,
        "in_ledger": found.counted,
        "recorded_indexes": found.recorded,
        "duplicate_indexes": found.duplicates,
        "counted_without_record": found.missing,
        "written_back": store.journal.written,
        "seconds": round(time.monotonic() - started, 1),
    }
    print("\nchaos figures:", orjson.dumps(figures).decode())
    assert store.journal.written > 0  # the outage did happen mid-load, and was written back
    assert errors == 0  # `degrade`: the agents never saw the outage
    # One replica: each client saw its indexes continue, 1, 2, 3… with no restart at 1.
    assert all(steps == list(range(1, len(steps) + 1)) for steps in answered.values())
    assert found.counted == total == found.recorded
    assert found.duplicates == 0 and found.missing == 0
    assert found.per_trajectory == {session: len(steps) for session, steps in answered.items()}


def test_two_replicas_lose_nothing_and_renumber_what_both_counted(
    make_gateway: MakeGateway, own_redis: RedisServer
) -> None:
    replicas = [make_gateway(redis_url=own_redis.url, routes={"tandem": {"strategy": "edge"}}) for _ in range(2)]
    stores = [replica.gateway.tracker.store for replica in replicas]
    assert all(isinstance(store, ResilientStore) for store in stores)
    chaos = threading.Thread(target=outage, args=(own_redis, "sigkill"))
    chaos.start()
    answered, errors = asyncio.run(load(*(replica.url for replica in replicas)))
    chaos.join()
    assert wait_until(lambda: all(not s.degraded and len(s.journal) == 0 for s in stores), timeout=10)
    for replica in replicas:
        replica.run(replica.gateway.tracker.recorder.flush())
    found = audit(own_redis.url)
    total = sum(len(steps) for steps in answered.values())
    # Each replica counted the other's steps it had not seen: told indexes repeat, the ledger's do not.
    told_twice = sum(len(steps) - len(set(steps)) for steps in answered.values())
    print(
        "\nchaos figures (2 replicas):",
        orjson.dumps(
            {
                "answered": total,
                "in_ledger": found.counted,
                "duplicate_indexes": found.duplicates,
                "counted_without_record": found.missing,
                "indexes_told_twice": told_twice,
            }
        ).decode(),
    )
    assert errors == 0
    assert found.counted == total == found.recorded
    assert found.duplicates == 0 and found.missing == 0
    assert found.per_trajectory == {session: len(steps) for session, steps in answered.items()}

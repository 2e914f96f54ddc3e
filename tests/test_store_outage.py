"""The shared store under bad queries and outages: a real gateway, a real redis-server."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import redis

from router.trajectory.journal import CountedStep, Journal, Note, Write
from router.trajectory.merges import APPEND, FLIGHT, FRONT, MARK, Merge
from router.trajectory.redis_store import RedisStore
from router.trajectory.resilient import ResilientStore
from router.trajectory.state import StepStart
from router.trajectory.store import MemoryStore
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, wait_until
from tests.ledger_audit import audit
from tests.redis_server import RedisServer

MakeGateway = Callable[..., GatewayServer]
EMAIL = "jane.doe@example.com"


def store_outages(metrics: str) -> float:
    """The sum of tandem_store_errors_total (its series start at zero, so presence says nothing)."""
    return sum(
        float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines() if line.startswith("tandem_store_errors_total{")
    )


def ask(client: httpx.Client, server: GatewayServer, session: str, turn: int, content: str = "task") -> httpx.Response:
    messages: list[dict[str, Any]] = [{"role": "user", "content": content}]
    messages += [{"role": "assistant", "content": f"ok {i}"} for i in range(turn)]
    return client.post(
        f"{server.url}/v1/chat/completions",
        json={"model": "tandem", "messages": messages},
        headers={"X-Session-ID": session},
    )


def store_of(server: GatewayServer) -> ResilientStore:
    store = server.gateway.tracker.store
    assert isinstance(store, ResilientStore)
    return store


def recovered(server: GatewayServer) -> bool:
    store = store_of(server)
    return not store.degraded and len(store.journal) == 0


@pytest.fixture()
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path / "redis", persistent=True).start()
    yield server
    server.stop()


# -- item 7: a bad query is a 400, a reply error is not an outage ---------------------------------


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ("since=nan", "since"),
        ("until=inf", "until"),
        ("before=-inf", "before"),
        ("since=-5", "since"),
        ("before=1e300", "before"),
        ("until=99999999999999", "until"),
        ("since=yesterday", "since"),
        ("limit=-1", "limit"),
        ("limit=1e3", "limit"),
        ("limit=%C2%B2", "limit"),  # '²' passes str.isdigit() but not int()
        ("limit=99999999999999999999", "limit"),
        ("limit=5&limit=6", "limit"),
        ("route=", "route"),
        ("route=" + "r" * 201, "route"),
        ("route=a%00b", "route"),
        ("cursor=abc", "cursor"),
    ],
)
def test_bad_list_queries_are_400_and_never_trip_the_store(
    make_gateway: MakeGateway, client: httpx.Client, redis_url: str, query: str, param: str
) -> None:
    server = make_gateway(redis_url=redis_url, routes={"tandem": {"strategy": "edge"}})
    response = client.get(f"{server.url}/v1/trajectories?{query}")
    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"] == param
    assert param in response.json()["error"]["message"]
    assert not store_of(server).degraded
    assert store_outages(client.get(f"{server.url}/metrics").text) == 0
    # The next step reaches the shared ledger, not the memory of one replica.
    assert ask(client, server, "after-bad-query", 0).status_code == 200
    assert redis.Redis.from_url(redis_url).hget("tandem:t:after-bad-query", "steps") == b"1"


def test_other_trajectory_endpoints_refuse_query_parameters(
    make_gateway: MakeGateway, client: httpx.Client, redis_url: str
) -> None:
    server = make_gateway(redis_url=redis_url, routes={"tandem": {"strategy": "edge"}})
    ask(client, server, "q", 0)
    got = client.get(f"{server.url}/v1/trajectories/q?since=nan")
    assert got.status_code == 400 and got.json()["error"]["param"] == "since"
    posted = client.post(f"{server.url}/v1/trajectories/q/outcome?x=1", json={"success": True})
    assert posted.status_code == 400 and posted.json()["error"]["param"] == "x"
    assert client.get(f"{server.url}/v1/trajectories?since=1700000000&limit=5&route=tandem").status_code == 200


def test_a_redis_reply_error_fails_one_call_and_keeps_the_breaker_closed(
    make_gateway: MakeGateway, client: httpx.Client, redis_url: str
) -> None:
    server = make_gateway(redis_url=redis_url, routes={"tandem": {"strategy": "edge"}}, redis_failure="refuse")
    direct = redis.Redis.from_url(redis_url)
    direct.set("tandem:t:wrongtype", "not a hash")  # every hash command on it is a WRONGTYPE reply
    response = client.get(f"{server.url}/v1/trajectories/wrongtype")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "store_error"
    assert "WRONGTYPE" in response.json()["error"]["message"]
    assert not store_of(server).degraded
    # With `refuse`, an opened breaker would answer every tenant 503: it stays closed.
    assert ask(client, server, "other-tenant", 0).status_code == 200
    metrics = client.get(f"{server.url}/metrics").text
    assert 'tandem_store_reply_errors_total{operation="get"} 1.0' in metrics
    assert store_outages(metrics) == 0
    direct.close()


# -- item 12: the indexes are bounded -------------------------------------------------------------


async def test_recent_is_trimmed_and_expired_trajectories_leave_open(redis_url: str) -> None:
    store = RedisStore(redis_url, ttl_s=1, max_recent=3)
    direct = redis.Redis.from_url(redis_url)
    try:
        await store.begin_step(StepStart("old", "b", False, "t", "tandem", "", time.time()))
        await asyncio.sleep(2.2)  # "old" has expired
        assert direct.exists("tandem:t:old") == 0
        assert await store.idle(time.time(), 10) == []  # the sweep drops it from `open`
        assert direct.zscore("tandem:open", "old") is None
        for index in range(5):
            await store.begin_step(StepStart(f"new{index}", "b", False, "t", "tandem", "", time.time()))
        assert direct.zcard("tandem:recent") == 3  # the newest three only
        assert direct.zscore("tandem:recent", "old") is None
        assert await store.close("gone", "idle", time.time()) is None
        direct.zadd("tandem:open", {"gone": time.time()})
        assert await store.close("gone", "idle", time.time()) is None
        assert direct.zscore("tandem:open", "gone") is None  # closing an expired one clears it
        assert await store.active_count() == 5
    finally:
        direct.close()
        await store.aclose()


# -- item 8: an outage loses nothing ---------------------------------------------------------------


def test_one_replica_continues_its_indexes_through_an_outage_and_writes_back(
    make_gateway: MakeGateway, client: httpx.Client, own_redis: RedisServer
) -> None:
    server = make_gateway(redis_url=own_redis.url, routes={"tandem": {"strategy": "edge"}})
    answered = [ask(client, server, "one", turn) for turn in range(3)]
    own_redis.stop()
    answered += [ask(client, server, "one", turn) for turn in range(3, 6)]
    answered.append(ask(client, server, "one", 5))  # a retry of step 6 during the outage
    assert store_of(server).degraded
    assert "tandem_store_outage_pending" in client.get(f"{server.url}/metrics").text
    own_redis.start()
    assert wait_until(lambda: recovered(server), timeout=5)
    answered.append(ask(client, server, "one", 6))
    assert [r.status_code for r in answered] == [200] * 8
    assert [int(r.headers["x-tandem-step"]) for r in answered] == [1, 2, 3, 4, 5, 6, 6, 7]
    server.run(server.gateway.tracker.recorder.flush())
    found = audit(own_redis.url)
    assert (found.counted, found.recorded, found.duplicates, found.missing) == (7, 7, 0, 0)
    metrics = client.get(f"{server.url}/metrics").text
    assert 'tandem_store_written_back_total{kind="step"} 3.0' in metrics
    assert "tandem_store_outage_pending 0.0" in metrics


def test_budgets_task_decisions_and_pins_hold_during_an_outage(
    make_gateway: MakeGateway, client: httpx.Client, own_redis: RedisServer, cloud: FakeUpstream
) -> None:
    server = make_gateway(
        redis_url=own_redis.url,
        routes={
            "tandem": {"strategy": "cloud", "constraints": {"budget_calls": 1}},
            "private": {"strategy": "cloud", "privacy": "keep_local"},
            "task": {"strategy": "task", "cloud_if_matches": "deploy"},
        },
    )
    assert ask(client, server, "budget", 0).headers["x-tandem-target"] == "cloud"
    decided = {"model": "task", "messages": [{"role": "user", "content": "deploy the app"}]}
    task = client.post(f"{server.url}/v1/chat/completions", json=decided, headers={"X-Session-ID": "task"})
    assert task.headers["x-tandem-target"] == "cloud"
    private = {"model": "private", "messages": [{"role": "user", "content": f"mail {EMAIL}"}]}
    pinned = client.post(f"{server.url}/v1/chat/completions", json=private, headers={"X-Session-ID": "pin"})
    assert pinned.headers["x-tandem-reason"] == "privacy_keep_local"
    own_redis.stop()
    over_budget = ask(client, server, "budget", 1)
    assert (over_budget.headers["x-tandem-target"], over_budget.headers["x-tandem-reason"]) == (
        "edge",
        "budget_exhausted",
    )
    clean = {"model": "private", "messages": [{"role": "user", "content": "list the files"}]}
    still_pinned = client.post(f"{server.url}/v1/chat/completions", json=clean, headers={"X-Session-ID": "pin"})
    # Kept local: the trajectory holds a sensitive value (privacy outranks the pin, which stands too).
    assert (still_pinned.headers["x-tandem-target"], still_pinned.headers["x-tandem-reason"]) == (
        "edge",
        "privacy_keep_local",
    )
    assert still_pinned.headers["x-tandem-step"] == "2"
    # The run's decision stands although this (compacted) history no longer says "deploy".
    compacted = {"model": "task", "messages": [{"role": "user", "content": "continue"}]}
    kept = client.post(f"{server.url}/v1/chat/completions", json=compacted, headers={"X-Session-ID": "task"})
    assert (kept.headers["x-tandem-target"], kept.headers["x-tandem-step"]) == ("cloud", "2")
    assert len(cloud.received) == 3
    own_redis.start()
    assert wait_until(lambda: recovered(server), timeout=5)
    server.run(server.gateway.tracker.recorder.flush())
    found = audit(own_redis.url)
    assert found.per_trajectory == {"budget": 2, "pin": 2, "task": 2}
    assert (found.duplicates, found.missing) == (0, 0)


def test_replicas_renumber_on_write_back_and_fail_closed_on_unknown_pins(
    make_gateway: MakeGateway, client: httpx.Client, own_redis: RedisServer, cloud: FakeUpstream
) -> None:
    routes = {"tandem": {"strategy": "edge"}, "private": {"strategy": "cloud", "privacy": "keep_local"}}
    first, second = (
        make_gateway(redis_url=own_redis.url, routes=routes),
        make_gateway(redis_url=own_redis.url, routes=routes),
    )
    for turn in range(2):
        ask(client, first, "shared", turn)
    private = {"model": "private", "messages": [{"role": "user", "content": f"mail {EMAIL}"}]}
    client.post(f"{first.url}/v1/chat/completions", json=private, headers={"X-Session-ID": "pin"})
    own_redis.stop()
    # Both count "step 3" of the shared trajectory in their own memory.
    assert ask(client, first, "shared", 2).headers["x-tandem-step"] == "3"
    assert ask(client, second, "shared", 20).headers["x-tandem-step"] == "1"  # the second never saw it
    clean = {"model": "private", "messages": [{"role": "user", "content": "list the files"}]}
    unknown = client.post(f"{second.url}/v1/chat/completions", json=clean, headers={"X-Session-ID": "pin"})
    assert (unknown.headers["x-tandem-target"], unknown.headers["x-tandem-reason"]) == ("edge", "pinned_edge")
    assert len(cloud.received) == 0
    own_redis.start()
    assert wait_until(lambda: recovered(first) and recovered(second), timeout=6)
    for server in (first, second):
        server.run(server.gateway.tracker.recorder.flush())
    found = audit(own_redis.url)
    assert found.per_trajectory == {"shared": 4, "pin": 2}
    assert (found.duplicates, found.missing) == (0, 0)


def test_a_redis_back_without_its_data_numbers_live_steps_apart_from_the_renumbered_ones(
    make_gateway: MakeGateway, client: httpx.Client, tmp_path: Path
) -> None:
    """Redis restarted empty: the outage's steps are counted again from 1 and their records
    renumbered; the steps after it are counted on from there, and their records keep the index
    their client was told (none takes the index of a renumbered step)."""
    empty = RedisServer(tmp_path / "volatile", persistent=False).start()
    try:
        server = make_gateway(redis_url=empty.url)
        for turn in range(3):
            ask(client, server, "run", turn)
        server.run(server.gateway.tracker.recorder.flush())  # kept, then lost with the data
        empty.stop()
        told = [ask(client, server, "run", turn).headers["x-tandem-step"] for turn in (3, 4)]
        assert told == ["4", "5"]  # counted in memory
        empty.start()
        assert wait_until(lambda: recovered(server), timeout=6)
        live = [ask(client, server, "run", turn).headers["x-tandem-step"] for turn in (5, 6, 7)]
        server.run(server.gateway.tracker.recorder.flush())
        found = audit(empty.url)
        assert found.per_trajectory == {"run": 5}  # 2 written back, 3 live
        assert live == ["3", "4", "5"]
        with redis.Redis.from_url(empty.url) as direct:
            steps = sorted(int(orjson.loads(line)["step"]) for line in direct.lrange("tandem:t:run:r", 0, -1))
        assert steps == [1, 2, 3, 4, 5]
        assert (found.duplicates, found.missing) == (0, 0)
    finally:
        empty.stop()


async def test_a_write_redis_refuses_for_good_is_dropped_and_the_rest_written_back(redis_url: str) -> None:
    store = RedisStore(redis_url)
    direct = redis.Redis.from_url(redis_url)
    direct.set("tandem:t:bad", "not a hash")
    dropped: list[tuple[str, int]] = []
    journal = Journal(10, on_dropped=lambda kind, count: dropped.append((kind, count)))
    try:
        journal.add(Note("bad", "k", "v", False))
        journal.add(Write("stitch", lambda s: s.stitch_remember("key", "good")))
        for index, name in enumerate(["good", "bad", "good2"]):
            journal.add(CountedStep(StepStart(name, "b", False, "t", "tandem", "", time.time(), f"tok{index}"), 1))
        await journal.write_back(store)
        assert dropped == [("note", 1), ("step", 1)]
        assert len(journal) == 0 and journal.written == 3
        assert direct.get("tandem:s:key") == b"good"
        assert direct.hget("tandem:t:good", "steps") == b"1"
        assert direct.hget("tandem:t:good2", "steps") == b"1"  # once, although its batch was sent twice
    finally:
        direct.close()
        await store.aclose()


async def test_a_steps_stitching_batch_in_an_outage_is_kept_key_by_key_and_written_back(
    own_redis: RedisServer,
) -> None:
    store = ResilientStore(RedisStore(own_redis.url), MemoryStore(), "degrade")
    batch = [("c:h", "t1|a"), ("b:h", "t1 flight"), ("b:h", "t1 delivered")]
    own_redis.stop()
    await store.stitch_remember_many(batch)
    assert store.degraded
    # The step goes on from the mirror, and the journal holds each key, in order.
    assert await store.stitch_find_many(["b:h", "c:h"]) == ["t1 delivered", "t1|a"]
    assert len(store.journal) == 3
    assert await _written_back(store, own_redis, ["b:h", "c:h"]) == ["t1 delivered", "t1|a"]


async def _written_back(store: ResilientStore, own_redis: RedisServer, keys: list[str]) -> list[str | None]:
    """Redis started again and the journal written back: the stitching entries `keys` there."""
    own_redis.start()
    fresh = RedisStore(own_redis.url)
    try:
        await store.journal.write_back(fresh)
        assert len(store.journal) == 0
        return await fresh.stitch_find_many(keys)
    finally:
        await fresh.aclose()
        await store.aclose()


async def test_a_steps_stitching_edits_in_an_outage_are_kept_as_their_results_and_written_back(
    own_redis: RedisServer,
) -> None:
    """Stitching edits (merges.py) while Redis is out: applied to the mirror, whose resulting
    entries the journal keeps key by key (setting a key again is harmless) and writes back."""
    store = ResilientStore(RedisStore(own_redis.url), MemoryStore(), "degrade")
    await store.stitch_merge([Merge("c:h", APPEND, "t0|z", "16")])  # before the outage: in both
    own_redis.stop()
    edits = [
        Merge("c:h", APPEND, "t1|a", "16"),
        Merge("b:h", MARK, "t1", FLIGHT, "8"),
        Merge("b:h", MARK, "t1", "delivered", "8"),
        Merge("r:x", FRONT, "t1", "4"),
        Merge("r:x", FRONT, "t1", "4"),  # there already: nothing to keep
    ]
    await store.stitch_merge(edits)
    assert store.degraded
    assert await store.stitch_find_many(["b:h", "c:h", "r:x"]) == ["t1 delivered", "t0|z t1|a", "t1"]
    assert len(store.journal) == 4
    assert await _written_back(store, own_redis, ["b:h", "c:h", "r:x"]) == ["t1 delivered", "t0|z t1|a", "t1"]

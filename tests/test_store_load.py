"""The shared store under load and when full: a busy pool is not an outage, a full Redis loses
no step, and stitching one tenant's requests never waits behind another's round trips.
Real redis-server throughout; the gateways are real servers."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from router.ledger import StepRecord
from router.metrics.core import Metrics
from router.metrics.route_series import SeriesScope
from router.trajectory.history import HistoryKeys
from router.trajectory.journal import CountedStep, Journal, Note, Records, Write
from router.trajectory.journal_codec import StoreCall
from router.trajectory.redis_store import RedisStore
from router.trajectory.resilient import ResilientStore
from router.trajectory.state import StepStart
from router.trajectory.stitch import Stitcher
from router.trajectory.store import MemoryStore
from tests.gateway_server import GatewayServer, wait_until
from tests.ledger_audit import audit
from tests.redis_server import RedisServer

MakeGateway = Callable[..., GatewayServer]


@pytest.fixture()
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path / "redis").start()
    yield server
    server.stop()


def metric(text: str, name: str) -> float:
    """The sum of a metric's samples (every label set) in a /metrics page."""
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith((name + "{", name + " ")))


def record_of(trajectory_id: str, step: int) -> StepRecord:
    return StepRecord(trajectory_id, step, "tandem", "edge", "edge", None, "edge-model")


# -- a busy pool waits; it is not an outage -------------------------------------------------------


async def test_more_concurrent_calls_than_pooled_connections_wait_and_declare_no_outage(redis_url: str) -> None:
    """300 steps at once on one process: more than the pool holds (128 by default; redis-py's own
    default pool raised "Too many connections" past 100, which read as an outage)."""
    metrics = Metrics()
    metrics.describe(SeriesScope(store=True))
    store = ResilientStore(RedisStore(redis_url), MemoryStore(keep_records=False), "refuse", metrics)
    try:
        starts = [StepStart(f"t{index}", "b", False, "task", "tandem", "", time.time()) for index in range(300)]
        slots = await asyncio.gather(*(store.begin_step(start) for start in starts))
        await asyncio.gather(*(store.record_many([record_of(f"t{index}", 1)]) for index in range(300)))
        assert [slot.step for slot in slots] == [1] * 300
        assert not store.degraded
        assert metrics.registry.get_sample_value("tandem_store_outages_total", {"cause": "unreachable"}) == 0
        found = audit(redis_url)
        assert (found.counted, found.recorded, found.missing) == (300, 300, 0)
    finally:
        await store.aclose()


def test_a_gateway_serves_more_concurrent_steps_than_its_pool_holds(make_gateway: MakeGateway, redis_url: str) -> None:
    server = make_gateway(redis_url=redis_url, routes={"tandem": {"strategy": "edge"}}, redis_pool_size=2)

    async def step(http: httpx.AsyncClient, index: int) -> int:
        response = await http.post(
            f"{server.url}/v1/chat/completions",
            json={"model": "tandem", "messages": [{"role": "user", "content": f"task {index}"}]},
            headers={"X-Session-ID": f"s{index}"},
        )
        return response.status_code

    async def load() -> list[int]:
        limits = httpx.Limits(max_connections=100)
        async with httpx.AsyncClient(timeout=30, limits=limits) as http:
            return await asyncio.gather(*(step(http, index) for index in range(60)))

    assert asyncio.run(load()) == [200] * 60
    server.run(server.gateway.tracker.recorder.flush())
    page = httpx.get(f"{server.url}/metrics").text
    assert metric(page, "tandem_store_errors_total") == 0
    assert metric(page, "tandem_store_outages_total") == 0
    found = audit(redis_url)
    assert (found.counted, found.recorded, found.missing) == (60, 60, 0)


# -- Redis at maxmemory ---------------------------------------------------------------------------


def ask(http: httpx.Client, server: GatewayServer, session: str, turn: int) -> httpx.Response:
    messages: list[dict[str, Any]] = [{"role": "user", "content": f"task of {session}"}]
    messages += [{"role": "assistant", "content": f"ok {i}"} for i in range(turn)]
    return http.post(
        f"{server.url}/v1/chat/completions",
        json={"model": "tandem", "messages": messages},
        headers={"X-Session-ID": session},
    )


def test_a_full_redis_loses_no_step_and_still_serves_existing_trajectories(
    make_gateway: MakeGateway, client: httpx.Client, own_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    server = make_gateway(redis_url=own_redis.url, routes={"tandem": {"strategy": "edge"}})
    direct = redis.Redis.from_url(own_redis.url)
    try:
        assert [ask(client, server, "existing", turn).status_code for turn in range(2)] == [200, 200]
        server.run(server.gateway.tracker.recorder.flush())
        # Full: every write is refused (OOM), reads still answer.
        direct.config_set("maxmemory-policy", "noeviction")
        direct.config_set("maxmemory", "1")
        with pytest.raises(redis.exceptions.OutOfMemoryError):
            direct.set("probe", "x")
        with caplog.at_level(logging.ERROR, logger="tandem.store"):
            during = [ask(client, server, "existing", turn) for turn in range(2, 12)]
            during += [ask(client, server, "new", turn) for turn in range(10)]
            server.run(server.gateway.tracker.recorder.flush())
        assert [r.status_code for r in during] == [200] * 20, during[0].text
        assert [r.headers["x-tandem-step"] for r in during[:10]] == [str(step) for step in range(3, 13)]
        page = client.get(f"{server.url}/metrics").text
        assert 'tandem_store_outages_total{cause="full"} 1.0' in page
        assert 'tandem_store_outages_total{cause="unreachable"} 0.0' in page
        assert metric(page, "tandem_store_outage_pending") >= 20  # kept, not lost
        assert metric(page, "tandem_store_outage_dropped_total") == 0
        assert any("refuses writes" in r.getMessage() and "maxmemory" in r.getMessage() for r in caplog.records)
        assert direct.hget("tandem:t:existing", "steps") == b"2"  # nothing reached Redis meanwhile
        # Memory freed: the kept writes go in, once each.
        direct.config_set("maxmemory", "0")
        store = server.gateway.tracker.store
        assert isinstance(store, ResilientStore)
        assert wait_until(lambda: not store.degraded and len(store.journal) == 0, timeout=10)
        found = audit(own_redis.url)
        assert found.per_trajectory == {"existing": 12, "new": 10}
        assert (found.counted, found.recorded, found.duplicates, found.missing) == (22, 22, 0, 0)
    finally:
        direct.close()


# -- the outage journal's bound counts steps ------------------------------------------------------


def test_the_outage_journal_keeps_as_many_steps_as_its_bound_says(
    make_gateway: MakeGateway, client: httpx.Client, tmp_path: Path
) -> None:
    """`outage_journal_max: 5` keeps 5 steps with their records and notes (each step is ~4 writes:
    the bound counted writes, so it kept one or two); the 6th is dropped whole, and counted."""
    own = RedisServer(tmp_path / "redis", persistent=True).start()
    try:
        server = make_gateway(
            redis_url=own.url, routes={"tandem": {"strategy": "edge"}}, trajectories={"outage_journal_max": 5}
        )
        assert ask(client, server, "bounded", 0).status_code == 200
        server.run(server.gateway.tracker.recorder.flush())
        own.stop()
        answered = [ask(client, server, "bounded", turn) for turn in range(1, 7)]
        assert [r.status_code for r in answered] == [200] * 6
        server.run(server.gateway.tracker.recorder.flush())
        page = client.get(f"{server.url}/metrics").text
        assert 'tandem_store_outage_dropped_total{kind="step"} 1.0' in page
        assert 'tandem_store_outage_dropped_total{kind="record"} 1.0' in page
        own.start()
        store = server.gateway.tracker.store
        assert isinstance(store, ResilientStore)
        assert wait_until(lambda: not store.degraded and len(store.journal) == 0, timeout=10)
        found = audit(own.url)
        # The first step and the 5 kept; the dropped one is neither counted nor half-recorded.
        assert found.per_trajectory == {"bounded": 6}
        assert (found.recorded, found.duplicates, found.missing) == (6, 0, 0)
    finally:
        own.stop()


# -- write-back under load -------------------------------------------------------------------------


def keep_step(journal: Journal, index: int) -> None:
    """What one session-less step of an outage leaves in the journal (as a gateway keeps it)."""
    trajectory_id = f"traj-{index}"
    journal.add(CountedStep(StepStart(trajectory_id, f"b{index}", False, "t", "tandem", "", time.time()), 1))
    journal.add(Records([record_of(trajectory_id, 1)], [f"token-{index}"]))
    journal.add(Note(trajectory_id, "ledger:cache_prefix", "[400, 1.0]", False))
    for key, value in ((f"b:key-{index}", f"{trajectory_id} flight"), (f"b:key-{index}", f"{trajectory_id} delivered")):
        journal.add(Write("stitch", StoreCall("stitch_remember", (key, value))))
    journal.add(Write("stitch", StoreCall("stitch_remember", (f"c:key-{index}", f"{trajectory_id}|answer"))))


async def test_write_back_drains_faster_than_steps_arrive_when_every_round_trip_waits(redis_url: str) -> None:
    """Under load every round trip waits behind the requests on the event loop (here: 5 ms a
    turn). 1,000 session-less steps kept, ~100 more arriving each second: written back until a
    batch writes as much as is left (then ResilientStore hands over) within seconds. One round
    trip a stitching key (two or three a step) took ~2 minutes for the 1,000 alone."""
    store = RedisStore(redis_url)
    journal = Journal(100_000)
    for index in range(1000):
        keep_step(journal, index)
    stop = asyncio.Event()

    async def requests_on_the_loop() -> None:
        while not stop.is_set():
            busy_until = time.perf_counter() + 0.005
            while time.perf_counter() < busy_until:
                pass  # a request's CPU work holds the loop
            await asyncio.sleep(0)

    async def arriving() -> None:
        index = 1000
        while not stop.is_set():
            keep_step(journal, index)
            index += 1
            await asyncio.sleep(0.01)

    load = [asyncio.create_task(requests_on_the_loop()), asyncio.create_task(arriving())]
    try:
        started = time.monotonic()
        await asyncio.wait_for(journal.write_back(store, catch_up=True), timeout=30)
        took = time.monotonic() - started
        stop.set()
        await asyncio.gather(*load)
        await journal.write_back(store)
        assert took < 10, took
        assert len(journal) == 0
        found = audit(redis_url)
        assert found.counted == found.recorded > 1000
        assert (found.missing, found.duplicates) == (0, 0)
        direct = redis.Redis.from_url(redis_url, decode_responses=True)
        assert direct.get("tandem:s:b:key-999") == "traj-999 delivered"  # the last value wins
        direct.close()
    finally:
        stop.set()
        await store.aclose()


# -- stitching: one slow tenant does not hold up another ------------------------------------------


class SlowTenantStore(RedisStore):
    """A real Redis store whose round trips for one tenant's stitching keys wait for a gate:
    that tenant's Redis replies are slow (a hot shard, a long queue), the others' are not."""

    def __init__(self, url: str, slow_namespace_keys: set[str]) -> None:
        super().__init__(url)
        self.slow_keys = slow_namespace_keys
        self.gate = asyncio.Event()
        self.entered = asyncio.Event()  # the slow tenant's round trip is in flight

    async def stitch_find_many(self, keys: list[str]) -> list[str | None]:
        if any(key.split(":", 1)[1] in self.slow_keys for key in keys):
            self.entered.set()
            await self.gate.wait()
        return await super().stitch_find_many(keys)


async def test_stitching_one_tenant_does_not_wait_behind_another_tenants_round_trips(redis_url: str) -> None:
    slow_messages = [{"role": "user", "content": "tenant a's task"}]
    fast_messages = [{"role": "user", "content": "tenant b's task"}]
    slow_key = HistoryKeys().keys("a", slow_messages)[1]
    store = SlowTenantStore(redis_url, {slow_key})
    stitcher = Stitcher(store)
    try:
        slow = asyncio.create_task(stitcher.find("a", slow_messages, False))
        await asyncio.wait_for(store.entered.wait(), timeout=5)
        # Tenant b's request is stitched while tenant a's reply is pending.
        fast_id, _ = await asyncio.wait_for(stitcher.find("b", fast_messages, False), timeout=5)
        assert not slow.done()
        store.gate.set()
        slow_id, _ = await asyncio.wait_for(slow, timeout=5)
        assert slow_id != fast_id
        # Both stitched as they would be alone: the next step of each continues its own run.
        assert await store.stitch_find("b:" + slow_key) == f"{slow_id} flight"
    finally:
        await store.aclose()

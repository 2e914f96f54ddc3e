"""Two replicas on one real redis-server: a step counted during an outage is renumbered once.

A replica that counted steps in memory while Redis was out learns their shared indexes when it
writes its journal back; a record of such a step that lands while that write-back is still
under way (the replica still degraded) joins the journal, and must take the shared index once,
not be renumbered again by the write-back.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
import redis

from router.ledger import StepRecord
from router.trajectory.journal import CountedStep, Journal, Records
from router.trajectory.journal_codec import decode, encode
from router.trajectory.redis_store import RedisStore
from router.trajectory.resilient import ResilientStore
from router.trajectory.state import StepStart
from router.trajectory.store import MemoryStore
from tests.fake_clock import FakeClock
from tests.redis_server import RedisServer

RUN = "t:shared"


@pytest.fixture()
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path / "redis", persistent=True).start()
    yield server
    server.stop()


def start_of(replica: str, index: int) -> StepStart:
    return StepStart(RUN, f"{replica}{index}", False, "task", "tandem", "", time.time(), token=f"{replica}{index:031x}")


def record_of(step: int, *, counted_apart: bool) -> StepRecord:
    record = StepRecord(RUN, step, "tandem", "edge", "fixed", None, "e", at=time.time())
    record.counted_apart = counted_apart
    return record


def shared_records(url: str) -> tuple[Counter[int], int]:
    """How many records each step index has in Redis, and the trajectory's step count."""
    with redis.Redis.from_url(url, decode_responses=True) as direct:
        records = [orjson.loads(line) for line in direct.lrange(f"tandem:t:{RUN}:r", 0, -1)]
        steps = int(direct.hget(f"tandem:t:{RUN}", "steps") or 0)
    return Counter(int(r["step"]) for r in records), steps


async def test_a_record_kept_during_the_write_back_is_renumbered_once(own_redis: RedisServer) -> None:
    clock = FakeClock()
    first = ResilientStore(RedisStore(own_redis.url), MemoryStore(), "degrade", breaker_s=1.0, clock=clock)
    second = ResilientStore(RedisStore(own_redis.url), MemoryStore(), "degrade")
    try:
        own_redis.stop()
        # The first replica counts steps 1-4 of a trajectory in memory.
        slots = [await first.begin_step(start_of("a", index)) for index in range(4)]
        assert [(slot.step, slot.counted_apart) for slot in slots] == [(1, True), (2, True), (3, True), (4, True)]
        assert first.degraded
        own_redis.start()
        # The second replica counts (and records) steps 1 and 2 of it in Redis first.
        for index in range(2):
            slot = await second.begin_step(start_of("b", index))
            await second.record_many([record_of(slot.step, counted_apart=False)])
        # The first writes back: its steps become 3-6 (1 -> 3, 2 -> 4, 3 -> 5, 4 -> 6). The record
        # of its first step lands after the steps are counted again, before the handover: the
        # replica is still degraded, so the record joins the journal.
        journal = first.journal
        write_back = journal.write_back
        landed: list[bool] = []

        async def write_back_then_record(primary: RedisStore, catch_up: bool = False) -> None:
            await write_back(primary, catch_up)
            if catch_up and not landed:
                assert first.degraded and len(journal) == 0
                landed.append(True)
                await first.record_many([record_of(1, counted_apart=True)])
                assert len(journal) == 1

        journal.write_back = write_back_then_record  # type: ignore[method-assign]
        clock.advance(1.0)
        for _ in range(200):
            if not first.degraded:
                break
            await asyncio.sleep(0.01)
        assert landed and not first.degraded and len(journal) == 0
        # The other records of its steps come once the store is back: written live.
        await first.record_many([record_of(step, counted_apart=True) for step in (2, 3, 4)])
        by_index, steps = shared_records(own_redis.url)
        assert steps == 6
        assert by_index == Counter(dict.fromkeys(range(1, 7), 1))
    finally:
        await first.aclose()
        await second.aclose()


async def test_a_kept_record_of_a_step_the_store_counted_keeps_its_index(own_redis: RedisServer) -> None:
    """Redis came back empty: an outage's step 4 was counted again as step 1. A later step the
    store counted as 4 has its record kept in the journal by a second outage: written back, it
    stays step 4 (only steps counted apart are renumbered), also when read back from a file."""
    primary = RedisStore(own_redis.url)
    journal = Journal(100)
    try:
        own_redis.flush()
        journal.add(CountedStep(start_of("a", 0), 4))
        await journal.write_back(primary)  # local step 4 is the shared store's step 1
        for index in range(1, 4):
            await primary.begin_step(start_of("a", index))  # steps 2, 3, 4 counted by the store
        apart, counted = record_of(4, counted_apart=True), record_of(4, counted_apart=False)
        kept = decode(encode(Records([apart, counted], ["tok-apart", "tok-counted"])))
        assert isinstance(kept, Records)
        assert [record.counted_apart for record in kept.records] == [True, False]
        journal.add(kept)
        await journal.write_back(primary)
        by_index, steps = shared_records(own_redis.url)
        assert steps == 4
        assert by_index == Counter({1: 1, 4: 1})
    finally:
        await primary.aclose()


async def test_a_retry_the_store_counted_late_keeps_its_attempt_apart_from_the_first(own_redis: RedisServer) -> None:
    """Step 2's first attempt was cancelled; Redis froze; its client's retry reached another
    replica, which counted it apart (as a first attempt: it did not know the run) while the
    frozen Redis executed the retry's start late, as step 2's attempt 2. Written back, the record
    is attempt 2 of step 2 (not a second record of attempt 1), and its answer counts."""
    primary = RedisStore(own_redis.url)
    journal = Journal(100)
    try:
        own_redis.flush()
        first = StepStart(RUN, "history-1", False, "task", "tandem", "", time.time(), token="a" * 32)
        second = StepStart(RUN, "history-2", False, "task", "tandem", "", time.time(), token="b" * 32)
        assert (await primary.begin_step(first)).step == 1
        await primary.record_many([record_of(1, counted_apart=False)])
        assert (await primary.begin_step(second)).step == 2
        cancelled = record_of(2, counted_apart=False)
        cancelled.status = "cancelled"
        await primary.record_many([cancelled])
        # The retry's start, executed late by the frozen store: the same history, its own token.
        retry = StepStart(RUN, "history-2", False, "task", "tandem", "", time.time(), token="c" * 32)
        late = await primary.begin_step(retry)
        assert (late.step, late.attempt) == (2, 2)
        # What the other replica kept: the step counted apart as its step 1, and its answer.
        journal.add(CountedStep(retry, 1))
        journal.add(Records([record_of(1, counted_apart=True)], ["tok-retry"]))
        await journal.write_back(primary)
        with redis.Redis.from_url(own_redis.url, decode_responses=True) as direct:
            records = [orjson.loads(line) for line in direct.lrange(f"tandem:t:{RUN}:r", 0, -1)]
            edge_steps = int(direct.hget(f"tandem:t:{RUN}", "edge_steps") or 0)
            steps = int(direct.hget(f"tandem:t:{RUN}", "steps") or 0)
        assert [(r["step"], r["attempt"], r["status"]) for r in records] == [
            (1, 1, "ok"),
            (2, 1, "cancelled"),
            (2, 2, "ok"),
        ]
        assert (steps, edge_steps) == (2, 2)
    finally:
        await primary.aclose()


async def test_a_record_sent_again_gets_the_word_it_got_the_first_time(own_redis: RedisServer) -> None:
    """A record Redis wrote although its reply was lost (a frozen Redis that resumed) is sent
    again on write-back: written once, and its reply says again whether it counted."""
    primary = RedisStore(own_redis.url)
    try:
        await primary.begin_step(start_of("a", 0))
        answered = record_of(1, counted_apart=False)
        again = dataclasses.replace(answered, attempt=2)
        assert await primary.record_many([answered, again], ["tok-first", "tok-again"]) == [False, True]
        assert await primary.record_many([again, answered], ["tok-again", "tok-first"]) == [True, False]
        by_index, _ = shared_records(own_redis.url)
        assert by_index == Counter({1: 2})
    finally:
        await primary.aclose()

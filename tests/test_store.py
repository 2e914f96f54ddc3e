"""The same contract for both trajectory stores: memory, and Redis (a real redis-server)."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator

import pytest

from router.ledger import StepRecord, Usage
from router.trajectory.redis_store import RedisStore
from router.trajectory.state import ListQuery, Outcome, StepStart, VaultRead
from router.trajectory.store import MemoryStore, TrajectoryStore


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[TrajectoryStore]:
    if request.param == "memory":
        yield MemoryStore()
        return
    redis_store = RedisStore(request.getfixturevalue("redis_url"))
    yield redis_store
    await redis_store.aclose()


def start(
    trajectory_id: str,
    body: str = "b1",
    retry: bool = False,
    at: float | None = None,
    route: str = "tandem",
    namespace: str = "",
) -> StepStart:
    return StepStart(trajectory_id, body, retry, "fix the bug", route, namespace, at or time.time())


def record(
    trajectory_id: str,
    step: int,
    target: str = "edge",
    status: str = "ok",
    cost: float = 0.001,
    cloud_cost: float = 0.01,
) -> StepRecord:
    return StepRecord(
        trajectory_id=trajectory_id,
        step=step,
        route="tandem",
        target=target,
        reason="random_draw",
        score=0.5,
        model="m",
        at=time.time(),
        status=status,
        usage=Usage(100, 20, 10),
        cost_usd=cost,
        counterfactual_usd=cloud_cost,
        tools=["bash"],
        error_signals=["traceback"],
    )


async def test_steps_count_and_records_add_up(store: TrajectoryStore) -> None:
    for expected, body in enumerate(["a", "b", "c"], start=1):
        slot = await store.begin_step(start("t1", body))
        assert (slot.step, slot.attempt) == (expected, 1)
        await store.record_many([record("t1", expected, target="cloud" if expected == 2 else "edge")])
    trajectory = await store.get("t1")
    assert trajectory is not None
    assert trajectory.steps == 3 and trajectory.task == "fix the bug" and trajectory.route == "tandem"
    assert trajectory.counts["cloud_steps"] == 1 and trajectory.counts["edge_steps"] == 2
    assert trajectory.counts["prompt_tokens"] == 300 and trajectory.counts["cached_tokens"] == 60
    assert trajectory.money["cost_usd"] == pytest.approx(0.003)
    assert trajectory.savings_usd == pytest.approx(0.027)
    assert trajectory.cloud_share == pytest.approx(1 / 3)
    records = await store.records("t1")
    assert [r.step for r in records] == [1, 2, 3]
    assert records[0].tools == ["bash"] and records[0].usage == Usage(100, 20, 10)
    assert await store.get("unknown") is None


async def test_retries_are_the_same_step(store: TrajectoryStore) -> None:
    assert (await store.begin_step(start("t2", "a"))).step == 1
    await store.record_many([record("t2", 1, status="error")])
    # The same body after an error: a retry of step 1.
    slot = await store.begin_step(start("t2", "a"))
    assert (slot.step, slot.attempt) == (1, 2)
    await store.record_many([record("t2", 1)])
    # The client says it retries (x-stainless-retry-count > 0): still step 1.
    slot = await store.begin_step(start("t2", "z", retry=True))
    assert (slot.step, slot.attempt) == (1, 3)
    await store.record_many([record("t2", 1)])
    # A new body is a new step; the same body again, whatever came of it, is the same step.
    assert (await store.begin_step(start("t2", "z"))).step == 2
    assert (await store.begin_step(start("t2", "z"))).step == 2


async def test_the_store_names_an_answer_sent_again_a_repeat(store: TrajectoryStore) -> None:
    """`record_many` says which records repeat an answer their step counted already: the metrics
    book those apart, so that their step counts equal the ledger's."""
    await store.begin_step(start("t9", "a"))
    assert await store.record_many([record("t9", 1, status="error")]) == [False]
    await store.begin_step(start("t9", "a"))  # the same body after an error: attempt 2
    retry = record("t9", 1)
    retry.attempt = 2
    again = record("t9", 1, target="cloud")  # the same body after that answer: attempt 3
    again.attempt = 3
    assert await store.record_many([retry, again]) == [False, True]
    trajectory = await store.get("t9")
    assert trajectory is not None
    assert (trajectory.counts["edge_steps"], trajectory.counts["cloud_steps"]) == (1, 0)


async def test_outcome_is_set_once_and_close_happens_once(store: TrajectoryStore) -> None:
    await store.begin_step(start("t3"))
    assert await store.set_outcome("t3", Outcome(True, 0.9, {"suite": "x"}, time.time()))
    assert not await store.set_outcome("t3", Outcome(False, None, {}, time.time()))
    assert not await store.set_outcome("nope", Outcome(True, None, {}, time.time()))
    closed = await store.close("t3", "outcome", time.time())
    assert closed is not None and closed.close_reason == "outcome"
    assert closed.outcome is not None and closed.outcome.success is True and closed.outcome.labels == {"suite": "x"}
    assert await store.close("t3", "idle", time.time()) is None
    assert await store.close("nope", "idle", time.time()) is None


async def test_idle_lists_open_trajectories_not_updated_recently(store: TrajectoryStore) -> None:
    now = time.time()
    await store.begin_step(start("old", at=now - 100))
    await store.begin_step(start("new", at=now))
    assert await store.idle(now - 50, 10) == ["old"]
    await store.close("old", "idle", now)
    assert await store.idle(now - 50, 10) == []


async def test_list_filters_and_pages(store: TrajectoryStore) -> None:
    now = time.time()
    for index in range(6):
        route = "tandem" if index % 2 else "tandem/cloud"
        await store.begin_step(
            start(f"l{index}", at=now - 60 + index, route=route, namespace="ns" if index < 3 else "")
        )
    newest = await store.recent(ListQuery(limit=2))
    assert [t.id for t in newest] == ["l5", "l4"]
    older = await store.recent(ListQuery(limit=2, before=newest[-1].updated_at))
    assert [t.id for t in older] == ["l3", "l2"]
    assert [t.id for t in await store.recent(ListQuery(route="tandem/cloud"))] == ["l4", "l2", "l0"]
    assert [t.id for t in await store.recent(ListQuery(namespace="ns"))] == ["l2", "l1", "l0"]
    assert [t.id for t in await store.recent(ListQuery(since=now - 56.5, until=now - 55.5))] == ["l4"]


async def test_stitch_keys(store: TrajectoryStore) -> None:
    assert await store.stitch_find("k") is None
    await store.stitch_remember("k", "t-stitched")
    assert await store.stitch_find("k") == "t-stitched"
    # A step's batch: in order (a key set twice keeps the later value), read back in one call.
    await store.stitch_remember_many([("c:h", "t1|a"), ("b:h", "t1 flight"), ("b:h", "t1 delivered")])
    assert await store.stitch_find_many(["b:h", "missing", "c:h", "k"]) == ["t1 delivered", None, "t1|a", "t-stitched"]


async def test_concurrent_writers_lose_no_step(redis_url: str) -> None:
    """Two replicas (two clients) counting steps and recording at once: nothing is lost."""
    stores = [RedisStore(redis_url), RedisStore(redis_url)]

    async def worker(store: RedisStore, offset: int) -> list[int]:
        steps = []
        for index in range(50):
            slot = await store.begin_step(start("shared", f"{offset}-{index}"))
            steps.append(slot.step)
            await store.record_many([record("shared", slot.step)])
        return steps

    results = await asyncio.gather(worker(stores[0], 0), worker(stores[1], 1))
    assert sorted(results[0] + results[1]) == list(range(1, 101))
    trajectory = await stores[0].get("shared")
    assert trajectory is not None and trajectory.steps == 100
    assert trajectory.counts["edge_steps"] == 100
    assert trajectory.money["cost_usd"] == pytest.approx(0.1)
    assert len(await stores[1].records("shared")) == 100
    for store in stores:
        await store.aclose()


async def test_state_per_step_in_redis_is_small(redis_url: str) -> None:
    import redis.asyncio as redis

    store = RedisStore(redis_url)
    for index in range(20):
        await store.begin_step(start("size", f"b{index}"))
        await store.record_many([record("size", index + 1)])
    client = redis.Redis.from_url(redis_url)
    used = sum([await client.memory_usage(key) or 0 for key in await client.keys("tandem:t:size*")])
    await client.aclose()
    await store.aclose()
    assert used / 20 <= 2048, f"{used / 20:.0f} bytes a step"


async def test_begin_step_returns_the_trajectory_and_notes_keep_first(store: TrajectoryStore) -> None:
    first = await store.begin_step(start("n1", "a"))
    assert first.trajectory is not None and first.trajectory.steps == 1 and first.trajectory.notes == {}
    assert await store.note("n1", "strategy:task:target", "cloud", keep_first=True) == "cloud"
    assert await store.note("n1", "strategy:task:target", "edge", keep_first=True) == "cloud"
    assert await store.note("n1", "strategy:sketch:plan", "1. read 2. fix") == "1. read 2. fix"
    await store.record_many([record("n1", 1, target="cloud", cost=0.02)])
    second = await store.begin_step(start("n1", "b"))
    assert second.trajectory is not None
    assert second.trajectory.notes == {"strategy:task:target": "cloud", "strategy:sketch:plan": "1. read 2. fix"}
    assert second.trajectory.counts["cloud_calls"] == 1 and second.trajectory.counts["last_cloud_step"] == 1
    assert second.trajectory.money["cloud_spend_usd"] == pytest.approx(0.02)


async def test_same_body_before_its_record_arrives_is_a_retry(store: TrajectoryStore) -> None:
    """Records are written off the request path: a quick retry can come before the failure is
    recorded, and must still count as the same step."""
    assert (await store.begin_step(start("q", "body"))).step == 1
    slot = await store.begin_step(start("q", "body"))
    assert (slot.step, slot.attempt) == (1, 2)
    await store.record_many([record("q", 1)])
    assert (await store.begin_step(start("q", "next body"))).step == 2


async def test_the_vault_is_kept_apart_and_read_by_position(store: TrajectoryStore) -> None:
    """The privacy vault: not in a step's trajectory (its notes), counted by its log's length,
    read from a position, first-writer-wins for a value's id, a rewrite of the same value not
    logged again."""
    assert (await store.begin_step(start("v", "a"))).trajectory.vault_size == 0  # type: ignore[union-attr]
    assert await store.vault_note("v", "vault:id:ab", "[EMAIL_1]", keep_first=True) == "[EMAIL_1]"
    assert await store.vault_note("v", "vault:id:ab", "[EMAIL_2]", keep_first=True) == "[EMAIL_1]"
    await store.vault_note("v", "vault:value:[EMAIL_1]", "sealed-1")
    await store.vault_note("v", "vault:value:[EMAIL_1]", "sealed-1")  # unchanged: not logged
    await store.note("v", "strategy:task:target", "cloud")
    slot = await store.begin_step(start("v", "b"))
    assert slot.trajectory is not None and slot.trajectory.vault_size == 2
    assert slot.trajectory.notes == {"strategy:task:target": "cloud"}  # no vault note in a step's start
    first = await store.vault_since("v", 0)
    assert first.entries == [("vault:id:ab", "[EMAIL_1]"), ("vault:value:[EMAIL_1]", "sealed-1")]
    assert first.next == 2
    assert await store.vault_since("v", first.next) == VaultRead([], 2)  # nothing new
    await store.vault_note("v", "vault:out:[EMAIL_1]", "1")
    later = await store.vault_since("v", first.next)
    assert later == VaultRead([("vault:out:[EMAIL_1]", "1")], 3)
    assert (await store.begin_step(start("v", "c"))).trajectory.vault_size == 3  # type: ignore[union-attr]
    assert await store.vault("v") == {
        "vault:id:ab": "[EMAIL_1]",
        "vault:value:[EMAIL_1]": "sealed-1",
        "vault:out:[EMAIL_1]": "1",
    }
    got = await store.get("v")
    assert got is not None and not any(key.startswith("vault:") for key in got.notes)
    assert await store.vault("other") == {} and (await store.vault_since("other", 0)).entries == []


async def test_many_vault_notes_at_once_follow_the_rules_of_one(store: TrajectoryStore) -> None:
    """`vault_notes`: each entry as `vault_note` would write it, in order, the values kept
    returned in order (first-writer-wins per key with keep_first, a rewrite not logged)."""
    await store.begin_step(start("m", "a"))
    await store.vault_note("m", "vault:id:b", "[EMAIL_9]", keep_first=True)  # another replica's
    entries = [("vault:id:a", "[EMAIL_1]"), ("vault:id:b", "[EMAIL_2]"), ("vault:id:c", "[EMAIL_3]")]
    assert await store.vault_notes("m", entries, keep_first=True) == ["[EMAIL_1]", "[EMAIL_9]", "[EMAIL_3]"]
    assert await store.vault_notes("m", [("vault:id:a", "[EMAIL_5]")]) == ["[EMAIL_5]"]  # without: rewritten
    assert await store.vault_notes("m", []) == []
    read = await store.vault_since("m", 0)
    # The log in write order, each read with its value now (a key rewritten appears again).
    assert read.entries == [
        ("vault:id:b", "[EMAIL_9]"),
        ("vault:id:a", "[EMAIL_5]"),
        ("vault:id:c", "[EMAIL_3]"),
        ("vault:id:a", "[EMAIL_5]"),
    ]
    assert (await store.vault("m"))["vault:id:a"] == "[EMAIL_5]" and (await store.vault("m"))[
        "vault:id:b"
    ] == "[EMAIL_9]"


async def test_the_vault_goes_with_its_trajectory(store: TrajectoryStore) -> None:
    """A trajectory evicted (memory) or gone (Redis) takes its vault with it: one begun anew
    under the same id starts with an empty vault."""
    await store.begin_step(start("gone", "a"))
    await store.vault_note("gone", "vault:value:[EMAIL_1]", "sealed")
    if isinstance(store, MemoryStore):
        store.max_trajectories = 1
        await store.begin_step(start("newer", "a"))  # evicts "gone"
        assert await store.get("gone") is None and await store.vault("gone") == {}
    else:
        assert isinstance(store, RedisStore)
        await store.client.delete("tandem:t:gone")  # its hash gone (expired first, say); its vault not yet
        assert await store.vault("gone") != {}
    slot = await store.begin_step(start("gone", "b"))
    assert slot.step == 1 and slot.trajectory is not None and slot.trajectory.vault_size == 0
    assert await store.vault("gone") == {} and (await store.vault_since("gone", 0)).entries == []


async def test_the_vault_expires_with_its_trajectory_in_redis(redis_url: str) -> None:
    store = RedisStore(redis_url, ttl_s=1)
    await store.begin_step(start("brief", "a"))
    await store.vault_note("brief", "vault:value:[EMAIL_1]", "sealed")
    await store.record_many([record("brief", 1)])
    keys = ["tandem:t:brief", "tandem:t:brief:v", "tandem:t:brief:vl", "tandem:t:brief:a", "tandem:t:brief:d"]
    assert [0 < await store.client.pttl(key) <= 1000 for key in keys] == [True] * 5
    for _ in range(50):  # expired after 1 s; Redis drops expired keys within moments
        if not await store.client.exists(*keys):
            break
        await asyncio.sleep(0.1)
    assert await store.client.exists(*keys) == 0 and await store.vault("brief") == {}
    await store.aclose()


async def test_a_step_counts_once_under_the_target_that_answered_it(store: TrajectoryStore) -> None:
    """`counts_answer`'s rule, in both stores (Redis applies it in its RECORD script)."""

    def attempt(step: int, number: int, target: str, status: str = "ok", **extra: object) -> StepRecord:
        return dataclasses.replace(record("t9", step, target=target, status=status), attempt=number, **extra)

    await store.begin_step(start("t9", "a"))
    # Step 1: refused on the cloud, then the retry failed over from the cloud to the edge, then
    # the same body once more after that answer: one edge step.
    await store.record_many([attempt(1, 1, "cloud", "error")])
    await store.record_many([attempt(1, 2, "edge", failures=[("cloud", "timeout", None)], fallback=True)])
    await store.record_many([attempt(1, 3, "cloud")])
    # Steps 3 and 2 of a run whose steps overlap, recorded in the order they ended: both count.
    await store.record_many([attempt(3, 1, "cloud"), attempt(2, 1, "edge")])
    # Step 4 cancelled on the cloud: neither.
    await store.record_many([attempt(4, 1, "cloud", "cancelled")])
    # Step 5's first attempt cancelled; its retry answered after step 6 was: both count.
    await store.record_many([attempt(5, 1, "edge", "cancelled")])
    await store.record_many([attempt(6, 1, "cloud")])
    repeats = await store.record_many([attempt(5, 2, "edge")])
    assert repeats == [False]
    # The same body of step 5 once more after its answer: a repeat, not a step.
    assert await store.record_many([attempt(5, 3, "edge")]) == [True]
    trajectory = await store.get("t9")
    assert trajectory is not None
    assert (trajectory.counts["edge_steps"], trajectory.counts["cloud_steps"]) == (3, 2)
    assert trajectory.counts["last_cloud_step"] == 6 and trajectory.cloud_share == pytest.approx(2 / 5)
    records = await store.records("t9")
    assert [r.answered_by for r in records][:6] == ["none", "edge", "cloud", "cloud", "edge", "none"]
    assert records[1].failures == [("cloud", "timeout", None)] and records[1].decided == "cloud"


async def test_the_runs_own_record_is_kept_by_action_type_and_counted_once(store: TrajectoryStore) -> None:
    from judge.actions import ActionType
    from judge.record import RunRecord

    # Step k's record carries the label of step k-1's action (read from step k's tool results).
    labels = [(None, None), ("edit", 1), ("test", 1), ("edit", 0)]
    for step, (action, failed) in enumerate(labels, start=1):
        await store.begin_step(start("rec", f"b{step}"))
        written = dataclasses.replace(record("rec", step), failed_before=failed, failed_before_action=action)
        await store.record_many([written])
    # A retry of step 4 is given the same results: its label is not counted again.
    slot = await store.begin_step(start("rec", "b4", retry=True))
    assert (slot.step, slot.attempt) == (4, 2)
    retried = dataclasses.replace(record("rec", 4), attempt=2, failed_before=0, failed_before_action="edit")
    await store.record_many([retried])
    trajectory = await store.get("rec")
    assert trajectory is not None
    kept = RunRecord.from_counts(trajectory.counts)
    expected = RunRecord().add(ActionType.EDIT, True).add(ActionType.TEST, True).add(ActionType.EDIT, False)
    assert kept == expected
    assert kept.type_values(ActionType.EDIT)[1] == 0.5 and kept.state_values()[1] == pytest.approx(2 / 3)
    # The next step begins with the record as it stood: what the judge reads.
    slot = await store.begin_step(start("rec", "b5"))
    assert slot.trajectory is not None and RunRecord.from_counts(slot.trajectory.counts) == expected

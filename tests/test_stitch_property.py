"""Stitching property test (issue 30): N runs of random tool loops (random tool-call ids,
arguments and answers, some histories rewritten), interleaved in random orders with client
retries, map to exactly N trajectories with the right steps: 0 false joins, 0 false splits, on
both stores (in memory and a real redis-server). The bulk drives the stitcher directly; a
smaller number of schedules goes through a real gateway (tests/test_stitch_gateway.py)."""

from __future__ import annotations

import asyncio
import copy
import json
import random
from typing import Any

import orjson

from router.trajectory import identify
from router.trajectory.eager import Background
from router.trajectory.redis_store import RedisStore
from router.trajectory.stitch import Stitch, Stitcher
from router.trajectory.store import MemoryStore, TrajectoryStore
from tests.stitch_runs import Messages, Tally, make_runs, play, schedule

MEMORY_SCHEDULES = 900
REDIS_SCHEDULES = 150


def _as_resent(rng: random.Random, messages: Messages) -> Messages:
    """The history as a client resends it: a fresh parse, tool-call arguments sometimes
    re-serialised with other spacing (the answer's identity compares them as JSON)."""
    out: Messages = orjson.loads(orjson.dumps(messages))
    for message in out:
        for call in message.get("tool_calls") or ():
            if rng.random() < 0.3:
                call["function"]["arguments"] = orjson.dumps(json.loads(call["function"]["arguments"])).decode()
    return out


class _Direct:
    """The client side of a schedule, played straight against a stitcher."""

    def __init__(self, stitcher: Stitcher, namespace: str, rng: random.Random) -> None:
        self.stitcher, self.namespace, self.rng = stitcher, namespace, rng

    async def find(self, messages: Messages, retry: bool, user: str | None) -> tuple[str, str, Any]:
        scope = identify.client_scope({"user": user} if user else {})
        stitched = await self.stitcher.place(self.namespace, _as_resent(self.rng, messages), retry, scope)
        return stitched.trajectory_id, stitched.decision, stitched

    async def answered(self, stitched: Stitch, status: str, answer: dict[str, Any]) -> None:
        key = identify.message_answer_key(copy.deepcopy(answer))
        amend = stitched.amend if answer.get("tool_calls") else None  # as the tracker passes it
        await self.stitcher.answered(stitched.trajectory_id, stitched.key, status, key, stitched.anchor, amend)


async def _play_schedules(store_for: Any, count: int, seed: int) -> Tally:
    tally = Tally()
    for number in range(count):
        rng = random.Random(seed + number)
        runs = make_runs(rng, count=rng.randint(2, 6), max_steps=rng.randint(1, 8))
        events = schedule(rng, runs)
        store: TrajectoryStore = store_for(number)
        client = _Direct(Stitcher(store), rng.choice(["", "ns"]), rng)
        try:
            await play(runs, events, client.find, client.answered, tally)
        finally:
            await store.aclose()
    return tally


def _assert_exact(tally: Tally) -> None:
    print(tally.line())  # the figures the docs quote (pytest -s)
    assert tally.false_joins == 0, tally.line()
    assert tally.false_splits == 0, tally.line()
    assert tally.wrong_decisions == 0, tally.line()
    assert tally.rewrites > 0 and tally.rewrites_joined == tally.rewrites, tally.line()


async def test_random_interleaved_runs_with_retries_and_rewrites_in_memory() -> None:
    tally = await _play_schedules(lambda _: MemoryStore(100_000, 3600), MEMORY_SCHEDULES, seed=30_000)
    assert tally.schedules == MEMORY_SCHEDULES and tally.attempts > tally.steps  # retries were played
    _assert_exact(tally)


async def test_random_interleaved_runs_with_retries_and_rewrites_on_redis(redis_url: str) -> None:
    tally = await _play_schedules(lambda n: RedisStore(redis_url, f"prop{n}:"), REDIS_SCHEDULES, seed=60_000)
    assert tally.schedules == REDIS_SCHEDULES
    _assert_exact(tally)


async def test_identical_concurrent_runs_are_as_many_trajectories() -> None:
    """Runs whose every request and answer are byte-identical (a deterministic agent on a
    deterministic model, started twice at once) cannot be told apart step by step, but they are
    as many trajectories as runs, each with all its steps."""
    for seed in range(200):
        rng = random.Random(seed)
        template = make_runs(random.Random(seed), count=1, max_steps=6, rewrites=0.0)[0]
        count = rng.randint(2, 4)
        stitcher = Stitcher(MemoryStore(10_000, 3600))
        positions = [0] * count
        in_flight: dict[int, Stitch] = {}
        steps: dict[str, int] = {}
        while any(p < len(template.steps) for p in positions):
            run = rng.choice([r for r in range(count) if positions[r] < len(template.steps)])
            messages = template.steps[positions[run]].messages
            if run not in in_flight:
                stitched = await stitcher.place("", orjson.loads(orjson.dumps(messages)), False)
                in_flight[run] = stitched
                steps[stitched.trajectory_id] = steps.get(stitched.trajectory_id, 0) + 1
            else:
                stitched = in_flight.pop(run)
                key = identify.message_answer_key(template.steps[positions[run]].answer)
                await stitcher.answered(stitched.trajectory_id, stitched.key, "ok", key, stitched.anchor)
                positions[run] += 1
        assert sorted(steps.values()) == [len(template.steps)] * count, (seed, steps)


async def test_a_step_waits_for_the_notes_of_an_answer_already_given() -> None:
    """An answer's notes are written off its request's path: a client that sends the same body
    again at once after a failure must find the failure noted (a retry, not another run)."""
    stitcher = Stitcher(MemoryStore(1_000, 3600))
    messages: Messages = [{"role": "system", "content": "agent"}, {"role": "user", "content": "fix it"}]
    first = await stitcher.place("", messages, False)
    noted = asyncio.create_task(stitcher.note_answer(first.trajectory_id, first.key, "error", "", first.anchor))
    again = await stitcher.place("", messages, False)  # before the note's task has run
    assert (again.trajectory_id, again.decision) == (first.trajectory_id, "retry")
    await noted


class _HeldNotes(RedisStore):
    """A Redis store whose stitching edits wait for `gate` (a slow round trip, as under load)."""

    def __init__(self, url: str, prefix: str) -> None:
        super().__init__(url, prefix)
        self.gate = asyncio.Event()

    async def stitch_merge(self, merges: list[Any]) -> None:
        if any(merge.key.startswith("c:") for merge in merges):  # an answer's notes, not a claim
            await self.gate.wait()
        await super().stitch_merge(merges)


async def _answered_held(
    stitcher: Stitcher, messages: Messages, answer: dict[str, Any]
) -> tuple[Stitch, asyncio.Task[None]]:
    """A run's first step placed and answered with `answer`, its notes' edits held by the store
    (`_HeldNotes.gate`): the step and the task writing its notes."""
    placed = await stitcher.place("", messages, False)
    key = identify.message_answer_key(answer)
    noted = asyncio.create_task(stitcher.note_answer(placed.trajectory_id, placed.key, "ok", key, placed.anchor))
    await asyncio.sleep(0.01)  # the note's edits are waiting on the store
    return placed, noted


async def _placed_once_noted(
    store: _HeldNotes, stitcher: Stitcher, noted: asyncio.Task[None], messages: Messages
) -> Stitch:
    """`messages` placed while the notes are held: the placement waits for them, then, the notes
    written (the gate opened), it is made."""
    placing = asyncio.create_task(stitcher.place("", messages, False))
    await asyncio.sleep(0.05)
    assert not placing.done()  # it waits for the notes being written
    store.gate.set()
    await noted
    return await placing


async def test_a_step_waits_only_for_the_notes_it_may_need(redis_url: str) -> None:
    """Notes still being written of an answer to one run do not hold up another run's first
    step with the same system prompt (on a shared store each note is a round trip: every step
    of an agent's runs waited for all of them), while that run's own next step still waits for
    them and continues it."""
    store = _HeldNotes(redis_url, "noting:")
    stitcher = Stitcher(store, Background(eager=False))
    system = {"role": "system", "content": "agent"}
    first: Messages = [system, {"role": "user", "content": "fix the parser"}]
    other: Messages = [system, {"role": "user", "content": "rename the module"}]
    try:
        answer = {"role": "assistant", "content": "I will read parse.py and find the failing branch first."}
        placed, noted = await _answered_held(stitcher, first, answer)
        began = asyncio.get_running_loop().time()
        another = await stitcher.place("", other, False)
        assert asyncio.get_running_loop().time() - began < 0.25  # not the notes' wait (0.5 s)
        assert another.decision == "new" and another.trajectory_id != placed.trajectory_id
        continued = await _placed_once_noted(
            store, stitcher, noted, [*first, answer, {"role": "user", "content": "go on"}]
        )
        assert (continued.trajectory_id, continued.decision) == (placed.trajectory_id, "extended")
    finally:
        store.gate.set()
        await store.aclose()


async def test_a_rewrite_that_finds_no_run_waits_for_the_notes_of_its_first_message(redis_url: str) -> None:
    """A rewritten history (an earlier message edited, the last answer kept, as Aider's lint
    retries send it) resends an answer whose note is still being written: it finds no run at
    first, waits for the notes of answers under its first message, and then continues the run."""
    store = _HeldNotes(redis_url, "rewrite-noting:")
    stitcher = Stitcher(store, Background(eager=False))
    system = {"role": "system", "content": "agent"}
    first: Messages = [system, {"role": "user", "content": "fix the parser in parse.py please"}]
    try:
        answer = {
            "role": "assistant",
            "content": "The failing branch is the empty-input case; I will change parse.py to return early.",
        }
        placed, noted = await _answered_held(stitcher, first, answer)
        edited = [system, {"role": "user", "content": "fix the parser in parse.py (edited)"}, answer]
        # No run found yet: it waits for the notes under its first message.
        rewritten = await _placed_once_noted(
            store, stitcher, noted, [*edited, {"role": "user", "content": "lint failed"}]
        )
        assert (rewritten.trajectory_id, rewritten.decision) == (placed.trajectory_id, "rewritten")
    finally:
        store.gate.set()
        await store.aclose()


async def test_steps_of_one_history_placed_at_once_on_redis_read_each_others_claims(redis_url: str) -> None:
    """A shared store's claim leaves with the step start (one round trip fewer), but its keys stay
    locked until it is written: four identical bodies placed in one turn of the loop are four
    runs, each reading the marks of those before it, so that a client's retry after them is the
    oldest attempt's (a read before the earlier claims were written would see none of them)."""
    store = RedisStore(redis_url, "at-once:")
    background = Background(eager=False)
    stitcher = Stitcher(store, background)
    messages: Messages = [{"role": "system", "content": "agent"}, {"role": "user", "content": "fix the parser"}]
    try:
        placed = await asyncio.gather(
            *(stitcher.place("", orjson.loads(orjson.dumps(messages)), False) for _ in range(4))
        )
        assert len({stitched.trajectory_id for stitched in placed}) == 4
        assert {stitched.decision for stitched in placed} == {"new"}
        retry = await stitcher.place("", messages, True)
        await background.settled()
        assert (retry.trajectory_id, retry.decision) == (placed[0].trajectory_id, "retry")
    finally:
        await store.aclose()


async def _fleet_continues(stitcher: Stitcher, runs: int) -> list[bool]:
    """`runs` identical first requests, each answered (distinct answers) before any run goes on,
    then each run's next step: whether each continued its own trajectory."""
    task = [{"role": "system", "content": "You are a coding agent."}, {"role": "user", "content": "Fix issue 4411"}]
    firsts = [await stitcher.place("fleet", task, False) for _ in range(runs)]
    for number, first in enumerate(firsts):
        answer = identify.answer_key(f"sample {number}: I will read the failing test first", [])
        await stitcher.answered(first.trajectory_id, first.key, "ok", answer, first.anchor)
    continued = []
    for number, first in enumerate(firsts):
        said = {"role": "assistant", "content": f"sample {number}: I will read the failing test first"}
        second = await stitcher.place("fleet", [*task, said, {"role": "user", "content": "output"}], False)
        continued.append((second.trajectory_id, second.decision) == (first.trajectory_id, "extended"))
    return continued


async def test_a_fleet_of_identical_runs_answered_before_any_goes_on_is_one_trajectory_each(redis_url: str) -> None:
    """pass@k sampling: 100 runs of one task at once, every first answer given before any run's
    next step (a history's waiting runs were bounded at 16: the rest started new trajectories)."""
    assert all(await _fleet_continues(Stitcher(MemoryStore(100_000, 3600)), 100))
    store = RedisStore(redis_url, "fleet:")
    try:
        assert all(await _fleet_continues(Stitcher(store), 100))
    finally:
        await store.aclose()

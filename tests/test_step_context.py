"""A policy's view of a step (router/policies/base.py): the context has every field set (no
optional calls, store or metrics), and a policy that uses a part needs only that part: the
read-only facts, or the facts and a store. In process, no sockets."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import orjson
import pytest

from router.config.strategies import TaskRoute
from router.policies.base import StepContext, StepFacts
from router.policies.judge import counters_of
from router.policies.random import RandomPolicy
from router.policies.task import NOTE, TaskPolicy
from router.protocol.chat import parse_chat_request
from router.trajectory.state import StepStart, Trajectory
from router.trajectory.store import MemoryStore, TrajectoryStore

REQUEST = parse_chat_request(
    orjson.dumps({"model": "tandem", "messages": [{"role": "user", "content": "Refactor the parser"}]})
)


@dataclass(frozen=True, slots=True)
class NotedFacts(StepFacts):
    """The facts and a store: all task routing asks for (`KeepsNotes`), no inner calls."""

    store: TrajectoryStore


def test_the_context_requires_every_field() -> None:
    names = [field.name for field in dataclasses.fields(StepContext)]
    # The order the pipeline passes them in.
    assert names == ["route", "trajectory_id", "step", "request", "trajectory", "calls", "store", "metrics"]
    assert all(field.default is dataclasses.MISSING for field in dataclasses.fields(StepContext))
    with pytest.raises(TypeError, match="calls"):
        StepContext("tandem", "t", 1, REQUEST, None)  # type: ignore[call-arg]


async def test_a_reading_policy_decides_from_the_facts_alone() -> None:
    policy = RandomPolicy(0.5, seed=7)
    facts = StepFacts("tandem", "t", 3, REQUEST, Trajectory(id="t", steps=3))
    first, again = await policy.decide(facts), await policy.decide(facts)
    assert first.score is not None and first == again  # a function of (seed, trajectory, step)
    trajectory = Trajectory(id="t", steps=3)
    trajectory.counts["cloud_steps"], trajectory.counts["edge_steps"] = 1, 1
    trajectory.counts["last_cloud_step"] = 1
    counters = counters_of(StepFacts("tandem", "t", 3, REQUEST, trajectory))
    assert (counters.cloud_steps, counters.answered_steps, counters.steps_since_cloud) == (1, 2, 1)


async def test_task_routing_needs_the_facts_and_a_store_only() -> None:
    store = MemoryStore()
    slot = await store.begin_step(StepStart("t", "b", False, "Refactor the parser", "tandem", "", 1.0))
    policy = TaskPolicy(TaskRoute(strategy="task", cloud_if_matches=r"\brefactor\b"))
    decision = await policy.decide(NotedFacts("tandem", "t", 1, REQUEST, slot.trajectory, store))
    assert decision.target == "cloud"
    later = await store.get("t")
    assert later is not None and later.notes == {NOTE: "cloud"}

"""A toy extension: a new stage of the step is its module and its place in `STAGES`.

The class below stands for the new module (`router/chain/<name>.py`); putting it in
`router.chain.STAGES` (monkeypatched here, one line of `router/chain/__init__.py` in a real
change) is the other file. Nothing else is touched: the engine builds its chain from `STAGES`,
the stage is built from the shared `Parts`, and its hooks see the step at their place."""

from __future__ import annotations

from typing import Any

import pytest

import router.chain
from router.chain import STAGES, Stage
from router.chain.forward import Forward
from router.chain.stage import Parts
from router.policies.base import Target
from router.result import Answer
from router.step import Replied, Step
from tests.inprocess import in_process


class Stamp(Stage):
    """Tags the request each target gets with the route's name and counts the answers."""

    name = "stamp"

    def __init__(self, parts: Parts) -> None:
        self.answered: list[str] = []
        self._metrics = parts.metrics  # a stage keeps what it uses of the shared parts

    async def target(self, step: Step, target: Target, raw: dict[str, Any]) -> dict[str, Any]:
        return {**raw, "metadata": {"route": step.route.name, "target": target}}

    def answer(self, step: Step) -> None:
        outcome = step.outcome
        self.answered.append(outcome.target if isinstance(outcome, Replied) else "none")


@pytest.fixture
def stamped(monkeypatch: pytest.MonkeyPatch) -> None:
    # Before the forward stage: its `target` hook shapes each attempt's request.
    at = STAGES.index(Forward)
    monkeypatch.setattr(router.chain, "STAGES", (*STAGES[:at], Stamp, *STAGES[at:]))


async def test_a_new_stage_in_the_chain_list_runs_at_its_place(stamped: None) -> None:
    async with in_process() as env:
        stamp = next(stage for stage in env.engine.chain.stages if isinstance(stage, Stamp))
        assert env.engine.chain.names.index("stamp") == env.engine.chain.names.index("forward") - 1
        result = await env.run()
        assert isinstance(result, Answer) and result.facts.target == "edge"
        assert env.edge.received[0].body["metadata"] == {"route": "tandem", "target": "edge"}
        assert stamp.answered == ["edge"]


async def test_without_it_the_request_goes_as_the_client_sent_it() -> None:
    async with in_process() as env:
        assert "stamp" not in env.engine.chain.names
        await env.run()
        assert "metadata" not in env.edge.received[0].body

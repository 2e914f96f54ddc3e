"""The chain that runs a step: its stages' request hooks in order (the forward stage's call to
the upstream among them), then their answer hooks in order. With per-stage times on
(`TANDEM_STAGE_TIMES=1`), each hook's CPU time is added to its stage's total; off, the chain
runs without a clock (the timed loop is another method, chosen once)."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from router.policies.base import Target
from router.result import StepResult
from router.step import Step

from .identify import Identify
from .stage import Stage, overrides

TIMES_ENV = "TANDEM_STAGE_TIMES"


def times_wanted() -> bool:
    """Whether this process keeps per-stage times (`TANDEM_STAGE_TIMES=1`)."""
    return os.environ.get(TIMES_ENV, "") not in ("", "0")


@dataclass
class StageTimes:
    """CPU time per stage (the thread's: a hook that waits on the network costs nothing while
    it waits; other tasks that run meanwhile count for it), in nanoseconds, and steps timed."""

    ns: dict[str, int] = field(default_factory=dict)
    steps: int = 0

    def add(self, name: str, ns: int) -> None:
        self.ns[name] = self.ns.get(name, 0) + ns

    def per_step_us(self) -> dict[str, float]:
        return {name: total / 1000 / max(self.steps, 1) for name, total in self.ns.items()}

    def clear(self) -> None:
        self.ns.clear()
        self.steps = 0


class Chain:
    """The ordered stages of a step; the first opens it (`Identify`)."""

    def __init__(self, stages: Sequence[Stage], times: StageTimes | None = None) -> None:
        first = stages[0]
        if not isinstance(first, Identify):
            raise TypeError("the chain's first stage opens the step: Identify")
        self.identify = first
        self.stages = tuple(stages)
        self._request = [s for s in stages if overrides(s, "request")]
        self._target = [s for s in stages if overrides(s, "target")]
        self._answer = [s for s in stages if overrides(s, "answer")]
        self.times = times
        self._nested = 0  # time the target hooks took inside the forward stage's (timed runs)
        if times is not None:
            self.run = self._run_timed  # type: ignore[method-assign]
            self.shape = self._shape_timed  # type: ignore[method-assign]
        for stage in stages:
            stage.joined(self)

    @property
    def names(self) -> list[str]:
        return [stage.name for stage in self.stages]

    async def run(self, step: Step) -> StepResult:
        """The step's request hooks, then its answer hooks; its result."""
        for stage in self._request:
            await stage.request(step)
        for stage in self._answer:
            stage.answer(step)
        assert step.result is not None, "the record stage makes every step's result"
        return step.result

    async def shape(self, step: Step, target: Target, raw: dict[str, Any]) -> dict[str, Any]:
        """The request as `target` gets it, through every stage's `target` hook."""
        for stage in self._target:
            raw = await stage.target(step, target, raw)
        return raw

    async def _run_timed(self, step: Step) -> StepResult:
        times, clock = self.times, time.thread_time_ns
        assert times is not None
        times.steps += 1
        for stage in self._request:
            self._nested = 0
            began = clock()
            await stage.request(step)
            times.add(stage.name, clock() - began - self._nested)
        for stage in self._answer:
            began = clock()
            stage.answer(step)
            times.add(stage.name, clock() - began)
        assert step.result is not None, "the record stage makes every step's result"
        return step.result

    async def _shape_timed(self, step: Step, target: Target, raw: dict[str, Any]) -> dict[str, Any]:
        times, clock = self.times, time.thread_time_ns
        assert times is not None
        for stage in self._target:
            began = clock()
            raw = await stage.target(step, target, raw)
            spent = clock() - began
            times.add(stage.name, spent)
            self._nested += spent
        return raw

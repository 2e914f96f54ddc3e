"""Random delegation: each step goes to the cloud with probability `p` (EdgeWise's baseline)."""

from __future__ import annotations

import random
from typing import Literal

from pydantic import Field

from router.policies.base import Decision, Policy, Reason, RouteBase, StepContext, Target


class RandomPolicy:
    def __init__(self, p: float, seed: int | None) -> None:
        self._p = p
        # A private generator: a seed makes one process's sequence of draws reproducible.
        self._rng = random.Random(seed)

    async def decide(self, step: StepContext) -> Decision:
        draw = self._rng.random()
        target: Target = "cloud" if draw < self._p else "edge"
        return Decision(target=target, reason=Reason.RANDOM_DRAW, score=round(draw, 6))


class RandomRoute(RouteBase):
    strategy: Literal["random"]
    p: float = Field(0.4, ge=0.0, le=1.0, description="probability that a step goes to the cloud")
    seed: int | None = None

    def build(self) -> Policy:
        return RandomPolicy(self.p, self.seed)

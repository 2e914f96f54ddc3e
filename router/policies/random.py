"""Random delegation: each step goes to the cloud with probability `p` (EdgeWise's baseline)."""

from __future__ import annotations

import hashlib
import random

from router.config.strategies import RandomRoute
from router.policies.base import Builder, Decision, Reason, RouteBase, StepView, Target


class RandomPolicy:
    def __init__(self, p: float, seed: int | None) -> None:
        self._p = p
        # Unseeded: a salt drawn at start. Either way the draw is a function of (seed,
        # trajectory, step): a client's retry of a step gets the target its first attempt got,
        # and a seeded run is reproducible whatever order steps arrive in and whichever
        # replica answers them.
        self._seed = seed if seed is not None else random.SystemRandom().getrandbits(64)

    def _draw(self, step: StepView) -> float:
        key = f"{self._seed}:{step.trajectory_id}:{step.step}".encode()
        return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big") / 2**64

    async def decide(self, step: StepView) -> Decision:
        draw = self._draw(step)
        target: Target = "cloud" if draw < self._p else "edge"
        return Decision(target=target, reason=Reason.RANDOM_DRAW, score=round(draw, 6))


# The route settings this module's policy is built from (router/policies/registry.py).
BUILDS: dict[type[RouteBase], Builder] = {RandomRoute: lambda route: RandomPolicy(route.p, route.seed)}

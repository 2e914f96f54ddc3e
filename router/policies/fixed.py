"""Edge-only and cloud-only: every step of the route goes to one target."""

from __future__ import annotations

from typing import Literal

from router.policies.base import Decision, Policy, Reason, RouteBase, StepView, Target


class FixedPolicy:
    def __init__(self, target: Target) -> None:
        self._decision = Decision(target=target, reason=Reason.ROUTE_FIXED)

    async def decide(self, step: StepView) -> Decision:
        return self._decision


class EdgeRoute(RouteBase):
    strategy: Literal["edge"]
    # Edge-only means the data never leaves: no failover to the cloud unless asked for.
    failover: bool = False

    def sends_to_cloud(self) -> bool:
        return False

    def build(self) -> Policy:
        return FixedPolicy("edge")


class CloudRoute(RouteBase):
    strategy: Literal["cloud"]

    def build(self) -> Policy:
        return FixedPolicy("cloud")

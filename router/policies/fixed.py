"""Edge-only and cloud-only: every step of the route goes to one target."""

from __future__ import annotations

from router.config.strategies import CloudRoute, EdgeRoute
from router.policies.base import Builder, Decision, Reason, RouteBase, StepView, Target


class FixedPolicy:
    def __init__(self, target: Target) -> None:
        self._decision = Decision(target=target, reason=Reason.ROUTE_FIXED)

    async def decide(self, step: StepView) -> Decision:
        return self._decision


# The route settings this module's policy is built from (router/policies/registry.py).
BUILDS: dict[type[RouteBase], Builder] = {
    EdgeRoute: lambda route: FixedPolicy("edge"),
    CloudRoute: lambda route: FixedPolicy("cloud"),
}

"""The `Policy` interface, the `Decision` it returns, and the settings every route shares."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Literal, Protocol

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from router.protocol.chat import ChatRequest

Target = Literal["edge", "cloud"]


def other_target(target: Target) -> Target:
    return "cloud" if target == "edge" else "edge"


class Reason(StrEnum):
    """Why a step went where it went: the `x-tandem-reason` header and the metrics label."""

    ROUTE_FIXED = "route_fixed"  # the route's strategy always picks this target
    HEADER_FORCED = "header_forced"  # the request's x-tandem-target header chose
    RANDOM_DRAW = "random_draw"  # the random strategy's draw chose


@dataclass(frozen=True, slots=True)
class Decision:
    target: Target
    reason: Reason
    score: float | None = None


@dataclass(frozen=True, slots=True)
class StepContext:
    """What a policy may look at to decide one step."""

    route: str
    trajectory_id: str
    step: int
    request: ChatRequest


class Policy(Protocol):
    """Decides the target of a step. Async because later strategies ask a model first."""

    async def decide(self, step: StepContext) -> Decision: ...


class RouteBase(BaseModel):
    """Settings shared by every route, whatever its strategy."""

    model_config = ConfigDict(extra="forbid")

    # Whether a step may go to the other target when its target fails before the first byte.
    failover: bool = True

    def build(self) -> Policy:
        raise NotImplementedError

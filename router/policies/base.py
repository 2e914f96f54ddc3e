"""The `Policy` interface, the `Decision` it returns, and what a policy sees of a step. The
settings every route shares are router/config/routes.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from router.config.routes import RouteBase as RouteBase  # what each strategy's settings extend
from router.records import record
from router.result import Reason as Reason  # why a step went where it went
from router.result import Target as Target  # the word every strategy uses

if TYPE_CHECKING:
    from router.inner import InnerCalls
    from router.metrics.core import Metrics
    from router.protocol.chat import ChatRequest
    from router.trajectory.state import Trajectory
    from router.trajectory.store import TrajectoryStore


def other_target(target: Target) -> Target:
    return "cloud" if target == "edge" else "edge"


@record(frozen=True, slots=True)
class PreparedAnswer:
    """A complete chat completion an inner call already produced for the agent."""

    body: dict[str, Any]
    status: int = 200
    # Which of the step's inner calls produced it (that call becomes the step's main call).
    inner_index: int | None = None


@record(frozen=True, slots=True)
class Decision:
    target: Target
    reason: Reason
    score: float | None = None
    # Set when the strategy already holds the agent's answer (a draft it accepted, an edge step
    # that did not delegate); the pipeline relays it instead of calling an upstream.
    answer: PreparedAnswer | None = None
    # Top-level request keys replaced for the final call (a plan in the system prompt, the
    # advisor's exchange added to the messages).
    patch: dict[str, Any] | None = None
    # The judge's feature vector, kept in the step record when the route asks (for retraining).
    features: list[float] | None = None
    # The strategy's verdicts on its inner calls, (index in the step's calls, status) such as
    # "invalid: …": the decide stage writes them into the step's ledger (a strategy only reads it).
    verdicts: tuple[tuple[int, str], ...] = ()


class StepView(Protocol):
    """What every policy may read of a step (a policy that only reads takes this)."""

    @property
    def route(self) -> str: ...
    @property
    def trajectory_id(self) -> str: ...
    @property
    def step(self) -> int: ...
    @property
    def request(self) -> ChatRequest: ...
    @property
    def trajectory(self) -> Trajectory: ...


class AsksModels(StepView, Protocol):
    """A step a policy may ask models about (probe, judge, draft, advisor, plan)."""

    @property
    def calls(self) -> InnerCalls: ...
    @property
    def metrics(self) -> Metrics: ...


class KeepsNotes(StepView, Protocol):
    """A step whose policy keeps per-trajectory notes (under `router.notes.strategy(...)`)."""

    @property
    def store(self) -> TrajectoryStore: ...


# A true frozen dataclass, not a `record`: extensions subclass it with `@dataclass(frozen=True)`
# (a frozen dataclass cannot inherit from one that is not).
@dataclass(frozen=True, slots=True)
class StepFacts:
    """The facts of a step, without the means to act on it (what shadow labelling computes the
    judge's features from)."""

    route: str
    trajectory_id: str
    step: int  # the step's number in its trajectory, from 1
    request: ChatRequest
    # The trajectory as it stood before this step (counters, notes).
    trajectory: Trajectory


@dataclass(frozen=True, slots=True)
class StepContext(StepFacts):
    """What a policy may look at and use to decide one step: every field always set."""

    # Inner model calls (probe, judge, draft, advisor, plan), counted in the step's ledger.
    calls: InnerCalls
    # Where a policy keeps its per-trajectory notes (the task target, a plan).
    store: TrajectoryStore
    metrics: Metrics


class Policy(Protocol):
    """Decides the target of a step. Async because several strategies ask a model first. A
    policy may declare the narrower view it uses (`StepView`, `AsksModels`, `KeepsNotes`)."""

    async def decide(self, step: StepContext) -> Decision: ...


# Makes a route's policy from its settings; each strategy module names its own (`BUILDS`).
Builder = Callable[[Any], Policy]

"""The `Policy` interface, the `Decision` it returns, and the settings every route shares."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from router.privacy.modes import PrivacyMode
from router.result import Target as Target  # the word every strategy uses

if TYPE_CHECKING:
    from router.inner import InnerCalls
    from router.metrics import Metrics
    from router.protocol.chat import ChatRequest
    from router.trajectory.state import Trajectory
    from router.trajectory.store import TrajectoryStore


def other_target(target: Target) -> Target:
    return "cloud" if target == "edge" else "edge"


class Reason(StrEnum):
    """Why a step went where it went: the `x-tandem-reason` header and the metrics label."""

    ROUTE_FIXED = "route_fixed"  # the route's strategy always picks this target
    HEADER_FORCED = "header_forced"  # the request's x-tandem-target header chose
    RANDOM_DRAW = "random_draw"  # the random strategy's draw chose
    TASK_ROUTED = "task_routed"  # task routing: decided at the first step, kept for the run
    ENTROPY = "entropy"  # step routing by the edge's first-token entropy (score = entropy)
    LLM_JUDGE = "llm_judge"  # a model asked in words decided (score = its answer)
    JUDGE = "judge"  # the ONNX judge's score against the threshold
    DRAFT_ACCEPTED = "draft_accepted"  # draft-and-verify: the edge's draft passed
    DRAFT_REJECTED = "draft_rejected"  # draft-and-verify: the cloud regenerated the step
    SELF_DELEGATED = "self_delegated"  # the edge asked for the cloud
    EDGE_ANSWERED = "edge_answered"  # self-delegation / advisor: the edge answered itself
    ADVISED = "advised"  # the edge consulted the cloud advisor, then answered
    SKETCH = "sketch"  # sketch-guided: the edge answered with the cloud's plan
    INVALID_TOOL_CALL = "invalid_tool_call"  # the edge's tool call was invalid; the cloud redid it
    FAILING = "failing"  # repeated tool errors or a repeated action sent the step to the cloud
    BUDGET = "budget_exhausted"  # a constraint: the trajectory's cloud budget is spent
    MAX_SHARE = "max_cloud_share"  # a constraint: the cloud share would pass its maximum
    MIN_GAP = "min_cloud_gap"  # a constraint: too few steps since the last cloud step
    PINNED = "pinned_edge"  # a constraint: the trajectory is pinned to the edge (privacy)
    INNER_FAILED = "inner_call_failed"  # the strategy's inner call failed; the fallback target
    PRIVACY = "privacy_keep_local"  # privacy: sensitive values in the context keep the step local
    EDGE_FULL = "edge_full"  # every edge replica's queue was full: the step went to the cloud for load
    UNDECIDED = "undecided"  # the step ended (an error, the client left) before a decision


@dataclass(frozen=True, slots=True)
class PreparedAnswer:
    """A complete chat completion an inner call already produced for the agent."""

    body: dict[str, Any]
    status: int = 200
    # Which of the step's inner calls produced it (that call becomes the step's main call).
    inner_index: int | None = None


@dataclass(frozen=True, slots=True)
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


class Constraints(BaseModel):
    """Bounds on any strategy's use of the cloud within one trajectory."""

    model_config = ConfigDict(extra="forbid")

    budget_usd: float | None = Field(None, ge=0, description="cloud dollars per trajectory, inner calls included")
    budget_calls: int | None = Field(None, ge=0, description="cloud calls per trajectory, inner calls included")
    max_cloud_share: float | None = Field(None, ge=0, le=1, description="share of steps the cloud may answer")
    min_cloud_gap: int | None = Field(None, ge=0, description="steps required between two cloud steps")


class ContextSettings(BaseModel):
    """What the cloud sees of the history when it answers a step (EdgeWise's context question)."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["full", "last_k", "summary", "flattened"] = Field(
        "full", description="full history, the last k steps, a summary of earlier steps, or one flattened transcript"
    )
    k: int = Field(6, ge=1, description="last_k and summary: the last k steps kept verbatim")
    max_chars: int = Field(24_000, ge=1000, description="flattened and summary: size bound of the text")


class ShadowSettings(BaseModel):
    """Shadow labelling (router/shadow.py): after a sampled step's answer has gone to the
    client, ask the other target the same question and keep whether the two actions agree."""

    model_config = ConfigDict(extra="forbid")

    rate: float = Field(0.05, ge=0, le=1, description="share of answered steps shadowed")
    budget_usd_per_day: float = Field(5.0, ge=0, description="shadow dollars per UTC day, per route")
    max_tokens: int = Field(1024, ge=1, description="bound on the shadow answer's tokens")
    timeout_s: float = Field(120.0, gt=0, description="a shadow call still unanswered after this is dropped")


class RouteBase(BaseModel):
    """Settings shared by every route, whatever its strategy."""

    model_config = ConfigDict(extra="forbid")

    # Whether a step may go to the other target when its target fails before the first byte.
    failover: bool = True
    # What may reach the cloud: allow (measure only), redact (placeholders, restored in the
    # answer), keep_local (sensitive steps go to the edge), block (refuse sensitive cloud steps).
    privacy: PrivacyMode = "allow"
    # Opt-in kinds detected besides the default ones: person names and postal addresses
    # (router/privacy/opt_in.py); off by default.
    privacy_detect: list[Literal["person", "address"]] = Field(
        default_factory=list, description="opt-in kinds to detect besides the default ones: person, address"
    )
    # keep_local: once a step was kept local for privacy, pin the whole trajectory to the edge.
    pin_when_sensitive: bool = True
    constraints: Constraints = Constraints()
    context: ContextSettings = ContextSettings()
    # Shadow labelling: off unless set (`shadow: {rate: 0.05, budget_usd_per_day: 5}`).
    shadow: ShadowSettings | None = None
    edge_full: Literal["cloud", "wait", "fail"] = Field(
        "wait",
        description="when every replica of the edge pool has edge_full_waiting requests or more in its queue: cloud "
        "sends an edge step to the cloud at once (reason edge_full; a step privacy, a constraint or the header keeps "
        "off the cloud waits instead), wait sends it to the edge to queue, fail answers 503 (edge_full)",
    )
    edge_full_waiting: int = Field(
        4, ge=1, description="requests waiting in a replica's own queue (vLLM's num_requests_waiting) that make it full"
    )

    def upstreams_used(self) -> list[str]:
        """Upstreams the strategy calls besides edge and cloud (checked at start-up)."""
        return []

    def sends_to_cloud(self) -> bool:
        """Whether a step of this route may go to the cloud (the edge-only route's never do,
        short of a failover)."""
        return True

    def intended_cloud_share(self) -> float | None:
        """The cloud share the route means to hold (the metrics' target series, which the
        alert rules compare the observed share with); a strategy with its own says so."""
        return self.constraints.max_cloud_share

    def build(self) -> Policy:
        raise NotImplementedError

"""The step in hand, as the chain's stages share it (router/chain/).

`StepInputs` is what the step began with and no stage changes (frozen); `Step` adds each
stage's output, in the chain's order: the privacy stage (`privacy`), the decision, the
shaped request the cloud got, the forward's outcome, what the restore stage put back, and
the record's place. A stage writes only its own fields; the ones after it read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from router.config.routes import RouteBase
from router.edge.pool import Lease, Placement
from router.inner import InnerCalls
from router.policies.base import Decision, Policy, PreparedAnswer, Target
from router.privacy.guard import PrivacyGuard
from router.protocol.chat import Answer as ChatAnswer
from router.protocol.chat import ChatRequest
from router.records import record
from router.result import Facts, StepResult
from router.trajectory.tracker import StepIdentity

if TYPE_CHECKING:
    from router.privacy.redact import StreamRestorer
    from router.upstream import UpstreamFailure, UpstreamReply


@dataclass(slots=True)
class Route:
    name: str
    settings: RouteBase
    policy: Policy


@record(frozen=True, slots=True)
class StepInputs:
    """What the step began with: the request, its route and identity, the target a header
    forces (None: the strategy decides), when it started (perf counter, wall clock)."""

    route: Route
    request: ChatRequest
    identity: StepIdentity
    forced: Target | None
    started: float
    started_at: float


@dataclass(slots=True)
class Replied:
    """The forward stage's outcome: `target` answered (`fallback`: on the failover attempt)."""

    target: Target
    fallback: bool
    reply: UpstreamReply
    prompt_bytes: int


@dataclass(slots=True)
class Unanswered:
    """The forward stage's outcome: no target answered; the last tried and every failure, and
    which of them the client gets (the last, unless a later one says less: see forward)."""

    target: Target
    fallback: bool
    failures: list[UpstreamFailure]
    relayed: int = -1


@dataclass(slots=True)
class Prepared:
    """The decide stage's outcome: the strategy's inner call already holds the answer."""

    answer: PreparedAnswer


Outcome = Replied | Unanswered | Prepared


@dataclass(slots=True)
class Restored:
    """The restore stage's output for a whole answer: the answer with the originals back (and
    its bytes), and what the cloud said before (for the content audit, None when not kept)."""

    parsed: dict[str, Any]
    body: bytes
    said: ChatAnswer | None


@dataclass(slots=True)
class Step:
    """What the chain knows of the step in hand: its frozen inputs, then each stage's output."""

    inputs: StepInputs
    calls: InnerCalls
    privacy: PrivacyGuard  # the privacy stage's guard, opened with the step
    decision: Decision  # the decide stage's (UNDECIDED before it)
    # Privacy, a constraint or a header asking for the edge forbids the cloud: no failover to it.
    cloud_forbidden: bool = False
    sent_to_cloud: list[dict[str, Any]] | None = None  # the messages the cloud received
    sent_encoded: list[bytes] | None = None  # their JSON each, where they were redacted
    # The main call in flight: its target, the bytes sent, whether it is the failover attempt
    # (what a step that ends without an answer is recorded and charged for).
    upstream: Target | None = None
    upstream_bytes: int = 0
    fallback: bool = False
    # The main calls that failed so far: (target, failure kind, HTTP status), for the record.
    failures: list[tuple[str, str, int | None]] = field(default_factory=list)
    # The edge pool's replicas in the order this step tries them (its home first), and the
    # in-flight count it holds on one until its streamed answer ends.
    placement: Placement | None = None
    lease: Lease | None = None
    outcome: Outcome | None = None  # the decide or the forward stage's
    restored: Restored | None = None  # the restore stage's, for a whole answer the cloud redacted
    restorer: StreamRestorer | None = None  # the restore stage's, for such a stream
    result: StepResult | None = None  # the record stage's
    recorded: bool = False  # the answer writer has taken the step's one record
    ticket: int = 0  # the record's place in the recorder's queue (`Tracker.kept`)

    # The inputs' parts the stages read most, as plain fields (copied once: no property calls).
    route: Route = field(init=False)
    request: ChatRequest = field(init=False)
    identity: StepIdentity = field(init=False)
    trajectory_id: str = field(init=False)
    started: float = field(init=False)
    started_at: float = field(init=False)

    def __post_init__(self) -> None:
        inputs = self.inputs
        self.route, self.request, self.identity = inputs.route, inputs.request, inputs.identity
        self.trajectory_id = inputs.identity.trajectory_id
        self.started, self.started_at = inputs.started, inputs.started_at

    def facts(self, target: Target, fallback: bool) -> Facts:
        decision = self.decision
        return Facts(
            target,
            self.route.name,
            decision.reason.value,
            self.trajectory_id,
            self.identity.step,
            decision.score,
            fallback,
            self.identity.stitch,
        )

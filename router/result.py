"""What the engine gives back for one step, and what it is told besides the request.

A step ends in one of three results: an `Answer` (a whole chat completion), a `Stream` (chat
completion chunks as server-sent events) or a `Failure` (an OpenAI-shaped error). Each carries
the step's `Facts` (where it went and why), which the chat surface sends as `x-tandem-*`
headers. The results speak no HTTP: each API surface turns them into its own responses.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from router.errors import GatewayError
from router.protocol.usage import Usage
from router.records import record

# Work to run once the client has the whole answer (a shadow call): never delays it.
After = Callable[[], Awaitable[None]]
Target = Literal["edge", "cloud"]


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


@record(frozen=True, slots=True)
class StepMeta:
    """What the engine needs of a request besides its body."""

    headers: Mapping[str, str]  # lower-case names (x-session-id, x-tandem-target, …)
    namespace: str  # the client key's namespace ("" without keys)
    session: str | None = None  # the session the path names (/s/{session}/v1)
    # Called once the step is counted: from then on it may be cancelled (a client that leaves)
    # and still ends with its one record.
    on_begun: Callable[[], None] | None = None


@record(frozen=True, slots=True)
class Facts:
    """Where the step went and why."""

    target: Target
    route: str
    reason: str
    trajectory: str
    step: int
    score: float | None = None
    fallback: bool = False
    stitch: str | None = None  # how a step without a session found its trajectory (extended, …)

    def headers(self) -> dict[str, str]:
        headers = {
            "x-tandem-target": self.target,
            "x-tandem-route": self.route,
            "x-tandem-reason": self.reason,
            "x-tandem-trajectory": self.trajectory,
            "x-tandem-step": str(self.step),
        }
        if self.score is not None:
            headers["x-tandem-score"] = f"{self.score:.6g}"
        if self.fallback:
            headers["x-tandem-fallback"] = "true"
        if self.stitch is not None:
            headers["x-tandem-stitch"] = self.stitch
        return headers

    def raw_headers(self) -> list[tuple[bytes, bytes]]:
        """`headers()` as an ASGI response's head carries them (names and values in latin-1),
        made at once: the names are constants, only the values are encoded (every answer)."""
        raw = [
            (b"x-tandem-target", self.target.encode("latin-1")),
            (b"x-tandem-route", self.route.encode("latin-1")),
            (b"x-tandem-reason", self.reason.encode("latin-1")),
            (b"x-tandem-trajectory", self.trajectory.encode("latin-1")),
            (b"x-tandem-step", b"%d" % self.step),
        ]
        if self.score is not None:
            raw.append((b"x-tandem-score", f"{self.score:.6g}".encode("latin-1")))
        if self.fallback:
            raw.append((b"x-tandem-fallback", b"true"))
        if self.stitch is not None:
            raw.append((b"x-tandem-stitch", self.stitch.encode("latin-1")))
        return raw


@dataclass(slots=True)
class Answer:
    """A whole chat completion. `body` is what the chat surface sends (the upstream's bytes when
    nothing changed them); `completion` is the same answer parsed, for the other surfaces."""

    facts: Facts
    completion: dict[str, Any]
    body: bytes
    after: After | None = None
    # The ledger's estimate when the upstream reported no usable usage (the translated surfaces
    # tell their clients it, not zero tokens); None when the answer's own usage was charged.
    estimated: Usage | None = None


@dataclass(slots=True)
class Stream:
    """Chat completion chunks as server-sent event bytes. `close` must be awaited however the
    response ends (the step is closed and recorded then, even if the relay never began)."""

    facts: Facts
    chunks: AsyncIterator[bytes]
    close: Callable[[], Awaitable[None]]
    after: After | None = None


@dataclass(slots=True)
class Failure:
    """An error answer: the gateway's own (`body` None) or an upstream's, relayed (`body` its
    bytes, `error` what they say). `facts` is None when the request was refused before it
    became a step."""

    status: int
    error: dict[str, Any]  # {"message", "type", "code", "param"}
    facts: Facts | None = None
    headers: dict[str, str] = field(default_factory=dict)  # Retry-After and the like
    body: bytes | None = None
    content_type: str = "application/json"

    @classmethod
    def of(cls, error: GatewayError, facts: Facts | None = None) -> Failure:
        """The gateway's own error (a refusal, a limit, a store that refuses steps)."""
        return cls(error.status, error.error(), facts, error.headers)

    def all_headers(self) -> dict[str, str]:
        facts = self.facts.headers() if self.facts is not None else {}
        return {**facts, **self.headers}


StepResult = Answer | Stream | Failure

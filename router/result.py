"""What the engine gives back for one step, and what it is told besides the request.

A step ends in one of three results: an `Answer` (a whole chat completion), a `Stream` (chat
completion chunks as server-sent events) or a `Failure` (an OpenAI-shaped error). Each carries
the step's `Facts` (where it went and why), which the chat surface sends as `x-tandem-*`
headers. The results speak no HTTP: each API surface turns them into its own responses.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from router.errors import GatewayError

# Work to run once the client has the whole answer (a shadow call): never delays it.
After = Callable[[], Awaitable[None]]
Target = Literal["edge", "cloud"]


@dataclass(frozen=True, slots=True)
class StepMeta:
    """What the engine needs of a request besides its body."""

    headers: Mapping[str, str]  # lower-case names (x-session-id, x-tandem-target, …)
    namespace: str  # the client key's namespace ("" without keys)
    session: str | None = None  # the session the path names (/s/{session}/v1)
    # Called once the step is counted: from then on it may be cancelled (a client that leaves)
    # and still ends with its one record.
    on_begun: Callable[[], None] | None = None


@dataclass(frozen=True, slots=True)
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


@dataclass(slots=True)
class Answer:
    """A whole chat completion. `body` is what the chat surface sends (the upstream's bytes when
    nothing changed them); `completion` is the same answer parsed, for the other surfaces."""

    facts: Facts
    completion: dict[str, Any]
    body: bytes
    after: After | None = None


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

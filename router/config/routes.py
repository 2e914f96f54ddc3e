"""The settings every route shares, whatever its strategy: failover, privacy, constraints on the
cloud, the cloud's view of the history, shadow labelling and a full edge."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from router.config.privacy import PrivacyMode
from router.result import Reason, Target

# The reasons a strategy gives, each with the targets it can choose (router/metrics/route_labels.py).
Reasons = tuple[tuple[Reason, tuple[Target, ...]], ...]
BOTH: tuple[Target, ...] = ("edge", "cloud")


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
        description="when every replica of the edge pool is full (edge_full_waiting requests or more in its queue, or "
        "an estimated wait of edge_full_wait_s or more): cloud "
        "sends an edge step to the cloud at once (reason edge_full; a step privacy, a constraint or the header keeps "
        "off the cloud waits instead), wait sends it to the edge to queue, fail answers 503 (edge_full)",
    )
    edge_full_waiting: int = Field(
        4, ge=1, description="requests waiting in a replica's own queue (vLLM's num_requests_waiting) that make it full"
    )
    edge_full_wait_s: float | None = Field(
        None,
        gt=0,
        description="a replica is also full when the wait of a request queued there now is estimated at this many "
        "seconds or more: its waiting requests x the recent mean time a request ran (vLLM's "
        "request_inference_time_seconds; at least as long as none has finished while a queue stood) / its requests "
        "running; null: the queue length alone",
    )

    def upstreams_used(self) -> list[str]:
        """Upstreams the strategy calls besides edge and cloud (checked at start-up)."""
        return []

    def sends_to_cloud(self) -> bool:
        """Whether a step of this route may go to the cloud (the edge-only route's never do,
        short of a failover)."""
        return True

    def reasons(self) -> Reasons:
        """The reasons the route's strategy gives, each with the targets it can choose (the
        constraints', privacy's and the header's are the route's own: router/metrics/route_labels.py)."""
        return ()

    def inner_calls(self) -> set[tuple[str, str]]:
        """(purpose, upstream) of the inner calls the route's strategy makes."""
        return set()

    def failure_kinds(self) -> tuple[str, ...]:
        """The `kind`s of tandem_policy_failures_total the strategy counts: the purpose of an
        inner call that failed, `<purpose>_unreadable` when its answer could not be read, and
        `inner_call` when the engine falls back from a failure the strategy let through."""
        return ()

    def intended_cloud_share(self) -> float | None:
        """The cloud share the route means to hold (the metrics' target series, which the
        alert rules compare the observed share with); a strategy with its own says so."""
        return self.constraints.max_cloud_share

"""Tokens and dollars of a step, with the all-cloud counterfactual.

Cost follows EC2-Bench: `(raw_input × p_in + cached × p_cached + output × p_out) / 1e6`, with
raw input = prompt tokens − cached tokens, from the usage the upstream reported. The
counterfactual prices the step's tokens at the cloud's prices (the cloud's tokenizer would count
a little differently; we say so), with the cached input an all-cloud run would have had: in such
a run the cloud saw the previous step's prompt, and each step's prompt extends it, so the
provider's prompt cache (`PromptCacheRules`, router/config/prices.py) holds that shared prefix. A cloud step after edge
steps pays what the cloud reported (a prefix it never saw is not cached); its counterfactual
does not inherit that cold cache.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field, fields
from typing import Any

import orjson

from router import notes
from router.config.prices import Prices, PromptCacheRules
from router.protocol.usage import Usage as Usage  # a step's tokens, as its records hold them

# The trajectory note holding the last answered step's prompt tokens and start time
# (`"<tokens> <unix time>"`): the prefix an all-cloud run's prompt cache would hold.
CACHE_NOTE = notes.ledger("cache_prefix")


def read_cache_note(value: str | None) -> tuple[int, float] | None:
    """(prompt tokens, unix time) of the previous step, from the trajectory's note."""
    if not value:  # a trajectory's first step: no exception raised and caught every time
        return None
    try:
        tokens, at = value.split(" ")
        return int(tokens), float(at)
    except ValueError:
        return None


def all_cloud_cached(
    usage: Usage, target: str, rules: PromptCacheRules | None, previous: tuple[int, float] | None, at: float
) -> int:
    """Cached input tokens of the same step in an all-cloud run: the prefix it shares with the
    previous step's prompt (the prompt only grows within a run), by the provider's rules, or
    what the cloud reported when it answered and reported more."""
    modelled = 0
    if rules is not None and previous is not None and 0 <= at - previous[1] <= rules.ttl_s:
        modelled = rules.cached(min(previous[0], usage.prompt_tokens))
    reported = usage.cached_tokens if target == "cloud" else 0
    return min(max(modelled, reported), usage.prompt_tokens)


# What `StepRecord.answered_by` can be: the two targets, or "none" for a step no target answered.
ANSWERED_BY = ("edge", "cloud", "none")
# How a step ended. `refused`: a policy of the route refused it on purpose (a privacy `block`
# route's 403), which is no failure of the gateway or an upstream: the step-error alert counts
# `error` only. A client over its own limits (429) is refused before its step begins, so it has
# no record at all (tandem_client_limit_refusals_total counts it).
STEP_STATUSES = ("ok", "error", "refused", "cancelled")


def cost_usd(usage: Usage, prices: Prices) -> float:
    tier = prices.tier(usage.prompt_tokens)
    raw_input = max(usage.prompt_tokens - usage.cached_tokens, 0)
    return (
        raw_input * tier.input
        + usage.cached_tokens * tier.cached_input_or_input
        + usage.completion_tokens * tier.output
    ) / 1e6


def estimate_usage(prompt_bytes: int, completion_bytes: int) -> Usage:
    """A documented rule for an upstream that reported no usage: about 4 bytes a token
    (English text and code with a BPE tokenizer). Flagged `estimated`, never silently zero."""
    return Usage(prompt_bytes // 4, 0, max(completion_bytes // 4, 1), source="estimated")


@dataclass(slots=True)
class InnerCall:
    """A model call the gateway made for a step before its answer: a probe, a judge, a draft,
    an advisor, a plan. Its tokens and dollars count in the step's cost."""

    purpose: str
    target: str
    usage: Usage | None
    cost_usd: float
    status: str = "ok"

    def as_dict(self) -> dict[str, Any]:
        usage = self.usage
        return {
            "purpose": self.purpose,
            "target": self.target,
            "status": self.status,
            "cost_usd": self.cost_usd,
            "usage": None if usage is None else [usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> InnerCall:
        raw = data.get("usage")
        usage = Usage(int(raw[0]), int(raw[1]), int(raw[2])) if isinstance(raw, list) else None
        return cls(data["purpose"], data["target"], usage, float(data["cost_usd"]), data.get("status", "ok"))


@dataclass(slots=True)
class StepRecord:
    """One step (one attempt of it, when a client retried) as the ledger keeps it."""

    trajectory_id: str
    step: int
    route: str
    target: str
    reason: str
    score: float | None
    model: str
    at: float = 0.0  # unix time the step started
    attempt: int = 1  # 2, 3, … for a client's retries of the same step
    fallback: bool = False
    # The upstream calls of the step that failed before its answer (or before it failed):
    # (target, failure kind, the upstream's HTTP status or None), in the order they were made.
    # A kind and a status only: an upstream's words may hold what the step sent.
    failures: list[tuple[str, str, int | None]] = field(default_factory=list)
    status: str = "ok"  # one of STEP_STATUSES
    http_status: int = 200
    usage: Usage | None = None
    cost_usd: float = 0.0
    counterfactual_usd: float = 0.0  # the same tokens at the cloud's prices, its cache modelled
    counterfactual_cached_tokens: int = 0  # cached input of the step in an all-cloud run
    cache_prefix: tuple[int, float] | None = None  # the previous step's (prompt tokens, start)
    latency_s: float = 0.0
    ttft_s: float = 0.0
    tools: list[str] = field(default_factory=list)  # tool names the answer called
    error_signals: list[str] = field(default_factory=list)  # in the tool results the step was given
    # Whether the previous step's action failed, by the harness's status in the tool results this
    # step was given (judge/status.py); None when nothing was read (a first step, no results).
    failed_before: int | None = None
    # The previous step's action type (judge/actions.py), whose outcome `failed_before` is: with
    # it the trajectory keeps the run's own record by action type (judge/record.py).
    failed_before_action: str | None = None
    inner: list[InnerCall] = field(default_factory=list)
    features: list[float] | None = None  # the judge's features, when the route records them
    exposed: list[str] = field(default_factory=list)  # types of sensitive values the cloud received
    redacted: int = 0  # values replaced by placeholders before the cloud saw them
    # What a judge row needs, kept only when the route records features (router/judge_rows.py):
    # the answer's action type, and the end of the context it answered (privacy applied).
    action: str | None = None
    excerpt: str | None = None
    error: str | None = None
    # How a step without a session found its trajectory: extended, rewritten, new, retry
    # (router/trajectory/stitch.py); None for a step whose session named it.
    stitch: str | None = None
    # Counted during a shared-store outage (`StepSlot.counted_apart`): its index may be renumbered
    # when the store is back. Not kept: the store renumbers before it keeps a record.
    counted_apart: bool = field(default=False, compare=False)

    @property
    def answered_by(self) -> str:
        """The target that answered the step: the one whose answer the client got whole, after
        any failover; "none" for a step refused (a privacy block), failed or cancelled. The one
        definition of a step's target that the trajectory's totals (cloud share), the metrics'
        step counts and the operator's view read. `target` is the upstream called last (or the
        decision's, when none was): where the step's money went."""
        return self.target if self.status == "ok" else "none"

    @property
    def decided(self) -> str:
        """The target the decision chose: the first one called."""
        return self.failures[0][0] if self.failures else self.target

    @property
    def inner_cost_usd(self) -> float:
        return sum(call.cost_usd for call in self.inner)

    @property
    def cloud_calls(self) -> int:
        # A refused step never reached its target; a failed one did not get an answer there.
        return int(self.target == "cloud" and self.status not in ("error", "refused")) + sum(
            1 for call in self.inner if call.target == "cloud"
        )

    @property
    def cloud_spend_usd(self) -> float:
        main = self.cost_usd - self.inner_cost_usd if self.target == "cloud" else 0.0
        return main + sum(call.cost_usd for call in self.inner if call.target == "cloud")

    @property
    def savings_usd(self) -> float:
        return self.counterfactual_usd - self.cost_usd

    def as_dict(self) -> dict[str, Any]:
        usage = self.usage
        return {
            "trajectory_id": self.trajectory_id,
            "step": self.step,
            "attempt": self.attempt,
            "at": self.at,
            "route": self.route,
            "target": self.target,
            "reason": self.reason,
            "score": self.score,
            "model": self.model,
            "fallback": self.fallback,
            "decided": self.decided,
            "answered_by": self.answered_by,
            "failures": [{"target": t, "kind": k, "http_status": s} for t, k, s in self.failures],
            "status": self.status,
            "http_status": self.http_status,
            "usage": None
            if usage is None
            else {
                "prompt_tokens": usage.prompt_tokens,
                "cached_tokens": usage.cached_tokens,
                "completion_tokens": usage.completion_tokens,
                "source": usage.source,
            },
            "usage_estimated": usage is not None and usage.source == "estimated",
            "cost_usd": self.cost_usd,
            "counterfactual_usd": self.counterfactual_usd,
            "counterfactual_cached_tokens": self.counterfactual_cached_tokens,
            "savings_usd": self.savings_usd,
            "latency_s": round(self.latency_s, 6),
            "ttft_s": round(self.ttft_s, 6),
            "tools": self.tools,
            "error_signals": self.error_signals,
            "failed_before": self.failed_before,
            **({"failed_before_action": self.failed_before_action} if self.failed_before_action is not None else {}),
            "inner": [call.as_dict() for call in self.inner],
            "exposed": self.exposed,
            "redacted": self.redacted,
            **({"features": self.features} if self.features is not None else {}),
            **({"action": self.action} if self.action is not None else {}),
            **({"excerpt": self.excerpt} if self.excerpt is not None else {}),
            "error": self.error,
            **({"stitch": self.stitch} if self.stitch is not None else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StepRecord:
        raw_usage = data.get("usage")
        usage = None
        if isinstance(raw_usage, dict):
            usage = Usage(
                int(raw_usage["prompt_tokens"]),
                int(raw_usage["cached_tokens"]),
                int(raw_usage["completion_tokens"]),
                str(raw_usage.get("source", "upstream")),
            )
        return cls(
            trajectory_id=data["trajectory_id"],
            step=int(data["step"]),
            route=data["route"],
            target=data["target"],
            reason=data["reason"],
            score=data.get("score"),
            model=data["model"],
            at=float(data.get("at", 0.0)),
            attempt=int(data.get("attempt", 1)),
            fallback=bool(data.get("fallback", False)),
            failures=[(f["target"], f["kind"], f.get("http_status")) for f in data.get("failures", [])],
            status=data.get("status", "ok"),
            http_status=int(data.get("http_status", 200)),
            usage=usage,
            cost_usd=float(data.get("cost_usd", 0.0)),
            counterfactual_usd=float(data.get("counterfactual_usd", 0.0)),
            counterfactual_cached_tokens=int(data.get("counterfactual_cached_tokens", 0)),
            latency_s=float(data.get("latency_s", 0.0)),
            ttft_s=float(data.get("ttft_s", 0.0)),
            tools=list(data.get("tools", [])),
            error_signals=list(data.get("error_signals", [])),
            failed_before=data.get("failed_before"),
            failed_before_action=data.get("failed_before_action"),
            inner=[InnerCall.from_dict(call) for call in data.get("inner", [])],
            features=data.get("features"),
            exposed=list(data.get("exposed", [])),
            redacted=int(data.get("redacted", 0)),
            action=data.get("action"),
            excerpt=data.get("excerpt"),
            error=data.get("error"),
            stitch=data.get("stitch"),
        )

    def pack(self) -> bytes:
        """The record as the memory store keeps it: one compact JSON array, positional (every
        field but the trajectory id, which the store knows, in declaration order, so a new field
        cannot be left out), about 300 bytes instead of ~750 as an object."""
        values = list(_PACKED_VALUES(self))
        values[_USAGE_AT] = _usage_list(values[_USAGE_AT])
        inner = values[_INNER_AT]
        values[_INNER_AT] = [[c.purpose, c.target, _usage_list(c.usage), c.cost_usd, c.status] for c in inner]
        return orjson.dumps(values)

    @classmethod
    def unpack(cls, trajectory_id: str, packed: bytes) -> StepRecord:
        values = orjson.loads(packed)
        kept = {name: _unpacked_value(name, value) for name, value in zip(_PACKED, values, strict=True)}
        return cls(trajectory_id=trajectory_id, **kept)


def _unpacked_value(name: str, value: Any) -> Any:
    if value is None:
        return None
    if name == "usage":
        return Usage(*value)
    if name == "inner":
        return [InnerCall(p, t, None if u is None else Usage(*u), c, st) for p, t, u, c, st in value]
    if name == "cache_prefix":
        return (value[0], value[1])
    if name == "failures":
        return [(target, kind, status) for target, kind, status in value]
    return value


# The fields `pack` keeps, in order: all of StepRecord's but the trajectory id.
_PACKED = tuple(f.name for f in fields(StepRecord) if f.name != "trajectory_id")
# All of them read in one call (a getattr per field cost a fifth of a step's recording); the two
# that are not plain JSON are then replaced by their lists.
_PACKED_VALUES = operator.attrgetter(*_PACKED)
_USAGE_AT, _INNER_AT = _PACKED.index("usage"), _PACKED.index("inner")


def _usage_list(usage: Usage | None) -> list[Any] | None:
    return None if usage is None else [usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens, usage.source]

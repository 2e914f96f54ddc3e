"""Tokens and dollars of a step, with the all-cloud counterfactual.

Cost follows EC2-Bench: `(raw_input × p_in + cached × p_cached + output × p_out) / 1e6`, with
raw input = prompt tokens − cached tokens. The counterfactual prices the same token counts at
the cloud's prices (the cloud's tokenizer would count a little differently; we say so).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from router.settings import Prices


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    # "upstream" when the upstream reported it, "estimated" when the gateway had to guess.
    source: str = "upstream"

    @classmethod
    def from_openai(cls, usage: Any) -> Usage | None:
        if not isinstance(usage, dict):
            return None
        details = usage.get("prompt_tokens_details") or {}
        cached = details.get("cached_tokens") if isinstance(details, dict) else 0
        try:
            return cls(
                prompt_tokens=int(usage.get("prompt_tokens") or 0),
                cached_tokens=int(cached or 0),
                completion_tokens=int(usage.get("completion_tokens") or 0),
            )
        except (TypeError, ValueError):
            return None


def cost_usd(usage: Usage, prices: Prices) -> float:
    raw_input = max(usage.prompt_tokens - usage.cached_tokens, 0)
    return (
        raw_input * prices.input
        + usage.cached_tokens * prices.cached_input_or_input
        + usage.completion_tokens * prices.output
    ) / 1e6


@dataclass(slots=True)
class StepRecord:
    """One step as the ledger keeps it."""

    trajectory_id: str
    step: int
    route: str
    target: str
    reason: str
    score: float | None
    model: str
    fallback: bool = False
    status: str = "ok"  # ok, error, cancelled
    http_status: int = 200
    usage: Usage | None = None
    cost_usd: float = 0.0
    cloud_cost_usd: float = 0.0  # the same tokens at the cloud's prices
    latency_s: float = 0.0
    ttft_s: float = 0.0
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "route": self.route,
            "target": self.target,
            "reason": self.reason,
            "score": self.score,
            "model": self.model,
            "fallback": self.fallback,
            "status": self.status,
            "http_status": self.http_status,
            "usage": None
            if self.usage is None
            else {
                "prompt_tokens": self.usage.prompt_tokens,
                "cached_tokens": self.usage.cached_tokens,
                "completion_tokens": self.usage.completion_tokens,
                "source": self.usage.source,
            },
            "cost_usd": self.cost_usd,
            "cloud_cost_usd": self.cloud_cost_usd,
            "latency_s": round(self.latency_s, 6),
            "ttft_s": round(self.ttft_s, 6),
            "error": self.error,
        }

"""Step routing by edge uncertainty (EC2-Bench; GlimpRouter's signal).

The edge is probed with the step for one token with `logprobs` and `top_logprobs`; the Shannon
entropy (nats) of the top-k distribution of that token, renormalised, above the threshold sends
the step to the cloud. EC2-Bench used τ ≈ 1.7 for a 9B edge and 1.3 for a 27B one. An edge that
returns no logprobs (or a failed probe) gets the configured fallback target and a counter.
"""

from __future__ import annotations

import math
from typing import Any

from router.config.strategies import EntropyRoute
from router.inner import InnerCallError
from router.policies.base import AsksModels, Builder, Decision, Reason, RouteBase, Target
from router.policies.common import count_failure


def top_entropy(logprobs: list[float]) -> float:
    """Entropy (nats) of the distribution the top-k log-probabilities give, renormalised."""
    if not logprobs:
        raise ValueError("no logprobs")
    peak = max(logprobs)
    weights = [math.exp(lp - peak) for lp in logprobs]
    total = sum(weights)
    return -sum((w / total) * math.log(w / total) for w in weights if w > 0)


def first_token_logprobs(answer: dict[str, Any]) -> list[float] | None:
    try:
        content = answer["choices"][0]["logprobs"]["content"]
        return [float(entry["logprob"]) for entry in content[0]["top_logprobs"]] or None
    except (KeyError, IndexError, TypeError, ValueError):
        return None


class EntropyPolicy:
    def __init__(self, settings: EntropyRoute) -> None:
        self._settings = settings

    async def decide(self, step: AsksModels) -> Decision:
        settings = self._settings
        probe = {**step.request.raw, "max_tokens": 1, "logprobs": True, "top_logprobs": settings.top_logprobs}
        probe.pop("max_completion_tokens", None)
        try:
            answer = await step.calls.complete("edge", probe, "probe")
        except InnerCallError:
            count_failure(step, "probe")
            return Decision(target=settings.fallback, reason=Reason.INNER_FAILED)
        logprobs = first_token_logprobs(answer)
        if logprobs is None:
            count_failure(step, "probe_unreadable")
            verdict = (len(step.calls.made) - 1, "no_logprobs")
            return Decision(target=settings.fallback, reason=Reason.INNER_FAILED, verdicts=(verdict,))
        entropy = top_entropy(logprobs)
        target: Target = "cloud" if entropy > settings.threshold else "edge"
        return Decision(target=target, reason=Reason.ENTROPY, score=round(entropy, 4))


# The route settings this module's policy is built from (router/policies/registry.py).
BUILDS: dict[type[RouteBase], Builder] = {EntropyRoute: EntropyPolicy}

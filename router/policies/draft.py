"""Draft-and-verify (reward-guided speculative decoding, EdgeWise's RSD): the edge drafts the
step, a verifier scores the draft, and below the threshold the cloud regenerates the step.

The verifier is a model asked in words (the edge itself, or a named upstream) for a 0–1 score
of the draft's correctness. The draft's tokens are in the step's ledger either way."""

from __future__ import annotations

from router.config.strategies import DraftRoute
from router.context import flatten, last_k
from router.inner import InnerCallError
from router.policies.base import AsksModels, Builder, Decision, Reason, RouteBase
from router.policies.common import count_failure, edge_answer, parse_score, prepared
from router.policies.prompts import VERIFY
from router.protocol.text import first_message, message_text


class DraftPolicy:
    def __init__(self, settings: DraftRoute) -> None:
        self._settings = settings

    async def decide(self, step: AsksModels) -> Decision:
        settings = self._settings
        edge = await edge_answer(step, "draft")
        if edge is None:
            return Decision(target="cloud", reason=Reason.INNER_FAILED)
        draft, index = edge
        proposal = first_message(draft)
        quoted = step.calls.shown(settings.verifier, [*last_k(step.request.messages, settings.k), proposal])
        shown = flatten(quoted, settings.max_chars)
        body = {"messages": [{"role": "user", "content": VERIFY + shown}], "max_completion_tokens": 8, "temperature": 0}
        try:
            verdict = await step.calls.complete(settings.verifier, body, "verify")
            score = parse_score(message_text(verdict))
            if score is None:
                count_failure(step, "verify_unreadable")
        except InnerCallError:
            count_failure(step, "verify")
            score = None
        if score is None:
            return Decision(
                target=settings.on_failure,
                reason=Reason.INNER_FAILED,
                answer=prepared(draft, index) if settings.on_failure == "edge" else None,
            )
        if score >= settings.threshold:
            return Decision(target="edge", reason=Reason.DRAFT_ACCEPTED, score=score, answer=prepared(draft, index))
        return Decision(target="cloud", reason=Reason.DRAFT_REJECTED, score=score)


# The route settings this module's policy is built from (router/policies/registry.py).
BUILDS: dict[type[RouteBase], Builder] = {DraftRoute: DraftPolicy}

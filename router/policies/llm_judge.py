"""LLM-judge delegation (EdgeWise): a model asked in words whether the step needs the stronger
model. `binary` reads a yes/no; `score` reads a 0–1 number against the threshold. The judge sees
a configurable context: the task only, the last k steps, or the full history. A reply that
cannot be parsed takes the configured default (EC2-Bench's router defaulted to the cloud)."""

from __future__ import annotations

from router.config.strategies import LLMJudgeRoute
from router.context import flatten, last_k
from router.inner import InnerCallError
from router.policies.base import AsksModels, Builder, Decision, Reason, RouteBase
from router.policies.common import count_failure, parse_score, parse_yes_no
from router.policies.prompts import BINARY, SCORE
from router.protocol.text import message_text, task_of


class LLMJudgePolicy:
    def __init__(self, settings: LLMJudgeRoute) -> None:
        self._settings = settings

    def _prompt(self, step: AsksModels) -> str:
        settings = self._settings
        # Quoted redacted where the judge is the cloud on a redacting route (InnerCalls.shown).
        messages = step.calls.shown(settings.judge, step.request.messages)
        if settings.sees == "task":
            seen = f"TASK:\n{task_of(messages)}"
        elif settings.sees == "last_k":
            seen = flatten(last_k(messages, settings.k), settings.max_chars)
        else:
            seen = flatten(messages, settings.max_chars)
        return (BINARY if settings.mode == "binary" else SCORE) + seen

    async def decide(self, step: AsksModels) -> Decision:
        settings = self._settings
        body = {
            "messages": [{"role": "user", "content": self._prompt(step)}],
            "max_completion_tokens": 8,
            "temperature": 0,
        }
        try:
            answer = await step.calls.complete(settings.judge, body, "judge")
        except InnerCallError:
            count_failure(step, "judge")
            return Decision(target=settings.on_failure, reason=Reason.INNER_FAILED)
        text = message_text(answer)
        if settings.mode == "binary":
            verdict = parse_yes_no(text)
            if verdict is None:
                count_failure(step, "judge_unreadable")
                return Decision(target=settings.on_failure, reason=Reason.INNER_FAILED)
            return Decision(target="cloud" if verdict else "edge", reason=Reason.LLM_JUDGE, score=float(verdict))
        score = parse_score(text)
        if score is None:
            count_failure(step, "judge_unreadable")
            return Decision(target=settings.on_failure, reason=Reason.INNER_FAILED)
        return Decision(target="cloud" if score >= settings.threshold else "edge", reason=Reason.LLM_JUDGE, score=score)


# The route settings this module's policy is built from (router/policies/registry.py).
BUILDS: dict[type[RouteBase], Builder] = {LLMJudgeRoute: LLMJudgePolicy}

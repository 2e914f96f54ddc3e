"""Adaptive assistance (EC2-Bench): the gateway offers the edge an `advisor` tool. When the edge
calls it, the gateway asks the cloud with the task and a flattened, truncated transcript, gives
the advice back to the edge as the tool's result, and relays the edge's next step to the agent:
one agent step, however many inner calls. The agent never sees the advisor tool."""

from __future__ import annotations

from typing import Any

from router.config.strategies import AdvisorRoute
from router.context import flatten
from router.inner import InnerCallError
from router.policies.base import AsksModels, Builder, Decision, Reason, RouteBase
from router.policies.common import called_tools, calls_tool, count_failure, edge_answer, function_tool, prepared
from router.policies.constraints import cloud_refusal
from router.policies.prompts import ADVICE
from router.protocol.text import first_message, message_text, task_of

DESCRIPTION = "Ask a stronger model for advice on how to proceed. Use it when you are stuck or unsure."


class AdvisorPolicy:
    def __init__(self, settings: AdvisorRoute) -> None:
        self._settings = settings
        self._tool = function_tool(settings.tool_name, DESCRIPTION)

    async def decide(self, step: AsksModels) -> Decision:
        settings = self._settings
        edge = await edge_answer(step, "edge", [self._tool])
        if edge is None:
            return Decision(target="edge", reason=Reason.INNER_FAILED)
        answer, index = edge
        if not calls_tool(answer, settings.tool_name):
            return Decision(target="edge", reason=Reason.EDGE_ANSWERED, answer=prepared(answer, index))
        if cloud_refusal(settings.constraints, step.trajectory, step.step) is not None:
            advice = "The advisor is not available for this run. Continue on your own."
        else:
            advice = await self._advice(step)
        call = next(c for c in called_tools(answer) if (c.get("function") or {}).get("name") == settings.tool_name)
        asked: dict[str, Any] = {**first_message(answer), "tool_calls": [call]}
        asked.setdefault("content", None)
        messages = [
            *step.request.messages,
            asked,
            {"role": "tool", "tool_call_id": call.get("id", "advisor"), "content": advice},
        ]
        # The final call carries the agent's own tools only, so its answer is a step the agent knows.
        return Decision(target="edge", reason=Reason.ADVISED, patch={"messages": messages})

    async def _advice(self, step: AsksModels) -> str:
        settings = self._settings
        messages = step.calls.shown("cloud", step.request.messages)
        prompt = ADVICE.format(
            words=settings.max_words, task=task_of(messages), transcript=flatten(messages, settings.max_chars)
        )
        body = {"messages": [{"role": "user", "content": prompt}], "max_completion_tokens": settings.max_words * 2}
        try:
            return message_text(await step.calls.complete("cloud", body, "advisor")) or "No advice."
        except InnerCallError:
            count_failure(step, "advisor")
            return "The advisor could not be reached. Continue on your own."


# The route settings this module's policy is built from (router/policies/registry.py).
BUILDS: dict[type[RouteBase], Builder] = {AdvisorRoute: AdvisorPolicy}

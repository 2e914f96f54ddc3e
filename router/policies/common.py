"""Pieces several strategies share: asking the edge first, a tool the agent never sees, and
reading what a model answered."""

from __future__ import annotations

import re
from typing import Any

from router.inner import InnerCallError
from router.policies.base import AsksModels, PreparedAnswer
from router.protocol.text import first_message


def function_tool(name: str, description: str) -> dict[str, Any]:
    """A tool without arguments that the gateway offers the edge (the agent never sees it)."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
        },
    }


async def ask_edge(
    step: AsksModels, purpose: str, extra_tools: list[dict[str, Any]] | None = None
) -> tuple[dict[str, Any], int]:
    """The edge's answer to the step as the agent sent it (plus gateway tools), and the index of
    that inner call (so that the pipeline can make it the step's main call)."""
    body = dict(step.request.raw)
    if extra_tools:
        body["tools"] = [*(body.get("tools") or []), *extra_tools]
        # A client's forced tool choice names its own tool; with gateway tools the edge must
        # be free to pick ours.
        if isinstance(body.get("tool_choice"), dict):
            body["tool_choice"] = "auto"
    answer = await step.calls.complete("edge", body, purpose)
    return answer, len(step.calls.made) - 1


async def edge_answer(
    step: AsksModels, purpose: str, extra_tools: list[dict[str, Any]] | None = None
) -> tuple[dict[str, Any], int] | None:
    """`ask_edge`, or None when the inner call failed (counted as the strategy's fallback under
    `purpose`): every strategy that asks the edge first falls back the same way."""
    try:
        return await ask_edge(step, purpose, extra_tools)
    except InnerCallError:
        count_failure(step, purpose)
        return None


def count_failure(step: AsksModels, kind: str) -> None:
    """Count an inner call the strategy caught and fell back from (`kind`: the call's purpose,
    or `<purpose>_unreadable` when it answered but its answer could not be read)."""
    step.metrics.policy_failures.labels(step.route, kind).inc()


def called_tools(answer: dict[str, Any]) -> list[dict[str, Any]]:
    calls = first_message(answer).get("tool_calls") or []
    return [call for call in calls if isinstance(call, dict)]


def calls_tool(answer: dict[str, Any], name: str) -> bool:
    return any((call.get("function") or {}).get("name") == name for call in called_tools(answer))


def prepared(answer: dict[str, Any], index: int) -> PreparedAnswer:
    return PreparedAnswer(body=answer, inner_index=index)


_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(%)?")


def parse_score(text: str) -> float | None:
    """The first number in a model's answer read as a 0–1 score (a percentage is scaled);
    None when there is none or it is out of range."""
    for match in _NUMBER.finditer(text):
        value = float(match.group(1))
        if match.group(2) or (1 < value <= 100 and "/100" in text):
            value /= 100
        elif 1 < value <= 10 and "/10" in text:
            value /= 10
        if 0 <= value <= 1:
            return value
    return None


def parse_yes_no(text: str) -> bool | None:
    """True for a yes, False for a no, None when the answer says neither (or both first)."""
    words = re.findall(r"[a-z]+", text.lower())
    for word in words[:40]:
        if word in ("yes", "cloud", "delegate", "true"):
            return True
        if word in ("no", "edge", "false"):
            return False
    return None

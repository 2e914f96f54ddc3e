"""Escalation on failure: the edge answers, and the cloud takes over when the edge is failing.

Before the step: N consecutive tool results with error signals, or the same action repeated,
send the step to the cloud. After the edge answers: an invalid tool call (arguments that are
not JSON, a tool the request does not offer, a missing required argument or a wrong type) is
redone by the cloud before the agent sees it."""

from __future__ import annotations

from typing import Any

import orjson

from judge.signals import quick_error_signals as error_signals
from router.config.strategies import EscalationRoute
from router.policies.base import AsksModels, Builder, Decision, Reason, RouteBase
from router.policies.common import called_tools, edge_answer, prepared
from router.protocol.text import text_of

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


def invalid_tool_call(answer: dict[str, Any], tools: list[dict[str, Any]] | None) -> str | None:
    """Why the answer's tool calls are invalid for the request's tools, or None."""
    schemas = {
        (t.get("function") or {}).get("name"): (t.get("function") or {}).get("parameters") or {}
        for t in tools or []
        if isinstance(t, dict)
    }
    for call in called_tools(answer):
        function = call.get("function") or {}
        name = function.get("name")
        if schemas and name not in schemas:
            return f"unknown tool {name!r}"
        try:
            arguments = orjson.loads(function.get("arguments") or "{}")
        except orjson.JSONDecodeError:
            return f"arguments of {name!r} are not JSON"
        schema = schemas.get(name) or {}
        if not isinstance(arguments, dict):
            return f"arguments of {name!r} are not an object"
        for required in schema.get("required") or []:
            if required not in arguments:
                return f"{name!r} is missing the argument {required!r}"
        for key, value in arguments.items():
            expected = ((schema.get("properties") or {}).get(key) or {}).get("type")
            kinds = _JSON_TYPES.get(expected) if isinstance(expected, str) else None
            if kinds is not None and (
                not isinstance(value, kinds) or (expected != "boolean" and isinstance(value, bool))
            ):
                return f"argument {key!r} of {name!r} is not of type {expected}"
    return None


def failing(messages: list[dict[str, Any]], errors_in_a_row: int) -> bool:
    """The last `errors_in_a_row` tool results all show errors, or the last two actions are equal."""
    results = [m for m in messages[-4 * errors_in_a_row :] if m.get("role") == "tool"]
    recent = results[-errors_in_a_row:]
    if len(recent) == errors_in_a_row and all(error_signals(text_of(m.get("content"))) for m in recent):
        return True
    actions = [m.get("tool_calls") for m in messages[-12:] if m.get("role") == "assistant" and m.get("tool_calls")]
    if len(actions) >= 2:
        last, before = actions[-1] or [], actions[-2] or []
        strip = [[(c.get("function") or {}).get("name"), (c.get("function") or {}).get("arguments")] for c in last]
        earlier = [[(c.get("function") or {}).get("name"), (c.get("function") or {}).get("arguments")] for c in before]
        return strip == earlier
    return False


class EscalationPolicy:
    def __init__(self, settings: EscalationRoute) -> None:
        self._settings = settings

    async def decide(self, step: AsksModels) -> Decision:
        if failing(step.request.messages, self._settings.errors_in_a_row):
            return Decision(target="cloud", reason=Reason.FAILING)
        edge = await edge_answer(step, "edge")
        if edge is None:
            return Decision(target="cloud", reason=Reason.INNER_FAILED)
        answer, index = edge
        problem = invalid_tool_call(answer, step.request.raw.get("tools"))
        if problem is not None:
            verdict = (index, f"invalid: {problem}")
            return Decision(target="cloud", reason=Reason.INVALID_TOOL_CALL, verdicts=(verdict,))
        return Decision(target="edge", reason=Reason.EDGE_ANSWERED, answer=prepared(answer, index))


# The route settings this module's policy is built from (router/policies/registry.py).
BUILDS: dict[type[RouteBase], Builder] = {EscalationRoute: EscalationPolicy}

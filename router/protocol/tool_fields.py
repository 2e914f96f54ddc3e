"""Checks on a chat-completions request's tool definitions and tool choice, member by member.

A tool or a choice of the wrong shape, sent on, is the upstream's 400 at best and its crash at
worst (a 5xx relayed for the client's mistake, or a failover that sends the same mistake to the
other target); a `tool_choice` naming no function is read by some servers as `auto`. The
shapes are the OpenAI API reference's: a tool is a `function` or a `custom` tool, a choice
names a function, a custom tool, or the tools allowed."""

from __future__ import annotations

from typing import Any

from router.protocol.fields import Kind, check, one_of

CHOICE_TYPES = one_of("function", "custom", "allowed_tools")

# What each kind of tool holds, checked when the tool is of that kind (a parent before its
# members, as `check` reads them).
_TOOL_MEMBERS: dict[str, tuple[dict[str, Kind], frozenset[str]]] = {
    "function": (
        {
            "function": "object",
            "function.name": "name",
            "function.description": "string",
            "function.parameters": "object",
            "function.strict": "bool",
        },
        frozenset(("function", "function.name")),
    ),
    "custom": (
        {"custom": "object", "custom.name": "name", "custom.description": "string", "custom.format": "object"},
        frozenset(("custom", "custom.name")),
    ),
}
_CHOICE_MEMBERS: dict[str, tuple[dict[str, Kind], frozenset[str]]] = {
    "function": ({"function": "object", "function.name": "name"}, frozenset(("function", "function.name"))),
    "custom": ({"custom": "object", "custom.name": "name"}, frozenset(("custom", "custom.name"))),
    "allowed_tools": (
        {"allowed_tools": "object", "allowed_tools.mode": "string", "allowed_tools.tools": "objects"},
        frozenset(("allowed_tools", "allowed_tools.mode", "allowed_tools.tools")),
    ),
}


def check_tools(tools: list[dict[str, Any]]) -> None:
    """Raise a 400 naming the first wrong member of the request's tools (an array of objects)."""
    for index, tool in enumerate(tools):
        # A function tool without its `type` is read as vLLM reads it (the type defaults to
        # `function` there): a client that leaves it out worked before and keeps working.
        kind = tool.get("type", "function")
        # Every request of an agent carries its tools (30 and more): a right function tool is
        # seen in well under a microsecond; the table's walk (5 µs a tool) is for the others.
        if kind == "function" and _right_function(tool.get("function")):
            continue
        where = f"tools[{index}]."
        if type(kind) is str and kind in _TOOL_MEMBERS:
            fields, required = _TOOL_MEMBERS[kind]
            check(tool, fields, required, where)
        else:
            # Other kinds (a provider's hosted tools: `web_search`, …) pass unchanged, the
            # upstream's to read; their type must still be a name.
            check(tool, {"type": "name"}, _TYPE_REQUIRED, where)


def _right_function(function: Any) -> bool:
    """Whether a function tool's `function` is what `_TOOL_MEMBERS` asks, in one pass."""
    if type(function) is not dict:
        return False
    name = function.get("name")
    description = function.get("description")
    parameters = function.get("parameters")
    strict = function.get("strict")
    return (
        type(name) is str
        and name != ""
        and (description is None or type(description) is str)
        and (parameters is None or type(parameters) is dict)
        and (strict is None or type(strict) is bool)
    )


def check_tool_choice(choice: dict[str, Any]) -> None:
    """Raise a 400 naming the first wrong member of an object `tool_choice`: `{"type":
    "function"}` without the function it forces is no choice an upstream can follow."""
    function = choice.get("function")
    if choice.get("type") == "function" and type(function) is dict:
        name = function.get("name")
        if type(name) is str and name:
            return  # the usual choice, seen without the table's walk
    _check_typed(choice, "tool_choice", CHOICE_TYPES, _CHOICE_MEMBERS)


def _check_typed(
    item: dict[str, Any], where: str, types: frozenset[str], members: dict[str, tuple[dict[str, Kind], frozenset[str]]]
) -> None:
    """`item`'s `type` is one of `types`, and the members of its type are what they must be;
    each named with `where` before it (`tools[0].function.name`)."""
    check(item, {"type": types}, _TYPE_REQUIRED, f"{where}.")
    fields, required = members[item["type"]]
    check(item, fields, required, f"{where}.")


_TYPE_REQUIRED = frozenset(("type",))


# The legacy `functions` / `function_call` (before `tools`): still in the reference, still sent.
_FUNCTIONS: dict[str, Kind] = {
    "functions[].name": "name",
    "functions[].description": "string",
    "functions[].parameters": "object",
    "function_call.name": "name",
}
_FUNCTIONS_REQUIRED = frozenset(("functions[].name", "function_call.name"))
FUNCTION_CALL_MODES = one_of("none", "auto")


def check_tool_fields(raw: dict[str, Any]) -> None:
    """The members of a chat request's `tools`, `tool_choice`, `functions` and `function_call`
    (their own types already checked by `check_fields`); a wrong one is a 400 naming it."""
    tools = raw.get("tools")
    if type(tools) is list:
        check_tools(tools)
    choice = raw.get("tool_choice")
    if type(choice) is dict:
        check_tool_choice(choice)
    if raw.get("functions") is not None or raw.get("function_call") is not None:
        if type(raw.get("function_call")) is str:
            check(raw, {"function_call": FUNCTION_CALL_MODES})
        check(raw, _FUNCTIONS, _FUNCTIONS_REQUIRED)

"""A Responses request's tools as chat tools, and a chat answer's tool calls back as output items.

Responses has tool shapes chat lacks; each becomes a chat function and its call goes back in the
shape the client dispatches:
- **namespaces** (`{"type": "namespace", "name": "multi_agent_v1", "tools": [...]}`: Codex's
  sub-agent tools, its dynamic and MCP tools): each function is `<namespace>__<name>`, and its
  call a `function_call` with its own name and its `namespace`;
- **custom (freeform) tools** (`{"type": "custom", "name": "apply_patch", "format": {grammar}}`:
  Codex's file editor): a function of one string argument `input`, described with its grammar,
  and its call a `custom_tool_call` whose `input` is that string.
The history's calls of both carry what they are (`namespace`, the item type), so they translate
without the tools. Hosted tools (`web_search`, `file_search`, `tool_search`, ...) have no chat
form: a chat model cannot call them, and they are left out (the Codex client page says so).
"""

from __future__ import annotations

from typing import Any

import orjson

from router.errors import bad_request
from router.protocol.fields import shown
from router.surfaces.responses.ids import item_id

SEPARATOR = "__"
CUSTOM_INPUT = "input"  # the one argument of a custom tool's chat function
CUSTOM_PARAMETERS = {
    "type": "object",
    "properties": {CUSTOM_INPUT: {"type": "string", "description": "the tool's whole input, as free text"}},
    "required": [CUSTOM_INPUT],
    "additionalProperties": False,
}


class ChatTools(list[dict[str, Any]]):
    """The chat body's `tools` as the answer reads them: which flat name stands for which
    namespace's function, and which for a custom tool (the answer gives each its shape back)."""

    def __init__(
        self, tools: list[dict[str, Any]], namespaces: dict[str, tuple[str, str]], custom: frozenset[str]
    ) -> None:
        super().__init__(tools)
        self.namespaces = namespaces  # flat name -> (namespace, the function's own name)
        self.custom = custom  # flat names of custom tools


def flat_name(namespace: str | None, name: str) -> str:
    """The chat function name of `name` in `namespace` (itself without one)."""
    return f"{namespace}{SEPARATOR}{name}" if namespace else name


def _custom_description(tool: dict[str, Any]) -> str:
    """A custom tool's description for a chat model: its own, then how its input is written."""
    lines = [str(tool.get("description") or "").strip(), f"Put the whole input as text in `{CUSTOM_INPUT}`."]
    form = tool.get("format")
    if isinstance(form, dict) and form.get("type") == "grammar" and isinstance(form.get("definition"), str):
        lines.append(f"The input follows this grammar ({form.get('syntax', 'grammar')}):\n{form['definition']}")
    return "\n\n".join(line for line in lines if line)


def _walk(tools: Any) -> list[tuple[dict[str, Any], str | None, str]]:
    """Every tool that becomes a chat function: (the tool, its namespace, where it is)."""
    found: list[tuple[dict[str, Any], str | None, str]] = []
    for index, tool in enumerate(tools if isinstance(tools, list) else ()):
        if not isinstance(tool, dict):
            continue
        kind, at = tool.get("type"), f"tools[{index}]"
        if kind in ("function", "custom"):
            found.append((tool, None, at))
        elif kind == "namespace":
            namespace, inner = tool.get("name"), tool.get("tools")
            if not isinstance(namespace, str) or not namespace or not isinstance(inner, list):
                raise bad_request(f"{at}: a namespace needs a name and a tools array", param=at)
            for position, member in enumerate(inner):
                if isinstance(member, dict) and member.get("type", "function") in ("function", "custom"):
                    found.append((member, namespace, f"{at}.tools[{position}]"))
    return found


def chat_tools(tools: list[Any]) -> list[dict[str, Any]]:
    """The chat functions of a Responses `tools` array; two tools that would have one chat name
    are a 400 that names it."""
    out: list[dict[str, Any]] = []
    names: set[str] = set()
    for tool, namespace, at in _walk(tools):
        name = tool.get("name")
        if not isinstance(name, str) or not name:
            raise bad_request(f"{at}.name must be a non-empty string", param=f"{at}.name")
        flat = flat_name(namespace, name)
        if flat in names:
            raise bad_request(f"{at}: two tools would be named {shown(flat)} for a chat model", param=at)
        names.add(flat)
        if tool.get("type") == "custom":
            function = {"name": flat, "description": _custom_description(tool), "parameters": CUSTOM_PARAMETERS}
        else:
            function = {"name": flat, **{k: tool[k] for k in ("description", "parameters", "strict") if k in tool}}
        out.append({"type": "function", "function": function})
    return out


def answer_view(body: dict[str, Any], chat: dict[str, Any]) -> dict[str, Any]:
    """The chat body as the answer reads it: its tools know their shapes (a copy for the answer
    only; the chat body sent upstream keeps a plain list). Unchanged without such tools."""
    tools = body.get("tools")
    if not isinstance(tools, list) or not any(
        isinstance(t, dict) and t.get("type") in ("namespace", "custom") for t in tools
    ):
        return chat
    namespaces: dict[str, tuple[str, str]] = {}
    custom: set[str] = set()
    for tool, namespace, _ in _walk(tools):
        flat = flat_name(namespace, str(tool.get("name")))
        if namespace:
            namespaces[flat] = (namespace, str(tool.get("name")))
        if tool.get("type") == "custom":
            custom.add(flat)
    return {**chat, "tools": ChatTools(chat.get("tools") or [], namespaces, frozenset(custom))}


def answer_tools(chat: dict[str, Any] | None) -> ChatTools | None:
    """The answer's view of the chat body's tools (None: plain functions only)."""
    tools = (chat or {}).get("tools")
    return tools if isinstance(tools, ChatTools) else None


def custom_input(arguments: str) -> str:
    """A custom tool's input from its chat call's arguments (a model that wrote the text
    itself instead of the JSON object: that text)."""
    try:
        parsed = orjson.loads(arguments) if arguments else {}
    except orjson.JSONDecodeError:
        return arguments
    value = parsed.get(CUSTOM_INPUT) if isinstance(parsed, dict) else None
    return value if isinstance(value, str) else arguments


def output_item(
    response_id: str, place: int, call_id: str, name: str, arguments: str, tools: ChatTools | None
) -> dict[str, Any]:
    """A chat tool call as a Responses output item, at `place` of the response `response_id`
    (what its id is made of: ids.py): a `function_call` (in its namespace when it has one) or a
    `custom_tool_call` (`arguments`: what the model wrote, whole; none is `{}`)."""
    own = name
    namespace: str | None = None
    if tools is not None and name in tools.namespaces:
        namespace, own = tools.namespaces[name]
    if tools is not None and name in tools.custom:
        item = {"type": "custom_tool_call", "id": item_id("ctc", response_id, place), "call_id": call_id, "name": own}
        item["input"] = custom_input(arguments)
    else:
        item = {"type": "function_call", "id": item_id("fc", response_id, place), "call_id": call_id, "name": own}
        # A call without arguments (some servers give "") has the JSON object OpenAI gives it:
        # clients parse the arguments as one (the openai SDK's parse helpers, Codex).
        item["arguments"] = arguments if arguments.strip() else "{}"
    if namespace is not None:
        item["namespace"] = namespace
    item["status"] = "completed"
    return item


def chat_tool_choice(choice: Any) -> Any:
    """A Responses `tool_choice` in chat's shape: a named function or custom tool (in its
    namespace or not), or the tools a step may call (`allowed_tools`: Responses lists them flat
    beside its `mode`, chat nests both under `allowed_tools`)."""
    if not isinstance(choice, dict):
        return choice
    if choice.get("type") in ("function", "custom"):
        return _named(choice)
    if choice.get("type") == "allowed_tools":
        nested = choice.get("allowed_tools")
        given = nested if isinstance(nested, dict) else choice
        tools = given.get("tools")
        if isinstance(tools, list):
            refs = [_named(tool) if _responses_ref(tool) else tool for tool in tools]
            return {"type": "allowed_tools", "allowed_tools": {"mode": given.get("mode"), "tools": refs}}
    return choice


def _named(ref: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": flat_name(ref.get("namespace"), str(ref.get("name", "")))}}


def _responses_ref(tool: Any) -> bool:
    """A tool named as Responses names it (`{"type": "function", "name": …}`), not as chat does."""
    return isinstance(tool, dict) and tool.get("type") in ("function", "custom") and "function" not in tool

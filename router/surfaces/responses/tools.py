"""A Responses request's tools as chat tools, and a chat answer's call names back.

Responses groups tools in namespaces (`{"type": "namespace", "name": "multi_agent_v1", "tools":
[...]}`: Codex's sub-agent tools, its dynamic and MCP tools); chat has only flat functions. Each
function of a namespace becomes one chat function named `<namespace>__<name>`, and the answer's
call of that name goes back as a `function_call` with its `namespace`, as Codex dispatches it.
The history's calls carry their namespace, so they flatten the same way without the tools.

Tools of other types (hosted ones such as `web_search` or `file_search`) have no chat form: a
chat model cannot call them, and they are left out (the docs' API page says so).
"""

from __future__ import annotations

from typing import Any

from router.errors import bad_request

SEPARATOR = "__"


class ChatTools(list[dict[str, Any]]):
    """The chat body's `tools` as the answer reads them: which flat name stands for which
    namespace's function (the answer names the namespace back)."""

    def __init__(self, tools: list[dict[str, Any]], namespaces: dict[str, tuple[str, str]]) -> None:
        super().__init__(tools)
        self.namespaces = namespaces  # flat name -> (namespace, the function's own name)


def flat_name(namespace: str | None, name: str) -> str:
    """The chat function name of `name` in `namespace` (itself without one)."""
    return f"{namespace}{SEPARATOR}{name}" if namespace else name


def _function(tool: dict[str, Any], name: str) -> dict[str, Any]:
    function = {k: tool[k] for k in ("description", "parameters", "strict") if k in tool}
    return {"type": "function", "function": {"name": name, **function}}


def chat_tools(tools: list[Any]) -> list[dict[str, Any]]:
    """The chat functions of a Responses `tools` array (namespaces flattened); two tools that
    would have one chat name are a 400 that names it."""
    out: list[dict[str, Any]] = []
    namespaces: dict[str, tuple[str, str]] = {}
    names: set[str] = set()

    def add(tool: dict[str, Any], namespace: str | None, at: str) -> None:
        name = tool.get("name")
        if not isinstance(name, str) or not name:
            raise bad_request(f"{at}.name must be a non-empty string", param=f"{at}.name")
        flat = flat_name(namespace, name)
        if flat in names:
            raise bad_request(f"{at}: two tools would be named {flat!r} for a chat model", param=at)
        names.add(flat)
        if namespace:
            namespaces[flat] = (namespace, name)
        out.append(_function(tool, flat))

    for index, tool in enumerate(tools):
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "function":
            add(tool, None, f"tools[{index}]")
        elif tool.get("type") == "namespace":
            namespace = tool.get("name")
            inner = tool.get("tools")
            if not isinstance(namespace, str) or not namespace or not isinstance(inner, list):
                raise bad_request(
                    f"tools[{index}]: a namespace needs a name and a tools array", param=f"tools[{index}]"
                )
            for position, member in enumerate(inner):
                if isinstance(member, dict) and member.get("type", "function") == "function":
                    add(member, namespace, f"tools[{index}].tools[{position}]")
    return out


def namespaced(tools: Any) -> dict[str, tuple[str, str]]:
    """The flat chat names of a Responses `tools` array's namespaced functions (checked by
    `chat_tools` already)."""
    names: dict[str, tuple[str, str]] = {}
    for tool in tools if isinstance(tools, list) else ():
        if isinstance(tool, dict) and tool.get("type") == "namespace" and isinstance(tool.get("tools"), list):
            for member in tool["tools"]:
                if isinstance(member, dict) and isinstance(member.get("name"), str):
                    names[flat_name(tool["name"], member["name"])] = (tool["name"], member["name"])
    return names


def answer_view(body: dict[str, Any], chat: dict[str, Any]) -> dict[str, Any]:
    """The chat body as the answer reads it: its tools know their namespaces (a copy for the
    answer only; the chat body sent upstream stays a plain list)."""
    names = namespaced(body.get("tools"))
    if not names or not isinstance(chat.get("tools"), list):
        return chat
    return {**chat, "tools": ChatTools(chat["tools"], names)}


def call_names(chat: dict[str, Any] | None) -> dict[str, tuple[str, str]]:
    """Flat chat names of namespaced functions in the chat body `chat` (empty when none)."""
    tools = (chat or {}).get("tools")
    return tools.namespaces if isinstance(tools, ChatTools) else {}


def chat_tool_choice(choice: Any) -> Any:
    """A Responses `tool_choice` in chat's shape (a named function, in its namespace or not)."""
    if isinstance(choice, dict) and choice.get("type") == "function":
        name = flat_name(choice.get("namespace"), str(choice.get("name", "")))
        return {"type": "function", "function": {"name": name}}
    return choice

"""Plain OpenAI chat logs: what users have when their agent is their own code.

Read as runs, one per conversation:

- a JSON-lines file, one conversation a line: a list of messages, or an object with a
  `messages` list (OpenAI's fine-tuning format; `tools`, `id`, `outcome` beside it are read);
- a JSON file holding one conversation (a list of messages, or an object with `messages`), or
  a list of conversations.

Messages are OpenAI chat messages (`system`, `user`, `assistant` with `tool_calls`, `tool` with
`tool_call_id`; the older `function_call` and `function` messages, and `functions` beside the
messages, are read as tool calls, results and tools); other roles are left out, as the model
never saw them. The family is
`openai-chat` unless `--family` names the agent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judge.importers import Run, TrajectoryFormatError
from judge.importers.chats import _chat_message, _stem

FAMILY = "openai-chat"
EXPECTED = (
    "an OpenAI chat log: a list of {role, content} messages, or an object with a messages list "
    "(one a line in a .jsonl file, or a list of them)"
)


def is_message_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(m, dict) and "role" in m for m in value)


def is_conversation(value: Any) -> bool:
    """A list of messages, or an object with one under `messages` (and not mini-swe-agent's `info`)."""
    if is_message_list(value):
        return True
    return isinstance(value, dict) and is_message_list(value.get("messages")) and "info" not in value


def _outcome(value: dict[str, Any]) -> dict[str, Any] | None:
    outcome = value.get("outcome")
    if isinstance(outcome, dict) and isinstance(outcome.get("success"), bool):
        return {"success": outcome["success"]}
    for key in ("success", "resolved"):
        if isinstance(value.get(key), bool):
            return {"success": value[key]}
    return None


def _legacy(raw: list[Any]) -> list[Any]:
    """The older function-calling shape in today's: an assistant's `function_call` becomes its one
    tool call, a `function` message that call's `tool` result (ids made up, in order)."""
    out: list[Any] = []
    call_id = ""
    for index, entry in enumerate(raw):
        if isinstance(entry, dict) and isinstance(entry.get("function_call"), dict) and not entry.get("tool_calls"):
            call_id = f"call_{index}"
            call = {"id": call_id, "type": "function", "function": entry["function_call"]}
            entry = {**{k: v for k, v in entry.items() if k != "function_call"}, "tool_calls": [call]}
        elif isinstance(entry, dict) and entry.get("role") == "function":
            entry = {**entry, "role": "tool", "tool_call_id": entry.get("tool_call_id") or call_id}
        out.append(entry)
    return out


def _tools(document: dict[str, Any]) -> list[dict[str, Any]] | None:
    """`tools`, or the older `functions` list as tools."""
    if isinstance(document.get("tools"), list):
        return list(document["tools"])
    functions = document.get("functions")
    if isinstance(functions, list):
        return [{"type": "function", "function": f} for f in functions if isinstance(f, dict)]
    return None


def conversation_run(path: Path, value: Any, run_id: str, where: str) -> Run:
    """One conversation (a list of messages, or an object with `messages`) as a run."""
    document = value if isinstance(value, dict) else {"messages": value}
    raw = _legacy(document["messages"])
    messages = [m for i, e in enumerate(raw) if (m := _chat_message(e, path, f"{where}messages[{i}]")) is not None]
    if not any(m["role"] == "assistant" for m in messages):
        raise TrajectoryFormatError(path, None, "a chat log with no assistant message: no step to read", where or "")
    tools = _tools(document)
    meta = {"model": document.get("model")} if isinstance(document.get("model"), str) else {}
    chosen = document.get("id") or document.get("trajectory_id")
    return Run(str(chosen or run_id), FAMILY, messages, tools, _outcome(document), str(path), meta)


def read_chat_document(path: Path, document: Any) -> list[Run]:
    """The runs of a JSON file of one conversation or a list of them."""
    if is_conversation(document):
        return [conversation_run(path, document, _stem(path), "")]
    return [
        conversation_run(path, value, f"{_stem(path)}-{index + 1}", f"[{index}].")
        for index, value in enumerate(document)
    ]


def read_chat_lines(path: Path, lines: list[tuple[int, Any]]) -> list[Run]:
    """The runs of a JSON-lines file, one conversation a line."""
    runs = []
    for number, value in lines:
        if not is_conversation(value):
            raise TrajectoryFormatError(path, number, f"expected {EXPECTED}")
        runs.append(conversation_run(path, value, f"{_stem(path)}-{number}", f"line {number}: "))
    return runs

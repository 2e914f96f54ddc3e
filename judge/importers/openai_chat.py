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

A conversation without an assistant turn has no step to read: in a file of several it is left
out and said (its line or place, and its id), the others read; a file of that one conversation
alone is an error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judge.importers import Run, TrajectoryFormatError, empty_run
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


NO_STEP = "a conversation with no assistant message: no step to read"


def conversation_run(path: Path, value: Any, run_id: str, where: str, line: int | None = None) -> Run:
    """One conversation (a list of messages, or an object with `messages`) as a run; its
    messages' places are `where` (and `line`, of a JSON-lines file). A run with no assistant
    message is returned as it is (`read_chat_document`, `read_chat_lines` decide)."""
    document = value if isinstance(value, dict) else {"messages": value}
    raw = _legacy(document["messages"])
    messages = []
    for i, entry in enumerate(raw):
        try:
            message = _chat_message(entry, path, f"{where}messages[{i}]")
        except TrajectoryFormatError as exc:
            if line is None:
                raise
            raise TrajectoryFormatError(path, line, exc.problem, f"{where}messages[{i}]") from None
        if message is not None:
            messages.append(message)
    tools = _tools(document)
    meta = {"model": document.get("model")} if isinstance(document.get("model"), str) else {}
    chosen = document.get("id") or document.get("trajectory_id")
    return Run(str(chosen or run_id), FAMILY, messages, tools, _outcome(document), str(path), meta)


def _has_step(run: Run) -> bool:
    return any(m["role"] == "assistant" for m in run.messages)


def read_chat_document(path: Path, document: Any, skipped: list[str] | None = None) -> list[Run]:
    """The runs of a JSON file of one conversation or a list of them; of a list, a conversation
    with no assistant message is left out (and said in `skipped`)."""
    if is_conversation(document):
        run = conversation_run(path, document, _stem(path), "")
        if not _has_step(run):
            raise TrajectoryFormatError(path, None, NO_STEP)
        return [run]
    runs = []
    for index, value in enumerate(document):
        run = conversation_run(path, value, f"{_stem(path)}-{index + 1}", f"[{index}].")
        if _has_step(run):
            runs.append(run)
        elif skipped is not None:
            skipped.append(empty_run(path, None, run.trajectory_id, f"{NO_STEP} (at [{index}])"))
    return runs


def read_chat_lines(path: Path, lines: list[tuple[int, Any]], skipped: list[str] | None = None) -> list[Run]:
    """The runs of a JSON-lines file, one conversation a line; a conversation with no assistant
    message is left out (and said in `skipped`: its line and id)."""
    runs = []
    for number, value in lines:
        if not is_conversation(value):
            raise TrajectoryFormatError(path, number, f"expected {EXPECTED}")
        run = conversation_run(path, value, f"{_stem(path)}-{number}", "", number)
        if _has_step(run):
            runs.append(run)
        elif skipped is not None:
            skipped.append(empty_run(path, number, run.trajectory_id, NO_STEP))
    return runs

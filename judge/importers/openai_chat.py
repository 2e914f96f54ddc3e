"""Plain OpenAI chat logs: what users have when their agent is their own code.

Read as runs, one per conversation:

- a JSON-lines file, one conversation a line: a list of messages, or an object with a
  `messages` list (OpenAI's fine-tuning format; `tools`, `id`, `outcome` beside it are read);
- a JSON file holding one conversation (a list of messages, or an object with `messages`), or
  a list of conversations.

Messages are OpenAI chat messages (`system`, `user`, `assistant` with `tool_calls`, `tool` with
`tool_call_id`); other roles are left out, as the model never saw them. The family is
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


def conversation_run(path: Path, value: Any, run_id: str, where: str) -> Run:
    """One conversation (a list of messages, or an object with `messages`) as a run."""
    document = value if isinstance(value, dict) else {"messages": value}
    raw = document["messages"]
    messages = [m for i, e in enumerate(raw) if (m := _chat_message(e, path, f"{where}messages[{i}]")) is not None]
    if not any(m["role"] == "assistant" for m in messages):
        raise TrajectoryFormatError(path, None, "a chat log with no assistant message: no step to read", where or "")
    tools = document.get("tools") if isinstance(document.get("tools"), list) else None
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

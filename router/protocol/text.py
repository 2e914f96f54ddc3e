"""Reading messages: the text of a message's content, the task behind a run's first messages,
the latest action and the results new since it, and what a chat completion answered. Plain
functions over OpenAI-shaped dicts, used from identification to the strategies' prompts."""

from __future__ import annotations

from typing import Any

from judge.task import real_task

# Characters of a run's task kept (its stored task, the prompts that quote it).
TASK_CHARS = 500


def text_of(content: Any) -> str:
    """The text of a message's content, whether a string or a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part.get("text", "") for part in content if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def task_of(messages: list[dict[str, Any]], limit: int = TASK_CHARS) -> str:
    """The user's request behind the client's boilerplate (Claude Code's reminders, Codex's
    environment block, instance templates: `judge.task.real_task`), else the first user message."""
    task = real_task(messages)
    if task:
        return task[:limit]
    for message in messages:
        if message.get("role") == "user":
            return text_of(message.get("content"))[:limit]
    return ""


def last_action(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The latest assistant message: the action whose results are new in this request."""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            latest: dict[str, Any] = message
            return latest
    return None


def new_tool_results(messages: list[dict[str, Any]]) -> list[str]:
    """The tool results (and user turns) after the last assistant message: what is new."""
    results: list[str] = []
    for message in reversed(messages):
        role = message.get("role")
        if role == "assistant":
            break
        if role in ("tool", "user", "function"):
            results.append(text_of(message.get("content")))
    results.reverse()
    return results


def first_message(answer: dict[str, Any]) -> dict[str, Any]:
    """The assistant message of an answer's first choice ({} when there is none)."""
    choices = answer.get("choices") or [{}]
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    return message if isinstance(message, dict) else {}


def message_text(answer: dict[str, Any]) -> str:
    """The text of an answer's first message ("" when it has none)."""
    content = first_message(answer).get("content")
    return content if isinstance(content, str) else ""

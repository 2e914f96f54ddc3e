"""Read back a flattened transcript (`router.context.flatten`) into messages.

A judge, a verifier, an advisor or a summariser is shown the agent's conversation as one text.
A simulated model reads it the way a real one would read the text: it finds the task, the tool
calls and their results, and from them where the run stands. Rebuilding the messages lets it
replay them with the same mind (`script.replay`) that answers the agent's steps. A transcript cut
short (the oldest entries dropped to fit) rebuilds into the tail only; the task is then unknown.
"""

from __future__ import annotations

import re
from typing import Any

from sim.tasks import Task, task_id_of

Messages = list[dict[str, Any]]

_ROLES = ("SYSTEM", "DEVELOPER", "USER", "ASSISTANT", "TOOL")
_ENTRY = re.compile(r"\n\n(?=(?:" + "|".join(_ROLES) + r"): )")
# `flatten` writes each tool call as one line: JSON arguments never hold a raw newline.
_CALL = re.compile(r"^\[calls ([^\s(]+)\((.*)\)\]$", re.MULTILINE)
_TASK = re.compile(r"Task ([\w.-]+):")


def rebuild(text: str) -> Messages:
    """The messages a flattened transcript was made from, as far as the text tells."""
    messages: Messages = []
    pending: list[str] = []  # ids of tool calls still waiting for their result
    count = 0
    for entry in _ENTRY.split(text.lstrip("…")):
        role, separator, body = entry.partition(": ")
        if not separator or role not in _ROLES:
            continue  # the cut-off head of a shortened transcript
        if role == "ASSISTANT":
            calls = []
            for match in _CALL.finditer(body):
                count += 1
                call_id = f"t{count}"
                calls.append({"id": call_id, "type": "function", "function": {"name": match[1], "arguments": match[2]}})
                pending.append(call_id)
            content = body.split("\n[calls ", 1)[0]
            message: dict[str, Any] = {"role": "assistant", "content": content}
            if calls:
                message["tool_calls"] = calls
            messages.append(message)
        elif role == "TOOL":
            messages.append({"role": "tool", "tool_call_id": pending.pop(0) if pending else "", "content": body})
        else:
            messages.append({"role": role.lower(), "content": body})
    return messages


def find_task_in(messages: Messages, tasks: dict[str, Task]) -> Task | None:
    """The task named by the first user message (None when the transcript lost its head)."""
    for message in messages:
        if message.get("role") == "user":
            task_id = task_id_of(str(message.get("content") or ""))
            return tasks.get(task_id) if task_id else None
    return None


def task_named_in(text: str, tasks: dict[str, Task]) -> Task | None:
    """The first demo task a free text names (`Task <id>: …`), e.g. a planner's prompt."""
    for match in _TASK.finditer(text):
        if match[1] in tasks:
            return tasks[match[1]]
    return None

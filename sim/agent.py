"""A small tool-calling agent, the kind the gateway sits behind: it sends the conversation and
the tools, streams the answer, runs the tool call against the task's workspace, appends the
result, and goes on until it submits or runs out of steps.

It speaks plain HTTP with httpx (a base dependency; the `openai` SDK is only in the test extra)
and streams every step, as EC2-Bench's harness does, so the demo exercises the gateway's
streaming relay. Each run is one trajectory: `X-Session-ID` names it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

from sim.tasks import Task
from sim.workspace import TOOLS, Workspace

SYSTEM_PROMPT = """You are a careful software engineer working in a small repository through tools.

Rules:
- Work in small steps: one tool call per answer. Explain in one sentence what you are doing.
- Read a file before you edit it. Edits replace exact text: copy `old` from what you read,
  including indentation. Prefer small edits to rewriting whole files.
- Use `search` to find where a name is defined or used before renaming or changing it.
- Run the tests after every change that could affect them. When a test fails, read the failure,
  find its cause in the code, and fix the cause; do not weaken or delete tests.
- Never guess file paths: search or read what exists.
- Keep the style of the surrounding code (type hints, docstrings, naming).
- When the task is done and the tests pass, call `submit` once with a short summary.
- If you are stuck, say what you tried and why it failed, then try a different approach.

The repository is a Python 3.11 project. Source lives in src/, tests in tests/, configuration
in config/. The test runner is pytest; `run_tests` runs the whole suite and reports each failing
test with its assertion.
"""

NO_TOOL_CALL = (
    "error: your answer had no tool call. Use the tools to work on the task, and call submit "
    "when the task is done and the tests pass."
)


class AgentError(Exception):
    """The gateway answered a step with an error; the message says which and why."""


@dataclass
class TaskRun:
    task: Task
    session_id: str
    solved: bool = False
    submitted: bool = False
    steps: int = 0
    targets: list[str] = field(default_factory=list)  # x-tandem-target of each step


def _merge_tool_call(calls: dict[int, dict[str, Any]], delta: dict[str, Any]) -> None:
    call = calls.setdefault(
        int(delta.get("index", 0)), {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
    )
    if delta.get("id"):
        call["id"] = delta["id"]
    function = delta.get("function") or {}
    if function.get("name"):
        call["function"]["name"] += function["name"]
    if function.get("arguments"):
        call["function"]["arguments"] += function["arguments"]


async def stream_step(
    client: httpx.AsyncClient, body: dict[str, Any], headers: dict[str, str]
) -> tuple[dict[str, Any], str]:
    """Send one streamed step; return the assembled assistant message and the step's target."""
    content: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    async with client.stream("POST", "/chat/completions", content=orjson.dumps(body), headers=headers) as reply:
        if reply.status_code >= 400:
            text = (await reply.aread()).decode(errors="replace")
            raise AgentError(f"the gateway answered {reply.status_code}: {text[:300]}")
        target = reply.headers.get("x-tandem-target", "?")
        async for line in reply.aiter_lines():
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            event = orjson.loads(data)
            if "error" in event:
                raise AgentError(f"the stream ended with an error: {event['error'].get('message')}")
            for choice in event.get("choices") or []:
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    content.append(delta["content"])
                for tool_delta in delta.get("tool_calls") or []:
                    _merge_tool_call(calls, tool_delta)
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content)}
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    return message, target


async def run_task(
    client: httpx.AsyncClient, task: Task, *, model: str, session_id: str, extra: dict[str, Any] | None = None
) -> TaskRun:
    """Work one task through the gateway at `client.base_url`; never raises for a failed task.

    `extra` adds request fields (the --edge-vllm mode caps max_tokens for the tiny model)."""
    workspace = Workspace(task)
    run = TaskRun(task, session_id)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": task.message()},
    ]
    headers = {"X-Session-ID": session_id}
    while run.steps < task.max_steps and not workspace.submitted:
        body = {
            "model": model,
            "messages": messages,
            "tools": TOOLS,
            "tool_choice": "auto",
            "stream": True,
            "stream_options": {"include_usage": True},
            # Lets a cloud reuse its prompt cache across the steps of this trajectory.
            "prompt_cache_key": session_id,
            **(extra or {}),
        }
        message, target = await stream_step(client, body, headers)
        run.steps += 1
        run.targets.append(target)
        messages.append(message)
        tool_calls = message.get("tool_calls") or []
        if not tool_calls:
            messages.append({"role": "user", "content": NO_TOOL_CALL})
            continue
        for call in tool_calls:
            result = workspace.call(call["function"]["name"], call["function"]["arguments"])
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    run.solved, run.submitted = workspace.solved, workspace.submitted
    return run

"""Formats that record the chat itself: mini-swe-agent, SWE-agent, harbor's Terminus-2 (ATIF)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from judge.importers import Message, Run, TrajectoryFormatError
from judge.importers import as_dict as _dict

_ROLES = frozenset({"system", "user", "assistant", "tool"})


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".traj.json", ".traj", ".json", ".jsonl"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _content(value: Any, path: Path, where: str) -> Any:
    if value is None or isinstance(value, str):
        return value or ""
    if isinstance(value, list):
        return [part if isinstance(part, dict) else {"type": "text", "text": str(part)} for part in value]
    raise TrajectoryFormatError(
        path, None, f"content must be a string or a list of parts, got {type(value).__name__}", where
    )


def _tool_calls(value: Any, path: Path, where: str) -> list[dict[str, Any]] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise TrajectoryFormatError(path, None, "tool_calls must be a list", where)
    calls = []
    for call in value:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            raise TrajectoryFormatError(path, None, "a tool call needs a function object", where)
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = orjson.dumps(arguments).decode()
        calls.append(
            {"id": str(call.get("id") or ""), "type": "function", "function": {**function, "arguments": arguments}}
        )
    return calls


def _chat_message(entry: Any, path: Path, where: str) -> Message | None:
    if not isinstance(entry, dict):
        raise TrajectoryFormatError(path, None, f"a message must be an object, got {type(entry).__name__}", where)
    role = entry.get("role")
    if not isinstance(role, str):
        raise TrajectoryFormatError(path, None, "a message has no role", where)
    if role not in _ROLES:
        return None  # mini-swe-agent 2's closing "exit" message, and the like: not sent to the model
    message: Message = {"role": role, "content": _content(entry.get("content"), path, where)}
    calls = _tool_calls(entry.get("tool_calls"), path, where)
    if calls:
        message["tool_calls"] = calls
    call_id = entry.get("tool_call_id") or (entry.get("tool_call_ids") or [None])[0]
    if role == "tool" and call_id:
        message["tool_call_id"] = str(call_id)
    return message


def read_mini_swe_agent(path: Path, document: dict[str, Any]) -> Run:
    raw = document.get("messages")
    if not isinstance(raw, list):
        raise TrajectoryFormatError(path, None, "a mini-swe-agent trajectory needs a messages list", "messages")
    messages = [m for i, e in enumerate(raw) if (m := _chat_message(e, path, f"messages[{i}]")) is not None]
    info = _dict(document.get("info"))
    config = _dict(info.get("config"))
    model = _dict(config.get("model"))
    meta = {
        "format": document.get("trajectory_format", "mini-swe-agent-1"),
        "version": info.get("mini_version"),
        "model": model.get("model_name"),
        "exit_status": info.get("exit_status"),
    }
    run_id = str(document.get("instance_id") or _stem(path))
    return Run(run_id, "mini-swe-agent", messages, None, None, str(path), meta)


def read_swe_agent(path: Path, document: dict[str, Any]) -> Run:
    history = document.get("history")
    messages: list[Message] = []
    if isinstance(history, list) and history:
        for index, entry in enumerate(history):
            if isinstance(entry, dict) and (entry.get("is_demo") or entry.get("message_type") == "demonstration"):
                continue  # a demonstration: another task, solved, shown to the model as an example
            message = _chat_message(entry, path, f"history[{index}]")
            if message is not None:
                messages.append(message)
    else:
        steps = document.get("trajectory")
        if not isinstance(steps, list):
            raise TrajectoryFormatError(path, None, "a SWE-agent .traj needs a history or a trajectory list")
        for index, step in enumerate(steps):
            if not isinstance(step, dict):
                raise TrajectoryFormatError(path, None, "a trajectory entry must be an object", f"trajectory[{index}]")
            response = step.get("response") or f"{step.get('thought', '')}\n```\n{step.get('action', '')}\n```"
            messages += [
                {"role": "assistant", "content": str(response)},
                {"role": "user", "content": str(step.get("observation") or "")},
            ]
    info = _dict(document.get("info"))
    meta = {"version": info.get("swe_agent_version"), "exit_status": info.get("exit_status")}
    replay = document.get("replay_config")
    if isinstance(replay, str):
        try:
            replay = orjson.loads(replay)
        except orjson.JSONDecodeError:
            replay = None
    if isinstance(replay, dict):
        agent = _dict(replay.get("agent"))
        model = _dict(agent.get("model"))
        meta["model"] = model.get("name") or model.get("model_name")
    return Run(_stem(path), "swe-agent", messages, None, None, str(path), meta)


def _terminus_answer(step: dict[str, Any]) -> str:
    """Terminus-2 answers in JSON text; ATIF splits it into a message and tool calls: rejoin them."""
    text = str(step.get("message") or "")
    calls = step.get("tool_calls")
    if not isinstance(calls, list) or not calls or text.lstrip().startswith("{"):
        return text
    commands = [_dict(c.get("arguments")) for c in calls if isinstance(c, dict)]
    complete = any(isinstance(c, dict) and c.get("function_name") == "mark_task_complete" for c in calls)
    answer = {"analysis": text, "commands": [c for c in commands if "keystrokes" in c], "task_complete": complete}
    return orjson.dumps(answer).decode()


def read_terminus(path: Path, document: dict[str, Any]) -> Run:
    steps = document.get("steps")
    if not isinstance(steps, list):
        raise TrajectoryFormatError(path, None, "an ATIF trajectory needs a steps list", "steps")
    messages: list[Message] = []
    for index, step in enumerate(steps):
        where = f"steps[{index}]"
        if not isinstance(step, dict) or step.get("source") not in ("system", "user", "agent"):
            raise TrajectoryFormatError(path, None, "a step must be an object with source system, user or agent", where)
        if step["source"] != "agent":
            messages.append({"role": step["source"], "content": str(step.get("message") or "")})
            continue
        messages.append({"role": "assistant", "content": _terminus_answer(step)})
        observation = step.get("observation")
        results = observation.get("results") if isinstance(observation, dict) else None
        if isinstance(results, list) and results:
            text = "\n".join(str(r.get("content") or "") for r in results if isinstance(r, dict))
            messages.append({"role": "user", "content": text})  # Terminus-2 sends the terminal as user text
    agent = _dict(document.get("agent"))
    meta = {"format": document.get("schema_version"), "version": agent.get("version"), "model": agent.get("model_name")}
    run_id = str(document.get("session_id") or _stem(path))
    return Run(run_id, "terminus-2", messages, None, None, str(path), meta)

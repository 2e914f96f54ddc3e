"""Formats that record events rather than the chat: OpenHands, Claude Code, Codex CLI. Each is
turned back into the chat its model saw: assistant turns with tool calls, then the results."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from judge.importers import Message, Run, TrajectoryFormatError
from judge.importers import as_dict as _dict
from judge.importers.chats import _stem
from judge.status import TOOL_ERROR_MARKER

# OpenHands V0 actions -> the tool its CodeAct agent calls for them.
_OPENHANDS_TOOLS = {
    "run": "execute_bash",
    "run_ipython": "execute_ipython_cell",
    "read": "str_replace_editor",
    "edit": "str_replace_editor",
    "write": "str_replace_editor",
    "browse": "browser",
    "browse_interactive": "browser",
    "finish": "finish",
    "think": "think",
}


def _call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    raw = arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode()
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}}


def read_openhands(path: Path, events: list[Any], document: dict[str, Any]) -> Run:
    messages: list[Message] = []
    for index, event in enumerate(events):
        where = f"event {index}"
        if not isinstance(event, dict):
            raise TrajectoryFormatError(path, None, "an event must be an object", where)
        source, action = event.get("source"), event.get("action")
        args = _dict(event.get("args"))
        if action == "system":
            messages.append({"role": "system", "content": str(args.get("content") or event.get("message") or "")})
        elif action == "message":
            role = "user" if source == "user" else "assistant"
            messages.append({"role": role, "content": str(args.get("content") or event.get("message") or "")})
        elif action is not None and source == "agent":
            if action == "edit" and args.get("command") in (None, ""):
                args = {**args, "command": "str_replace"}
            if action == "read" and not args.get("command"):
                args = {**args, "command": "view"}
            name = _OPENHANDS_TOOLS.get(str(action), str(action))
            thought = str(args.get("thought") or "")
            messages.append(
                {
                    "role": "assistant",
                    "content": thought,
                    "tool_calls": [_call(str(event.get("id", index)), name, args)],
                }
            )
        elif "observation" in event and event.get("observation") not in ("agent_state_changed", "null", "recall"):
            text = str(event.get("content") or "")
            extras = _dict(event.get("extras"))
            metadata = _dict(extras.get("metadata"))
            if event.get("observation") == "run" and isinstance(metadata.get("exit_code"), int):
                # What the CodeAct agent shows its model after a command.
                text += f"\n[Command finished with exit code {metadata['exit_code']}]"
            elif event.get("observation") == "error":
                # As the CodeAct agent shows its model an error observation (`File not found: x`).
                text += "\n[Error occurred in processing last action]"
            cause = event.get("cause")
            if messages and messages[-1].get("tool_calls"):
                messages.append(
                    {"role": "tool", "content": text, "tool_call_id": str(cause if cause is not None else "")}
                )
            elif source == "user":
                messages.append({"role": "user", "content": text})
    run_id = str(document.get("instance_id") or _stem(path))
    meta = {
        "version": (document.get("metadata") or {}).get("agent_class")
        if isinstance(document.get("metadata"), dict)
        else None
    }
    outcome = None
    report = document.get("report") if isinstance(document.get("report"), dict) else None
    if report is not None and isinstance(report.get("resolved"), bool):
        outcome = {"success": report["resolved"]}
    return Run(run_id, "openhands", messages, None, outcome, str(path), meta)


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in _blocks(content) if b.get("type") == "text")


def read_claude_code(path: Path, lines: list[tuple[int, Any]]) -> Run:
    messages: list[Message] = []
    last_id: Any = None
    session, version = "", None
    for number, line in lines:
        kind = line.get("type")
        if kind not in ("user", "assistant") or line.get("isSidechain") or line.get("isMeta"):
            continue  # summaries, snapshots, sub-agents' turns, meta reminders
        message = line.get("message")
        if not isinstance(message, dict):
            raise TrajectoryFormatError(path, number, f"a {kind} line needs a message object")
        session, version = str(line.get("sessionId") or session), line.get("version", version)
        blocks = _blocks(message.get("content"))
        if kind == "assistant":
            text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
            calls = [
                _call(str(b.get("id", "")), str(b.get("name", "")), b.get("input") or {})
                for b in blocks
                if b.get("type") == "tool_use"
            ]
            if (
                message.get("id") is not None
                and message.get("id") == last_id
                and messages
                and messages[-1]["role"] == "assistant"
            ):
                # One API message streamed as one line per content block: join them again.
                messages[-1]["content"] += text
                if calls:
                    messages[-1].setdefault("tool_calls", []).extend(calls)
            else:
                entry: Message = {"role": "assistant", "content": text}
                if calls:
                    entry["tool_calls"] = calls
                messages.append(entry)
            last_id = message.get("id")
            continue
        last_id = None
        results = [b for b in blocks if b.get("type") == "tool_result"]
        for result in results:
            messages.append(
                {
                    "role": "tool",
                    # A result Claude Code flagged as an error reads as the gateway shows one.
                    "content": (TOOL_ERROR_MARKER if result.get("is_error") is True else "")
                    + _result_text(result.get("content")),
                    "tool_call_id": str(result.get("tool_use_id", "")),
                }
            )
        texts = [b for b in blocks if b.get("type") == "text"]
        if texts and not results:
            messages.append({"role": "user", "content": texts})
    return Run(session or _stem(path), "claude-code", messages, None, None, str(path), {"version": version})


def _codex_text(content: Any) -> str:
    return (
        "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
        if isinstance(content, list)
        else str(content or "")
    )


def read_codex(path: Path, lines: list[tuple[int, Any]]) -> Run:
    messages: list[Message] = []
    session, version, model = "", None, None
    for number, line in lines:
        kind = line.get("type")
        payload = line.get("payload") if kind in ("session_meta", "response_item", "turn_context") else line
        if not isinstance(payload, dict):
            raise TrajectoryFormatError(path, number, f"a {kind} line needs a payload object")
        if kind == "session_meta" or (number == lines[0][0] and "instructions" in payload):
            session, version = str(payload.get("id") or session), payload.get("cli_version", version)
            continue
        if kind == "turn_context":
            model = payload.get("model", model)
            continue
        if kind not in (
            "response_item",
            None,
            "message",
            "function_call",
            "function_call_output",
            "local_shell_call",
            "custom_tool_call",
            "custom_tool_call_output",
            "reasoning",
        ):
            continue  # event_msg, compacted, state records: not what the model saw
        item = payload.get("type")
        if item == "message":
            role = payload.get("role")
            if role not in ("user", "assistant", "developer", "system"):
                raise TrajectoryFormatError(path, number, f"a message item has role {role!r}")
            messages.append({"role": role, "content": _codex_text(payload.get("content"))})
        elif item in ("function_call", "custom_tool_call", "local_shell_call"):
            arguments = payload.get("arguments", payload.get("input", payload.get("action", {})))
            if item == "custom_tool_call":
                arguments = {"input": arguments}
            name = str(payload.get("name") or ("local_shell" if item == "local_shell_call" else ""))
            call = _call(str(payload.get("call_id") or payload.get("id") or ""), name, arguments)
            if messages and messages[-1]["role"] == "assistant":
                messages[-1].setdefault("tool_calls", []).append(call)
            else:
                messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        elif item in ("function_call_output", "custom_tool_call_output"):
            output = payload.get("output")
            text = (
                output
                if isinstance(output, str)
                else _codex_text((output or {}).get("content") if isinstance(output, dict) else output)
            )
            messages.append({"role": "tool", "content": text, "tool_call_id": str(payload.get("call_id") or "")})
    return Run(session or _stem(path), "codex", messages, None, None, str(path), {"version": version, "model": model})

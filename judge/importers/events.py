"""Formats that record events rather than the chat: OpenHands (0.x and its agent SDK), Claude
Code, Codex CLI. Each is turned back into the chat its model saw: assistant turns with tool calls,
then the results."""

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


def read_openhands(path: Path, events: list[Any], document: dict[str, Any], line: int | None = None) -> Run:
    """An OpenHands event stream: 0.x's (V0 events) or its agent SDK's (V1 events, `kind`);
    `document`: the object holding it (an evaluation's instance), `line`: its line in the file."""
    if is_sdk_events(events):
        return read_openhands_sdk(path, events, document, line)
    messages: list[Message] = []
    for index, event in enumerate(events):
        where = f"event {index}"
        if not isinstance(event, dict):
            raise TrajectoryFormatError(path, line, "an event must be an object", where)
        source, action = event.get("source"), event.get("action")
        if not isinstance(action or "", str) or not isinstance(event.get("observation") or "", str):
            # Not a V0 event (whose action and observation are names), and no SDK event either:
            # read as V0 it would be tool calls named by Python reprs and empty results.
            raise TrajectoryFormatError(path, line, _NOT_AN_EVENT, where)
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
    return Run(run_id, "openhands", messages, None, _resolved(document), str(path), meta)


_NOT_AN_EVENT = (
    "not an OpenHands event this importer reads: an OpenHands 0.x event names its `action` or "
    "`observation`, an agent-SDK event has a `kind` (ActionEvent, ObservationEvent, MessageEvent, …)"
)


def _resolved(document: dict[str, Any]) -> dict[str, Any] | None:
    """The outcome an evaluation wrote beside the run (SWE-bench's `report.resolved`), if any."""
    report = _dict(document.get("report"))
    return {"success": report["resolved"]} if isinstance(report.get("resolved"), bool) else None


# The OpenHands agent SDK (V1, github.com/OpenHands/software-agent-sdk, MIT): its events, each
# with a `kind`. These are the ones it turns into messages to the model (`events_to_messages`);
# every other kind (state updates, condensation requests, token counts, pauses, hooks, …) it
# never shows the model, and neither does this importer.
SDK_MESSAGE_KINDS = frozenset(
    {
        "SystemPromptEvent",
        "MessageEvent",
        "ActionEvent",
        "ObservationEvent",
        "UserRejectObservation",
        "AgentErrorEvent",
        "CondensationSummaryEvent",
    }
)
# The SDK's terminal tool (`execute_bash`, named `terminal` since November 2025): its result
# shows the command's output between the shell's prefix and suffix, then the working directory,
# the interpreter and the exit code.
_SDK_TERMINALS = frozenset({"ExecuteBashObservation", "TerminalObservation"})
_SDK_EDITORS = frozenset({"FileEditorObservation", "StrReplaceEditorObservation"})
# What opens an observation the SDK flagged (`is_error`) as its model sees it: the
# `Observation.ERROR_MESSAGE_HEADER` of SDK releases since November 2025, and the terminal's own
# line before then (its `error: true`).
_SDK_ERROR_HEADER = "[An error occurred during execution.]\n"
_SDK_OLD_TERMINAL_ERROR = "[There was an error during command execution.]\n"


def is_sdk_events(events: list[Any]) -> bool:
    """Whether an event stream is the OpenHands agent SDK's (V1): events with a `kind` it shows
    its model."""
    return any(isinstance(event, dict) and _kind(event) in SDK_MESSAGE_KINDS for event in events)


def _kind(event: dict[str, Any]) -> str:
    kind = event.get("kind")
    return kind if isinstance(kind, str) else ""


def _parts(value: Any) -> str:
    """The text of an SDK content field: a string, or a list of text and image parts (the text
    ones, joined as the gateway reads content parts)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        value = [value]
    if isinstance(value, list):
        return "".join(str(part.get("text", "")) for part in value if isinstance(part, dict) and "text" in part)
    return ""


def _sdk_found(observation: dict[str, Any]) -> str:
    """The glob and grep tools' results before November 2025 (`files`, `matches`), as the SDK
    wrote them for its model."""
    found = observation.get("files", observation.get("matches"))
    items = [str(item) for item in found] if isinstance(found, list) else []
    what = "matching" if "files" in observation else "containing"
    pattern, searched = observation.get("pattern"), observation.get("search_path")
    include = observation.get("include_pattern")
    filtered = f" (filtered by '{include}')" if include else ""
    if not items:
        return f"No files found {what} pattern '{pattern}' in directory '{searched}'{filtered}"
    text = f"Found {len(items)} file(s) {what} pattern '{pattern}' in '{searched}'{filtered}:\n" + "\n".join(items)
    if observation.get("truncated") is True:
        text += "\n\n[Results truncated to first 100 files. Consider using a more specific pattern.]"
    return text


def _sdk_observation(observation: Any, path: Path, line: int | None, where: str) -> str:
    """An SDK observation's text as the SDK shows it to its model (`to_llm_content`), opened by
    `TOOL_ERROR_MARKER` where the SDK flagged it as an error. Observations are written in two
    shapes: since November 2025 `content` and `is_error`; before, each tool's own fields
    (`output`, an `error` flag or text, a finish's `message`, glob's `files`)."""
    if not isinstance(observation, dict):
        raise TrajectoryFormatError(path, line, "an ObservationEvent needs an observation object", where)
    kind = str(observation.get("kind") or "")
    if "content" in observation:
        body = _parts(observation["content"])
    elif "output" in observation:
        body = _parts(observation["output"])
    elif "message" in observation:
        body = str(observation["message"] or "")
    elif "files" in observation or "matches" in observation:
        body = _sdk_found(observation)
    else:
        raise TrajectoryFormatError(
            path,
            line,
            f"an observation of kind {kind!r} holds none of content, output, message: no result to read",
            where,
        )
    flagged = observation.get("is_error") is True
    error = observation.get("error")
    metadata = observation.get("metadata")
    if kind in _SDK_TERMINALS or (isinstance(metadata, dict) and "suffix" in metadata):
        shell = _dict(metadata)
        text = f"{shell.get('prefix') or ''}{body}{shell.get('suffix') or ''}"
        if shell.get("working_dir"):
            text += f"\n[Current working directory: {shell['working_dir']}]"
        if shell.get("py_interpreter_path"):
            text += f"\n[Python interpreter: {shell['py_interpreter_path']}]"
        code = shell.get("exit_code", -1)  # -1: still running (a soft timeout), or not reported
        if isinstance(code, int) and code != -1:
            text += f"\n[Command finished with exit code {code}]"
        if flagged:
            text = _SDK_ERROR_HEADER + text
        elif error is True:
            flagged, text = True, _SDK_OLD_TERMINAL_ERROR + text
    elif isinstance(error, str) and error:
        # Before November 2025 the editor showed its error alone, the browser, glob and grep
        # theirs after `Error: `.
        flagged, text = True, error if kind in _SDK_EDITORS else f"Error: {error}"
    else:
        text = (_SDK_ERROR_HEADER if flagged else "") + body
    text += _parts(observation.get("extended_content"))
    return (TOOL_ERROR_MARKER if flagged else "") + text


def _sdk_call(event: dict[str, Any], path: Path, line: int | None, where: str) -> dict[str, Any]:
    """An ActionEvent's tool call, as the model made it (`tool_call`: its id, name, arguments)."""
    call = event.get("tool_call")
    if not isinstance(call, dict) or not isinstance(call.get("name"), str) or not call["name"]:
        raise TrajectoryFormatError(path, line, "an ActionEvent needs a tool_call with a name", where)
    call_id = call.get("id") or event.get("tool_call_id") or ""
    arguments = call.get("arguments")
    return _call(str(call_id), call["name"], arguments if arguments is not None else {})


def _sdk_system(event: dict[str, Any]) -> tuple[str, list[dict[str, Any]] | None]:
    """A SystemPromptEvent's prompt (and its dynamic context), and its tools where they are in
    OpenAI's shape (SDK releases before November 2025; later ones keep the SDK's own)."""
    text = _parts(event.get("system_prompt")) + _parts(event.get("dynamic_context"))
    tools = event.get("tools")
    openai_shaped = (
        isinstance(tools, list)
        and bool(tools)
        and all(isinstance(t, dict) and isinstance(t.get("function"), dict) for t in tools)
    )
    return text, list(tools) if openai_shaped and isinstance(tools, list) else None


def read_openhands_sdk(path: Path, events: list[Any], document: dict[str, Any], line: int | None = None) -> Run:
    """The OpenHands agent SDK's event stream as its model saw it (the SDK's `events_to_messages`):
    an ActionEvent is an assistant turn with its tool call (consecutive ones of one LLM response
    are one turn, as the SDK joins them), an ObservationEvent, an AgentErrorEvent or a rejection is
    that call's `tool` result, a MessageEvent a message of its role. An evaluation's instance
    (`output.jsonl`) whose history holds no user message before the agent's first action starts
    with its `instruction`, the message the evaluation sent. A condenser's summaries are read; the
    events it had the model forget are kept (the run as it happened)."""
    messages: list[Message] = []
    tools: list[dict[str, Any]] | None = None
    response: Any = None  # the LLM response id of the assistant turn being built
    for index, event in enumerate(events):
        where = f"history[{index}]" if document else f"[{index}]"
        if not isinstance(event, dict):
            raise TrajectoryFormatError(path, line, "an event must be an object", where)
        kind = _kind(event)
        if kind == "ActionEvent":
            call = _sdk_call(event, path, line, where)
            turn = event.get("llm_response_id")
            last = messages[-1] if messages else None
            if turn is not None and turn == response and last is not None and last.get("tool_calls"):
                last["tool_calls"].append(call)
            else:
                messages.append({"role": "assistant", "content": _parts(event.get("thought")), "tool_calls": [call]})
            response = turn
            continue
        response = None
        if kind == "ObservationEvent":
            text = _sdk_observation(event.get("observation"), path, line, where)
        elif kind == "AgentErrorEvent":
            text = TOOL_ERROR_MARKER + str(event.get("error") or "")
        elif kind == "UserRejectObservation":
            text = TOOL_ERROR_MARKER + f"Action rejected: {event.get('rejection_reason') or 'User rejected the action'}"
        elif kind == "MessageEvent":
            message = event.get("llm_message")
            if not isinstance(message, dict):
                raise TrajectoryFormatError(path, line, "a MessageEvent needs an llm_message object", where)
            role = message.get("role") or ("user" if event.get("source") == "user" else "assistant")
            if role not in ("system", "user", "assistant"):
                raise TrajectoryFormatError(path, line, f"a MessageEvent has role {role!r}", where)
            content = _parts(message.get("content")) + _parts(event.get("extended_content"))
            messages.append({"role": role, "content": content})
            continue
        elif kind == "SystemPromptEvent":
            prompt, tools = _sdk_system(event)
            messages.append({"role": "system", "content": prompt})
            continue
        elif kind == "CondensationSummaryEvent":
            messages.append({"role": "user", "content": str(event.get("summary") or "")})
            continue
        else:
            if "tool_call_id" in event:  # an answer to a call in a shape this importer does not know
                raise TrajectoryFormatError(
                    path, line, f"an event of kind {kind!r} answers a tool call: not read", where
                )
            continue  # not shown to the model
        messages.append({"role": "tool", "content": text, "tool_call_id": str(event.get("tool_call_id") or "")})
    instruction = document.get("instruction")
    first_action = next((i for i, m in enumerate(messages) if m["role"] == "assistant"), len(messages))
    if isinstance(instruction, str) and instruction and not any(m["role"] == "user" for m in messages[:first_action]):
        at = sum(1 for m in messages[:first_action] if m["role"] == "system")
        messages.insert(at, {"role": "user", "content": instruction})
    llm = _dict(_dict(document.get("metadata")).get("llm"))
    meta = {
        "version": "1",  # the SDK's V1 events: family openhands-1
        "format": "openhands agent-sdk events",
        "model": llm.get("model"),
        "instance_id": document.get("instance_id"),
    }
    run_id = str(document.get("instance_id") or _stem(path))
    return Run(run_id, "openhands", messages, tools, _resolved(document), str(path), meta)


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

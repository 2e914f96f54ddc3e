"""Which format a trajectory file is in, from its content (names vary: a run dir, a `.json`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson

from judge.importers import Run, TrajectoryFormatError, empty_run
from judge.importers.chats import read_mini_swe_agent, read_swe_agent, read_terminus
from judge.importers.completions import is_completion_log, read_completion_log
from judge.importers.console import NOT_A_CONSOLE_LOG, is_console_log, is_recording, read_console
from judge.importers.events import is_sdk_events, read_claude_code, read_codex, read_openhands
from judge.importers.openai_chat import EXPECTED as CHAT_EXPECTED
from judge.importers.openai_chat import is_conversation, read_chat_document, read_chat_lines
from judge.importers.tau import is_tau2_results, is_tau_results, read_tau, read_tau2

MAX_BYTES = 256 << 20  # a trajectory larger than this is not one run
_CODEX_TYPES = frozenset({"session_meta", "response_item", "turn_context", "event_msg", "compacted"})


# What trajectory files are named: a file of another name that is not JSON is likely not one.
_JSON_NAMES = (".json", ".jsonl", ".traj", ".gz")


def _syntax_error(path: Path, raw: bytes, line_offset: int = 0) -> TrajectoryFormatError:
    try:
        json.loads(raw)
    except json.JSONDecodeError as exc:  # the stdlib says where; orjson's message is terse
        hint = "" if path.name.endswith(_JSON_NAMES) else " (trajectory files are JSON: .traj, .json, .jsonl)"
        where = f"not valid JSON: {exc.msg} (column {exc.colno}){hint}"
        return TrajectoryFormatError(path, exc.lineno + line_offset, where)
    except UnicodeDecodeError as exc:
        return TrajectoryFormatError(path, 1 + line_offset, f"not UTF-8 text ({exc.reason})")
    return TrajectoryFormatError(path, 1 + line_offset, "not valid JSON")


def _lines(path: Path, raw: bytes) -> list[tuple[int, Any]]:
    parsed = []
    for number, line in enumerate(raw.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            parsed.append((number, orjson.loads(line)))
        except orjson.JSONDecodeError:
            raise _syntax_error(path, line, number - 1) from None
    return parsed


def _first_line_is_object(raw: bytes) -> bool:
    """Whether the file reads as JSON lines: its first line is a whole JSON object (or, for chat
    logs, a whole list of messages)."""
    first = next((line for line in raw.split(b"\n") if line.strip()), b"")
    try:
        value = orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    return isinstance(value, dict) or is_conversation(value)


def read_all(path: Path, skipped: list[str] | None = None) -> list[Run]:
    """The runs in one file: one for a trajectory file, one per conversation for a chat log, one
    per instance for an evaluation's output. Of a file of several runs, one with no step to read
    is left out and said in `skipped`."""
    raw = _raw(path)
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError:
        if is_console_log(raw) and not _first_line_is_object(raw):
            return [read_console(path, raw)]
        if _first_line_is_object(raw):
            lines = _lines(path, raw)
            if lines and is_conversation(lines[0][1]):  # a chat log: each line must be one
                return read_chat_lines(path, lines, skipped)
            if lines and all(isinstance(line, dict) and isinstance(line.get("history"), list) for _, line in lines):
                # OpenHands' evaluation output (`output.jsonl`): one instance's event stream a line.
                return _read_instances(path, lines, skipped)
        return [read_any(path, raw)]
    if is_tau_results(document):
        return read_tau(path, document, skipped)
    if is_tau2_results(document):
        return read_tau2(path, document, skipped)
    if is_completion_log(document):  # it holds a `messages` list too (the plain prompt)
        return [read_completion_log(path, document)]
    if is_conversation(document) or (
        isinstance(document, list) and document and all(is_conversation(value) for value in document)
    ):
        return read_chat_document(path, document, skipped)
    return [read_any(path, raw)]


def _read_instances(path: Path, lines: list[tuple[int, Any]], skipped: list[str] | None) -> list[Run]:
    """An OpenHands evaluation's `output.jsonl` (0.x or agent SDK): a run a line; an instance
    with no agent step (an empty history: the agent never ran) is left out, and said."""
    runs = []
    for number, line in lines:
        run = read_openhands(path, line["history"], line, number)
        if any(m["role"] == "assistant" for m in run.messages):
            runs.append(run)
        elif skipped is not None:
            error = line.get("error")
            why = "no agent step" + (" (empty history)" if not line["history"] else "")
            why += f"; the evaluation's error: {error[:200]}" if isinstance(error, str) and error else ""
            skipped.append(empty_run(path, number, run.trajectory_id, why))
    return runs


def _raw(path: Path) -> bytes:
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise TrajectoryFormatError(path, None, f"{size:,} bytes is more than one run ({MAX_BYTES:,} at most)")
        raw = path.read_bytes()
    except OSError as exc:
        raise TrajectoryFormatError(path, None, f"cannot read the file ({exc.strerror})") from exc
    if not raw.strip():
        raise TrajectoryFormatError(path, 1, "the file is empty")
    return raw


def read_any(path: Path, raw: bytes | None = None) -> Run:
    """The run in one trajectory file (not a chat log: `read_all` reads those)."""
    raw = _raw(path) if raw is None else raw
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError:
        if is_console_log(raw) and not _first_line_is_object(raw):
            return read_console(path, raw)
        if not _first_line_is_object(raw):
            if is_recording(path, raw):  # another harness's terminal recording (`agent.log`)
                raise TrajectoryFormatError(path, None, NOT_A_CONSOLE_LOG) from None
            raise _syntax_error(path, raw) from None  # one JSON document, broken somewhere
        return _read_lines(path, _lines(path, raw))
    if isinstance(document, dict):
        if is_completion_log(document):
            return read_completion_log(path, document)
        if str(document.get("trajectory_format", "")).startswith("mini-swe-agent") or (
            isinstance(document.get("messages"), list) and isinstance(document.get("info"), dict)
        ):
            return read_mini_swe_agent(path, document)
        if str(document.get("schema_version", "")).startswith("ATIF") or (
            isinstance(document.get("steps"), list) and isinstance(document.get("agent"), dict)
        ):
            return read_terminus(path, document)
        if isinstance(document.get("trajectory"), list) or (
            isinstance(document.get("history"), list) and ("info" in document or "replay_config" in document)
        ):
            return read_swe_agent(path, document)
        if isinstance(document.get("history"), list):
            return _one_run(read_openhands(path, document["history"], document), path)
    events = document if isinstance(document, list) and all(isinstance(e, dict) for e in document) else []
    if is_sdk_events(events) or any("source" in e and ("action" in e or "observation" in e) for e in events[:20]):
        return _one_run(read_openhands(path, events, {}), path)
    if isinstance(document, dict) and ("type" in document or "payload" in document):
        return _read_lines(path, [(1, document)])  # a one-line JSON-lines file
    raise TrajectoryFormatError(path, 1, _UNKNOWN)


def _one_run(run: Run, path: Path) -> Run:
    """The run of a file that holds one: an error where it has no step to read."""
    if not any(m["role"] == "assistant" for m in run.messages):
        raise TrajectoryFormatError(path, None, "an OpenHands event stream with no agent step: no step to read")
    return run


_UNKNOWN = (
    "not a trajectory format this importer knows; expected one of: mini-swe-agent .traj.json, SWE-agent .traj, "
    "OpenHands events (0.x or agent SDK; one run, or an evaluation's output.jsonl: a run a line), Claude Code "
    "session .jsonl, Codex rollout .jsonl, harbor/Terminus-2 ATIF trajectory .json, tau-bench or tau2-bench "
    "results .json, " + CHAT_EXPECTED
)


def _read_lines(path: Path, lines: list[tuple[int, Any]]) -> Run:
    for number, line in lines:
        if not isinstance(line, dict):
            raise TrajectoryFormatError(path, number, f"each line must be a JSON object, got {type(line).__name__}")
    types = {str(line.get("type")) for _, line in lines}
    if types & _CODEX_TYPES or (lines and "instructions" in lines[0][1] and "id" in lines[0][1]):
        return read_codex(path, lines)
    if types & {"user", "assistant"} and any(isinstance(line.get("message"), dict) for _, line in lines):
        return read_claude_code(path, lines)
    raise TrajectoryFormatError(path, lines[0][0] if lines else 1, _UNKNOWN)

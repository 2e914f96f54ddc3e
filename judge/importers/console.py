"""mini-swe-agent's console output, as a terminal recorder keeps it (terminal-bench's
`sessions/agent.log`): the run's chat read back from what the harness printed.

mini-swe-agent 1.x prints each message under a header: `System:` and `User:` for what it sends
the model (the task, then each command's `<returncode>` and `<output>`, or its format errors),
`mini-swe-agent (step N, $cost):` for the model's answer. What the terminal adds is left out:
colour codes, carriage returns, the spinner ("Waiting for the LM to respond..."), the rules
between steps, and log lines other libraries wrote to the same terminal (a `HH:MM:SS - name:LEVEL`
line and the traceback under it). Long lines stay wrapped as the terminal wrapped them.

The run's outcome is read from terminal-bench's `results.json` two folders up
(`is_resolved`), when it is there; its `trial_name` is the run's id.
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson

from judge.importers import Message, Run, TrajectoryFormatError
from judge.importers import as_dict as _dict

MARKERS = (b"mini-swe-agent", b" (step ", b"<returncode>")  # each one in the raw bytes (colour codes between)
_ANSI = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07]*\x07|[()][A-Za-z0-9]|[=>])")
_SPINNER = re.compile(r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Waiting for the LM to respond\.\.\.")
_HEADER = re.compile(r"^(System|User):\s*$|^mini-swe-agent \(step \d+, \$[\d.]+\):\s*$", re.M)
_RULE = re.compile(r"^─{10,}.*$", re.M)
_LOG_LINE = re.compile(  # a logging line, and LiteLLM's retry notices (printed while the model is asked)
    r"^(?:\d\d:\d\d:\d\d - [\w.]+:[A-Z]+: |Give Feedback / Get Help: |LiteLLM\.Info: |Provider List: "
    r"|Retrying \S+ in [\d.]+ seconds)"
)
# Lines of a traceback another library printed: kept out of the message they interrupt.
_TRACE_LINE = re.compile(r"^(?:\s|$|- |Traceback \(|During handling|[A-Za-z_][\w.]*(?:Error|Exception|Warning)\b)")


def is_console_log(raw: bytes) -> bool:
    """Whether a file that is not JSON reads as mini-swe-agent's console output."""
    return all(marker in raw for marker in MARKERS)


# What a terminal recording is named (terminal-bench's `sessions/agent.log`, asciinema's `.cast`
# played back to text) and holds: escape codes, a shell prompt.
RECORDING_NAMES = (".log", ".cast")
_PROMPT = re.compile(rb"^\S*@\S*:\S*[#$] ", re.M)
NOT_A_CONSOLE_LOG = (
    "a terminal recording this importer does not read: of recordings, only mini-swe-agent 1.x's console "
    "output is read (its `mini-swe-agent (step N, $cost):` headers and `<returncode>` results), and this one "
    "holds none; another harness's recording shows no steps with their results: import that harness's own "
    "trajectory files"
)


def is_recording(path: Path, raw: bytes) -> bool:
    """Whether a file that is not JSON is a terminal recording (of some harness): named as one,
    or holding escape codes or a shell prompt, and not opening as JSON does."""
    head = raw[:4096]
    if head.lstrip()[:1] in (b"{", b"["):
        return False  # JSON, broken somewhere: its syntax error says more
    return path.name.endswith(RECORDING_NAMES) or b"\x1b[" in head or _PROMPT.search(head) is not None


def _clean(text: str) -> str:
    text = _SPINNER.sub("", _ANSI.sub("", text)).replace("\r\n", "\n").replace("\r", "")
    lines, skipping = [], False
    for line in text.split("\n"):
        if _LOG_LINE.match(line):
            skipping = True
            continue
        if skipping and _TRACE_LINE.match(line):
            continue
        skipping = False
        lines.append(line)
    return _RULE.sub("", "\n".join(lines))


def read_console(path: Path, raw: bytes) -> Run:
    text = _clean(raw.decode("utf-8", "replace"))
    headers = list(_HEADER.finditer(text))
    if not headers or not any(h.group(0).startswith("mini-swe-agent") for h in headers):
        raise TrajectoryFormatError(path, None, "a mini-swe-agent console log with no step in it")
    messages: list[Message] = []
    for index, header in enumerate(headers):
        end = headers[index + 1].start() if index + 1 < len(headers) else len(text)
        body = text[header.end() : end].strip("\n")
        if index + 1 == len(headers):  # the run's end: what the shell printed after the harness exited
            body = re.split(r"(?:^|\n)(?:Saved trajectory to |\S*@\S*:\S*[#$] )", body, maxsplit=1)[0]
        role = {"System": "system", "User": "user"}.get(header.group(1) or "", "assistant")
        if body.strip() or role == "assistant":
            messages.append({"role": role, "content": body.strip()})
    trial = path.parent.parent / "results.json"
    run_id, outcome = path.parent.parent.name or path.stem, None
    if trial.is_file():
        try:
            result = _dict(orjson.loads(trial.read_bytes()))
        except orjson.JSONDecodeError:
            result = {}
        run_id = str(result.get("trial_name") or run_id)
        if isinstance(result.get("is_resolved"), bool):
            outcome = {"success": result["is_resolved"]}
    return Run(run_id, "mini-swe-agent", messages, None, outcome, str(path), {"version": "1", "format": "console"})

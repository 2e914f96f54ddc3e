"""`tandem audit expand`: the content audit log as EC2-Bench reads it, one line per cloud call
with the whole `input`, rebuilt from the delta lines (`delta.py`).

Output fields (the shape of EC2-Bench's step-routing proxy log): `timestamp` (ISO 8601, UTC),
`model`, `session_id` (the trajectory id), `decision` (the target: `cloud`), `prompt_tokens`,
`completion_tokens`, `cache_read_tokens`, `cache_write_tokens` (0: upstreams do not report it
to Tandem), `latency_ms`, `input`, `output`, `output_tool_calls`, `n_redacted_tokens` (values
replaced by placeholders); plus Tandem's `step` and `reason` to join with the step records.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

from router.audit.delta import SNAPSHOT


@dataclass
class Expansion:
    lines: int = 0  # lines written
    unresolved: list[str] = field(default_factory=list)  # audit ids whose reference was not found


def _timestamp(at: Any) -> str | None:
    if not isinstance(at, int | float):
        return None
    return datetime.datetime.fromtimestamp(at, datetime.UTC).isoformat()


def ec2_line(line: dict[str, Any], messages: list[Any] | None) -> dict[str, Any]:
    usage = line.get("usage") or {}
    return {
        "timestamp": _timestamp(line.get("at")),
        "model": line.get("model"),
        "session_id": line.get("trajectory_id"),
        "decision": line.get("target"),
        "prompt_tokens": usage.get("prompt_tokens"),
        "completion_tokens": usage.get("completion_tokens"),
        "cache_read_tokens": usage.get("cached_tokens"),
        "cache_write_tokens": 0,
        "latency_ms": round(float(line.get("latency_s") or 0.0) * 1000, 3),
        "input": messages,
        "output": line.get("output"),
        "output_tool_calls": line.get("output_tools") or [],
        "n_redacted_tokens": line.get("redacted", 0),
        "step": line.get("step"),
        "reason": line.get("reason"),
    }


class AuditFormatError(ValueError):
    """A line of an audit file that is not one the gateway writes (JSON of an object)."""


def _lines(files: Iterable[Path]) -> Iterator[dict[str, Any]]:
    for path in files:
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, 1):
                if not raw.strip():
                    continue
                try:
                    line = orjson.loads(raw)
                except orjson.JSONDecodeError as exc:
                    raise AuditFormatError(f"{path}:{number}: not valid JSON ({exc})") from exc
                if not isinstance(line, dict):
                    raise AuditFormatError(
                        f"{path}:{number}: a JSON {type(line).__name__}, not an audit line (an object)"
                    )
                yield line


def expand(files: Iterable[Path], out: IO[bytes]) -> Expansion:
    """Read `files` in the order written (oldest first); write a line per cloud content line."""
    result = Expansion()
    # Each trajectory's last full input and the audit_id that holds it: a delta refers to its
    # trajectory's previous line or to the snapshot that opened the file.
    latest: dict[str, tuple[str, list[Any]]] = {}
    for line in _lines(files):
        audit_id, trajectory_id = line.get("audit_id"), line.get("trajectory_id")
        if not isinstance(audit_id, str) or not isinstance(trajectory_id, str):
            continue  # a metadata line (an edge step, or metadata mode)
        if "input" in line:
            messages: list[Any] | None = line["input"]
        else:
            known = latest.get(trajectory_id)
            if known is None or known[0] != line.get("input_ref") or len(known[1]) != line.get("input_from"):
                result.unresolved.append(audit_id)
                messages = None
            else:
                messages = known[1] + line.get("input_delta", [])
        if messages is not None:
            latest[trajectory_id] = (audit_id, messages)
        else:
            latest.pop(trajectory_id, None)
        if line.get("audit") == SNAPSHOT:
            continue
        out.write(orjson.dumps(ec2_line(line, messages)) + b"\n")
        result.lines += 1
    return result

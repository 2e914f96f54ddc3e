"""A real-shaped agent run for the audit-size measurement: a system prompt, a task, then steps
of one tool call (a shell command or a file edit) and its result (code, logs, listings) of
200 B to 6 KB. Deterministic for a seed; imported by the test that checks the target."""

from __future__ import annotations

import random
from typing import Any

import orjson

SYSTEM = "You are a software engineering agent working in a Linux sandbox. " * 30
TASK = (
    "The nightly export job fails on records with non-ASCII names. Find the cause in the "
    "repository under /workspace/exporter, fix it, add a regression test and make the suite pass."
)
_WORDS = ("export", "record", "name", "encode", "utf8", "ascii", "writer", "batch", "retry", "config", "path", "error")
_COMMANDS = ("ls -la", "cat", "grep -rn", "python -m pytest -q", "sed -n 1,80p", "git diff")


def _code(rng: random.Random, lines: int) -> str:
    out = []
    for number in range(lines):
        indent = "    " * rng.randint(0, 3)
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(2, 8)))
        out.append(f"{number + 1:4d} {indent}{words.replace(' ', '_', 1)}({rng.randint(0, 99)})  # {words}")
    return "\n".join(out)


def tool_call(rng: random.Random) -> tuple[str, str]:
    if rng.random() < 0.3:
        patch = _code(rng, rng.randint(3, 12))
        return "str_replace_editor", orjson.dumps({"path": "/workspace/exporter/writer.py", "new_str": patch}).decode()
    command = f"{rng.choice(_COMMANDS)} /workspace/exporter/{rng.choice(_WORDS)}.py"
    return "bash", orjson.dumps({"command": command}).decode()


def tool_result(rng: random.Random) -> str:
    return _code(rng, rng.choice((3, 8, 20, 40, 80)))


def first_messages() -> list[dict[str, Any]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]


def transcript_bytes(messages: list[dict[str, Any]]) -> int:
    """The bytes of a run's distinct messages (each counted once, as JSON)."""
    distinct = {orjson.dumps(message) for message in messages}
    return sum(len(message) for message in distinct)

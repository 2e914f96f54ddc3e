"""Long, real-shaped agent runs made up on the spot (deterministic from a seed).

Each run looks like what a SWE-style agent resends at every step: a system prompt, a task, then
for each step the assistant's tool call and the tool's output, appended to the history, so the
request body grows step by step (to ~350–500 KB at step 100–200). Tool outputs mix source code
(this repository's own files), logs and test output, with sensitive values sprinkled in: e-mail
addresses, card numbers, cloud keys — a few hundred over a run — plus, on request, a data dump of
many distinct values in the first message (to fill a redact route's vault).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parents[2]
SYSTEM = (
    "You are a software engineering agent. You run one shell command per turn through the "
    "`bash` tool, read its output, and continue until the task is done. "
) * 8
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a shell command in the repository and return its output.",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
        },
    }
]
COMMANDS = ("cat {f}", "sed -n 1,120p {f}", "grep -n def {f}", "python -m pytest -q tests", "git diff", "ls -la")


def _source_files() -> list[Path]:
    files = sorted(p for p in (REPO / "router").rglob("*.py") if p.stat().st_size > 2000)
    return files or [Path(__file__)]


def _luhn_card(rng: random.Random) -> str:
    digits = [4] + [rng.randrange(10) for _ in range(14)]
    total = 0
    for i, d in enumerate(reversed(digits)):
        d = d * 2 if i % 2 == 0 else d
        total += d - 9 if d > 9 else d
    return "".join(map(str, digits)) + str((10 - total % 10) % 10)


def sensitive_value(rng: random.Random, n: int) -> str:
    kind = n % 3
    if kind == 0:
        return f"user{n}.{rng.randrange(10**6)}@example-corp.com"
    if kind == 1:
        return _luhn_card(rng)
    return "AKIA" + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16))


def _log_lines(rng: random.Random, values: list[str], lines: int) -> str:
    out = []
    for i in range(lines):
        level = rng.choice(("INFO", "INFO", "DEBUG", "WARNING", "ERROR"))
        stamp = f"2026-11-30T10:{i % 60:02d}:{rng.randrange(60):02d}Z"
        took = f"request {rng.randrange(10**9):x} took {rng.random() * 900:.1f} ms"
        line = f"{stamp} {level} worker-{rng.randrange(8)} {took}"
        if values and rng.random() < 0.08:
            line += f" user={values[rng.randrange(len(values))]}"
        out.append(line)
    return "\n".join(out)


@dataclass(frozen=True, slots=True)
class RunShape:
    steps: int = 120
    target_bytes: int = 420_000  # the body size reached at the last step
    dump_values: int = 0  # distinct sensitive values in the first message (a data dump)
    values_per_run: int = 300  # sensitive values sprinkled over the tool outputs


def run_messages(seed: int, shape: RunShape) -> Iterator[list[dict[str, Any]]]:
    """The messages of each step of one run, step 1 first (each list extends the previous)."""
    rng = random.Random(seed)
    files = _source_files()
    values = [sensitive_value(rng, n) for n in range(shape.values_per_run)]
    task = f"Fix the failing test in the repository (issue #{seed}). Contact: {values[0]}."
    if shape.dump_values:
        dump = "\n".join(sensitive_value(rng, 10**6 + n) for n in range(shape.dump_values))
        task += "\nThe customer export that shows the problem:\n" + dump
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": task}]
    per_step = max(600, (shape.target_bytes - len(orjson.dumps(messages))) // shape.steps)
    for step in range(1, shape.steps + 1):
        yield messages
        path = files[rng.randrange(len(files))]
        command = rng.choice(COMMANDS).format(f=path.relative_to(REPO))
        call_id = f"call_{seed}_{step}"
        messages = [
            *messages,
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "bash", "arguments": orjson.dumps({"command": command}).decode()},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call_id, "content": _tool_output(rng, path, values, per_step)},
        ]


def _tool_output(rng: random.Random, path: Path, values: list[str], size: int) -> str:
    kind = rng.random()
    if kind < 0.5:
        text = path.read_text(errors="replace")
        start = rng.randrange(max(1, len(text) - size))
        body = text[start : start + size]
        if rng.random() < 0.3:
            body += f"\n# maintainer: {values[rng.randrange(len(values))]}"
        return body
    if kind < 0.8:
        return _log_lines(rng, values, max(1, size // 95))[:size]
    failures = "\n".join(
        f"FAILED tests/test_{rng.randrange(50)}.py::test_case_{i} - "
        f"AssertionError: assert {rng.randrange(99)} == {rng.randrange(99)}"
        for i in range(max(1, size // 110))
    )
    return failures[:size] + '\nTraceback (most recent call last):\n  File "x.py", line 3\nValueError: bad value'


def request_body(model: str, messages: list[dict[str, Any]]) -> bytes:
    return orjson.dumps({"model": model, "messages": messages, "tools": TOOLS, "max_tokens": 256, "temperature": 0})


CACHE_MARK = {"type": "ephemeral"}


def marked_chat_body(model: str, messages: list[dict[str, Any]]) -> bytes:
    """The chat body as LiteLLM sends it with Anthropic-style prompt caching (OpenHands): the
    newest message's text as a part carrying `cache_control`, moved at every step."""
    last = messages[-1]
    part = {"type": "text", "text": last["content"], "cache_control": CACHE_MARK}
    return request_body(model, [*messages[:-1], {**last, "content": [part]}])


def anthropic_body(model: str, messages: list[dict[str, Any]]) -> bytes:
    """The same step as Claude Code sends it to `/v1/messages`: the system prompt apart, tool
    calls as `tool_use` blocks, their outputs as `tool_result` blocks, and `cache_control` on the
    newest turn's last block (moved at every step, as Claude Code does)."""
    turns: list[dict[str, Any]] = []
    for message in messages[1:]:
        if message["role"] == "assistant":
            blocks = [
                {
                    "type": "tool_use",
                    "id": call["id"],
                    "name": call["function"]["name"],
                    "input": orjson.loads(call["function"]["arguments"]),
                }
                for call in message.get("tool_calls") or []
            ]
            turns.append({"role": "assistant", "content": blocks})
        elif message["role"] == "tool":
            block = {"type": "tool_result", "tool_use_id": message["tool_call_id"], "content": message["content"]}
            turns.append({"role": "user", "content": [block]})
        else:
            turns.append({"role": "user", "content": [{"type": "text", "text": message["content"]}]})
    last = turns[-1]["content"]
    last[-1] = {**last[-1], "cache_control": CACHE_MARK}
    tools = [
        {
            "name": t["function"]["name"],
            "description": t["function"]["description"],
            "input_schema": t["function"]["parameters"],
        }
        for t in TOOLS
    ]
    system = [{"type": "text", "text": messages[0]["content"], "cache_control": CACHE_MARK}]
    body = {"model": model, "messages": turns, "system": system, "tools": tools, "max_tokens": 256, "temperature": 0}
    return orjson.dumps(body)


def responses_body(model: str, messages: list[dict[str, Any]]) -> bytes:
    """The same step as Codex sends it to `/v1/responses` (`store: false`, the whole
    conversation each turn): the system prompt as `instructions`, tool calls as `function_call`
    items, their outputs as `function_call_output` items."""
    items: list[dict[str, Any]] = []
    for message in messages[1:]:
        if message["role"] == "assistant":
            for call in message.get("tool_calls") or []:
                function = call["function"]
                items.append(
                    {
                        "type": "function_call",
                        "call_id": call["id"],
                        "name": function["name"],
                        "arguments": function["arguments"],
                    }
                )
        elif message["role"] == "tool":
            items.append(
                {"type": "function_call_output", "call_id": message["tool_call_id"], "output": message["content"]}
            )
        else:
            content = [{"type": "input_text", "text": message["content"]}]
            items.append({"type": "message", "role": "user", "content": content})
    tools = [{"type": "function", **t["function"]} for t in TOOLS]
    body = {
        "model": model,
        "instructions": messages[0]["content"],
        "input": items,
        "tools": tools,
        "tool_choice": "auto",
        "store": False,
        "stream": False,
        "prompt_cache_key": "longrun",
    }
    return orjson.dumps(body)


REAL_RUNS = Path(__file__).resolve().parent / "data" / "mini-swe-agent-runs.json.gz"


def real_runs(path: Path = REAL_RUNS) -> list[tuple[str, list[list[dict[str, Any]]]]]:
    """Real public agent runs replayed as their client sent them (benchmarks/longrun/data/SOURCES.md):
    for each run its name and, for each step (each assistant message), the messages before it."""
    import gzip

    runs = []
    for run in orjson.loads(gzip.decompress(path.read_bytes())):
        messages = run["messages"]
        steps = [messages[:index] for index, message in enumerate(messages) if message["role"] == "assistant"]
        runs.append((run["instance"], steps))
    return runs


def real_body(model: str, messages: list[dict[str, Any]]) -> bytes:
    """A step as mini-swe-agent (through LiteLLM) sends it: the model, the growing messages (text
    only: its actions are bash blocks in the assistant's text, no tool calls), then its fixed
    field."""
    return orjson.dumps({"model": model, "messages": messages, "temperature": 0.0})

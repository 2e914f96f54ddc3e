"""Conversations whose feature vectors are frozen in `feature_golden.json`: a change to how the
features are computed (for speed) must give exactly these vectors, or bump FEATURE_VERSION.

    PYTHONPATH=. python -m tests.judge.feature_cases --write   # after a deliberate version bump
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import orjson

from judge.features import FEATURE_VERSION, TrajectoryCounters
from judge.record import RunRecord

GOLDEN = Path(__file__).resolve().parent / "feature_golden.json"

TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {}}}
    for name in ("execute_bash", "str_replace_editor", "think", "finish")
]


def _call(name: str, args: Any, call_id: str, content: Any = "") -> dict[str, Any]:
    arguments = args if isinstance(args, str) else orjson.dumps(args).decode()
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    return {"role": "assistant", "content": content, "tool_calls": [call]}


def _result(call_id: str, content: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


_TRACEBACK = 'Traceback (most recent call last):\n  File "a.py", line 3, in f\nKeyError: 1\n'
_LONG = "".join(f"line {i}: value = {i * 7}\n" for i in range(3000))  # over the signal window's ends


def _edge_cases() -> dict[str, list[Any]]:
    head = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": "Fix the test in a.py"}]
    cases: dict[str, list[Any]] = {
        "task only": list(head),
        "task as content parts": [
            {"role": "user", "content": [{"type": "text", "text": "Fix it"}, {"type": "text", "text": "```py\nx\n```"}]}
        ],
        "no assistant, two results": [
            *head,
            _result("a", _TRACEBACK),
            _result("b", "ok"),
        ],
        "parallel calls, blank and empty results": [
            *head,
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "a",
                        "type": "function",
                        "function": {"name": "execute_bash", "arguments": '{"command":"ls"}'},
                    },
                    {"id": "b", "type": "function", "function": {"name": "think", "arguments": '{"thought":"x"}'}},
                ],
            },
            _result("a", "  \n\t"),
            _result("b", ""),
        ],
        "all empty results": [*head, _call("execute_bash", {"command": "true"}, "a"), _result("a", "")],
        "unicode whitespace result": [*head, _call("execute_bash", {"command": "x"}, "a"), _result("a", "\x1c\u3000 ")],
        "result as content parts": [
            *head,
            _call("execute_bash", {"command": "pytest"}, "a"),
            _result("a", [{"type": "text", "text": "1 failed\n"}, {"type": "text", "text": "FAILED test_a"}]),
        ],
        "long output, error at its end": [
            *head,
            _call("execute_bash", {"command": "make"}, "a"),
            _result("a", _LONG + _TRACEBACK),
        ],
        "long output, error in its middle": [
            *head,
            _call("execute_bash", {"command": "make"}, "a"),
            _result("a", _LONG + _TRACEBACK + _LONG),
        ],
        "error before, fixed now": [
            *head,
            _call("execute_bash", {"command": "python a.py"}, "a"),
            _result("a", _TRACEBACK),
            _call(
                "str_replace_editor", {"command": "str_replace", "path": "a.py", "old_str": "x", "new_str": "y"}, "b"
            ),
            _result("b", "The file a.py has been edited."),
        ],
        "unknown tool and bad arguments": [
            *head,
            _call("nope", {"command": "ls"}, "a"),
            _result("a", "error: no such tool"),
            _call("execute_bash", "{not json", "b"),
            _result("b", "bash: syntax error near unexpected token"),
        ],
        "a business API's tools (typed by their verb)": [
            *head,
            _call("get_reservation_details", {"reservation_id": "ZFA04Y"}, "a"),
            _result("a", '{"reservation_id": "ZFA04Y", "flights": []}'),
            _call("update_reservation_flights", {"reservation_id": "ZFA04Y", "cabin": "economy"}, "b"),
            _result("b", "Error: flight HAT030 not available on date 2024-05-13"),
        ],
        "repeats then finish": [
            *head,
            *[
                m
                for i in range(4)
                for m in (_call("execute_bash", {"command": "ls"}, f"c{i}"), _result(f"c{i}", "a.py"))
            ],
            _call("finish", {}, "f"),
        ],
        "the same call again and again": [
            *head,
            *[
                m
                for i in range(5)
                for m in (_call("execute_bash", {"command": "ls"}, f"c{i}"), _result(f"c{i}", "a.py"))
            ],
        ],
        "many signals at once": [
            *head,
            _call("think", {"thought": "plan"}, "t"),
            _result("t", "ok"),
            _call("execute_bash", {"command": "./run.sh"}, "a"),
            _result("a", "bash: foo: command not found\nPermission denied\nTimed out after 30s\nexit code 2\n"),
        ],
        "prose turns, observations in user messages": [
            *head,
            {"role": "assistant", "content": "Let me look.\n```bash\ncat a.py\n```"},
            {"role": "user", "content": "<returncode>1</returncode>\ncat: a.py: No such file or directory"},
            {"role": "assistant", "content": "I think the fix is done."},
        ],
        "results before the tail's first assistant": [
            *head,
            *[
                m
                for i in range(8)
                for m in (
                    _call("execute_bash", {"command": f"run {i}"}, f"c{i}"),
                    _result(f"c{i}", "Permission denied\n" if i == 4 else f"out {i}\n"),
                    _result(f"d{i}", "Traceback (most recent call last):\n" if i == 5 else "more\n"),
                )
            ],
        ],
    }
    return cases


def cases() -> list[tuple[str, list[Any], TrajectoryCounters, list[dict[str, Any]] | None]]:
    """(name, messages, counters, tools) of every frozen case."""
    from benchmarks.judge_latency.trajectory import TOOLS as BENCH_TOOLS
    from benchmarks.judge_latency.trajectory import trajectory

    found: list[tuple[str, list[Any], TrajectoryCounters, list[dict[str, Any]] | None]] = []
    record = RunRecord.from_counts({"run_labelled_execute": 6, "run_failed_execute": 2, "run_labelled_edit": 3})
    for name, messages in _edge_cases().items():
        found.append((name, messages, TrajectoryCounters(5, 1, 4, 1, 0, record), TOOLS))
        found.append((f"{name}, no tools", messages, TrajectoryCounters(5), None))
    full = trajectory(30)
    for step in (0, 1, 2, 3, 6, 7, 8, 13, 20, 29):
        counters = TrajectoryCounters(step + 1, step // 3, step, 0, 0, record)
        found.append((f"benchmark trajectory, step {step + 1}", full[: 2 + 2 * step], counters, BENCH_TOOLS))
    return found


def vectors() -> dict[str, list[float]]:
    from judge.features import clear_caches, step_features

    clear_caches()
    return {name: step_features(messages, counters, tools).tolist() for name, messages, counters, tools in cases()}


def main(argv: list[str]) -> int:
    if argv != ["--write"]:
        print(__doc__)
        return 2
    golden = {"feature_version": FEATURE_VERSION, "vectors": vectors()}
    GOLDEN.write_text(json.dumps(golden, indent=0) + "\n")
    print(f"wrote {len(golden['vectors'])} vectors to {GOLDEN}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

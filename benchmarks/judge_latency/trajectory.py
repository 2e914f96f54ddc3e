"""A synthetic long agent trajectory (OpenHands-style tools) with realistic tool output sizes."""

from __future__ import annotations

from typing import Any

import orjson

TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": name, "description": name, "parameters": {"type": "object"}}}
    for name in ("execute_bash", "str_replace_editor", "think", "finish")
]

_SOURCE = "".join(f"def function_{i}(value: int) -> int:\n    return value * {i} + {i % 7}\n\n" for i in range(400))
_PYTEST_FAIL = (
    "============================= test session starts ==============================\n"
    + "".join(f"tests/test_mod.py::test_case_{i} PASSED\n" for i in range(60))
    + "tests/test_mod.py::test_edge FAILED\n"
    + 'Traceback (most recent call last):\n  File "src/mod.py", line 12, in compute\n'
    + "    return table[key]\nKeyError: 'missing'\n"
    + "=========================== 1 failed, 60 passed in 0.52s ===========================\n"
)

# (tool, arguments, result) cycled through: reads of big files, edits, test runs, searches.
_STEPS: list[tuple[str, dict[str, Any], str]] = [
    ("str_replace_editor", {"command": "view", "path": "/repo/src/mod.py"}, _SOURCE[:40_000]),
    ("execute_bash", {"command": "grep -rn 'compute' src/ tests/"}, "src/mod.py:12: def compute(key):\n" * 60),
    (
        "str_replace_editor",
        {
            "command": "str_replace",
            "path": "/repo/src/mod.py",
            "old_str": "return table[key]",
            "new_str": "return table.get(key)",
        },
        "The file /repo/src/mod.py has been edited. " + _SOURCE[:1500],
    ),
    ("execute_bash", {"command": "cd /repo && python -m pytest -q tests/"}, _PYTEST_FAIL),
    ("think", {"thought": "The KeyError comes from the lookup table; the default must be handled. " * 5}, "ok"),
    ("execute_bash", {"command": "cat > /repo/notes.txt <<'EOF'\nsee issue\nEOF"}, ""),
    ("execute_bash", {"command": "ls -la /repo/src"}, "total 48\n" + "-rw-r--r-- 1 root root 1234 mod.py\n" * 30),
]


def trajectory(steps: int) -> list[dict[str, Any]]:
    """System + task + `steps` assistant/tool pairs: the conversation before step `steps + 1`."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are OpenHands agent, a helpful AI assistant. " * 40},
        {"role": "user", "content": "Fix the KeyError in compute() when the key is missing. " * 8},
    ]
    for index in range(steps):
        tool, args, result = _STEPS[index % len(_STEPS)]
        # Arguments differ at every step, as a real agent's do: no cache may hit across steps.
        args = {**args, "step_note": f"step {index}"}
        call_id = f"call_{index}"
        messages.append(
            {
                "role": "assistant",
                "content": f"Step {index}: next action.",
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": tool, "arguments": orjson.dumps(args).decode()},
                    }
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
    return messages

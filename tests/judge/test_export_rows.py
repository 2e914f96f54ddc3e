"""Judge rows exported from a running gateway: each step joined with what the next step observed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from judge.features import N_FEATURES
from judge.labels import make_labels
from judge.rows import load_rows
from router.cli import main as tandem_main

TOOLS = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object", "properties": {}}}}]
TASK = {"role": "user", "content": "<environment_context><cwd>/repo</cwd></environment_context>"}
REQUEST = {"role": "user", "content": "Fix the failing test in calc.py"}


def _call(index: int, command: str) -> list[dict[str, Any]]:
    call = {
        "id": f"c{index}",
        "type": "function",
        "function": {"name": "bash", "arguments": f'{{"command": "{command}"}}'},
    }
    return [{"role": "assistant", "content": None, "tool_calls": [call]}]


def test_exported_rows_carry_the_task_and_whether_the_action_failed(
    make_gateway: Any, client: httpx.Client, tmp_path: Path
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "judge", "record_features": True}})
    history: list[dict[str, Any]] = [TASK, REQUEST]
    results = ["Traceback (most recent call last):\n  File 'calc.py'\nValueError: x", "2 passed"]
    for step in range(3):
        body = {"model": "tandem", "messages": history, "tools": TOOLS}
        response = client.post(f"{server.url}/v1/chat/completions", json=body, headers={"X-Session-ID": "run"})
        assert response.status_code == 200
        if step < 2:
            history = [
                *history,
                *_call(step, "python -m pytest"),
                {"role": "tool", "tool_call_id": f"c{step}", "content": results[step]},
            ]
    out = tmp_path / "rows.jsonl"
    assert tandem_main(["trajectories", "export", "--url", server.url, "--judge-rows", "--out", str(out)]) == 0
    rows = load_rows(out, show_progress=False)
    assert [row["step"] for row in rows] == [1, 2, 3]
    # Step 1's action produced the traceback step 2 was given; step 2's produced a pass; step 3 is last.
    assert [row["action_failed"] for row in rows] == [1, 0, None]
    assert sorted(rows[0]["next_signals"]) == sorted(rows[1]["error_signals"]) == ["error", "traceback"]
    assert all(len(row["features"]) == N_FEATURES and row["draft_features"] is None for row in rows)
    assert rows[0]["task"]  # the trajectory's task, for a teacher
    assert make_labels(rows, "failed").y.tolist() == [1, 0]


def test_exported_rows_label_failures_by_the_harness_status_not_file_content(
    make_gateway: Any, client: httpx.Client, tmp_path: Path
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "judge", "record_features": True}})
    history: list[dict[str, Any]] = [TASK, REQUEST]
    steps = [
        # A file view holding a traceback in a docstring and an except clause: not a failure.
        (
            "cat calc.py",
            '"""\n    Traceback (most recent call last):\n"""\ntry:\n    f()\nexcept ValueError:\n    pass',
        ),
        ("grep -rn parse_week .", "Exit code: 1\n"),  # a search that found nothing: not a failure
        ("python repro.py | head -5", "Traceback (most recent call last):\n  File 'repro.py'\nValueError: x"),
    ]
    for index in range(len(steps) + 1):
        body = {"model": "tandem", "messages": history, "tools": TOOLS}
        response = client.post(f"{server.url}/v1/chat/completions", json=body, headers={"X-Session-ID": "run2"})
        assert response.status_code == 200
        if index < len(steps):
            command, result = steps[index]
            history = [
                *history,
                *_call(index, command),
                {"role": "tool", "tool_call_id": f"c{index}", "content": result},
            ]
    out = tmp_path / "rows.jsonl"
    assert tandem_main(["trajectories", "export", "--url", server.url, "--judge-rows", "--out", str(out)]) == 0
    rows = load_rows(out, show_progress=False)
    assert [row["action_failed"] for row in rows] == [0, 0, 1, None]
    # The error signals (features, not the label) still see the words in each of them.
    assert [bool(row["next_signals"]) for row in rows[:3]] == [True, True, True]


def test_rows_of_a_run_found_by_its_history_say_so(make_gateway: Any, client: httpx.Client, tmp_path: Path) -> None:
    """Retraining leaves such runs out (judge/retrain.py): the row says how its run was found."""
    server = make_gateway(routes={"tandem": {"strategy": "judge", "record_features": True}})
    body = {"model": "tandem", "messages": [TASK, REQUEST], "tools": TOOLS}
    assert client.post(f"{server.url}/v1/chat/completions", json=body).status_code == 200
    assert client.post(f"{server.url}/v1/chat/completions", json=body, headers={"X-Session-ID": "s"}).status_code == 200
    out = tmp_path / "rows.jsonl"
    assert tandem_main(["trajectories", "export", "--url", server.url, "--judge-rows", "--out", str(out)]) == 0
    rows = load_rows(out, show_progress=False)
    assert sorted(str(row.get("stitch")) for row in rows) == ["None", "new"]

"""What a recorded step gives a judge row: the action its answer took, the real task, an excerpt
of the context (the route's privacy applied) and the run's outcome; and a teacher that is shown
them by `tandem judge label`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from router.cli import main as tandem_main
from tests.fake_upstream import FakeUpstream

TOOLS = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object", "properties": {}}}}]
BOILERPLATE = {"role": "user", "content": "<environment_context><cwd>/repo</cwd></environment_context>"}
REQUEST = {"role": "user", "content": "Fix the failing test in calc.py"}
PYTEST = {"kind": "tool_call", "name": "bash", "arguments": '{"command": "python -m pytest -q"}'}
EDIT = {"kind": "tool_call", "name": "bash", "arguments": '{"command": "sed -i s/a/b/ calc.py"}'}
EMAIL = "jane.doe@example.com"


def _run(
    client: httpx.Client, url: str, session: str, results: list[str], stream_last: bool = False, answers: Any = ()
) -> None:
    """A run whose step k is answered with `answers[k]` (whichever target answers it)."""
    history: list[dict[str, Any]] = [BOILERPLATE, REQUEST]
    for index, result in enumerate([*results, None]):
        body: dict[str, Any] = {"model": "tandem", "messages": history, "tools": TOOLS}
        if index < len(answers):
            body["fake"] = answers[index]
        if stream_last and result is None:
            body["stream"] = True
        response = client.post(f"{url}/v1/chat/completions", json=body, headers={"X-Session-ID": session})
        assert response.status_code == 200
        if result is None:
            return
        call = {"id": f"c{index}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
        history = [
            *history,
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{index}", "content": result},
        ]


def _export(url: str, out: Path) -> list[dict[str, Any]]:
    assert tandem_main(["trajectories", "export", "--url", url, "--judge-rows", "--out", str(out)]) == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_rows_carry_action_task_excerpt_and_outcome_and_a_teacher_sees_them(
    make_gateway: Any, edge: FakeUpstream, cloud: FakeUpstream, client: httpx.Client, tmp_path: Path
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "judge", "record_features": True}})
    long_output = "x" * 5000 + "\nFAILED test_calc.py::test_add - assert 3 == 4\n1 failed"
    _run(client, server.url, "run", [long_output, "ok"], stream_last=True, answers=[PYTEST, EDIT, PYTEST])
    posted = client.post(f"{server.url}/v1/trajectories/run/outcome", json={"success": False})
    assert posted.status_code == 200
    rows = _export(server.url, tmp_path / "rows.jsonl")
    assert [row["action"] for row in rows] == ["test", "edit", "test"]  # the last one was streamed
    assert all(row["task"] == "Fix the failing test in calc.py" for row in rows)  # the real task
    assert rows[0]["excerpt"] == "Fix the failing test in calc.py"
    assert rows[1]["excerpt"].endswith("1 failed") and len(rows[1]["excerpt"]) == 400
    assert all(row["outcome"]["success"] is False for row in rows)

    # The record stays small where no row is wanted: no action or excerpt without features.
    plain = make_gateway(routes={"tandem": {"strategy": "edge"}})
    _run(client, plain.url, "plain", ["ok"])
    records = client.get(f"{plain.url}/v1/trajectories/plain").json()["records"]
    assert all("action" not in record and "excerpt" not in record for record in records)

    teacher = FakeUpstream(name="teacher", model="teacher").start()
    try:
        teacher.default = {"kind": "text", "text": '{"cloud_steps": [2]}'}
        labelled = tmp_path / "labelled.jsonl"
        arguments = ["judge", "label", "--data", str(tmp_path / "rows.jsonl"), "--url", teacher.base_url]
        assert tandem_main([*arguments, "--model", "teacher", "--out", str(labelled)]) == 0
        prompt = teacher.received[0].body["messages"][1]["content"]
    finally:
        teacher.stop()
    assert prompt.startswith("Task: Fix the failing test in calc.py\nThe run failed.")
    assert "step 2; answered by" in prompt and "action edit" in prompt and "1 failed" in prompt
    assert [json.loads(line)["teacher_label"] for line in labelled.read_text().splitlines()] == [0, 1, 0]


def test_the_excerpt_keeps_placeholders_on_a_sensitive_route(
    make_gateway: Any, client: httpx.Client, tmp_path: Path
) -> None:
    for privacy in ("redact", "keep_local", "block"):
        # Threshold 1: the judge keeps every step on the edge, so no privacy rule overrides it
        # (a step kept local for privacy is decided without the judge, and has no row).
        route = {"strategy": "judge", "record_features": True, "privacy": privacy, "threshold": 1.0}
        server = make_gateway(routes={"tandem": route})
        _run(client, server.url, privacy, [f"sent the report to {EMAIL}"])
        rows = _export(server.url, tmp_path / f"{privacy}.jsonl")
        text = json.dumps(rows)
        assert EMAIL not in text, privacy
        assert rows[1]["excerpt"] == "sent the report to [EMAIL_1]", privacy

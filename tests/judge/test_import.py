"""`tandem judge import`: one small file per format (tests/judge/trajectories/, written from the
formats' public documentation and source), read into the same rows through `step_features`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from judge.cli import main
from judge.features import FEATURE_NAMES, FEATURE_VERSION, TrajectoryCounters, step_features
from judge.importers import TrajectoryFormatError, read_run
from judge.labels import make_labels
from judge.replay import replay
from judge.rows import JudgeTrainingError, load_rows

FILES = Path(__file__).parent / "trajectories"

# file -> (harness, run id, the actions in order, which of them failed, the real task); the rows'
# family is the harness and its major version (FAMILY below).
EXPECTED: dict[str, tuple[str, str, list[str], list[int | None], str]] = {
    "mini.traj.json": (
        "mini-swe-agent",
        "dates__dates-1",
        ["search", "test", "submit"],
        [0, 1, None],
        "parse_date rejects ISO weeks",
    ),
    "swe.traj": ("swe-agent", "swe", ["search", "execute"], [0, 1], "parse_date rejects ISO weeks"),
    "openhands-events.json": (
        "openhands",
        "openhands-events",
        ["test", "read", "submit"],
        [1, 0, None],
        "parse_date rejects ISO weeks",
    ),
    "claude-session.jsonl": (
        "claude-code",
        "0b5c5a9e-1111-4c2e-9c6f-000000000001",
        ["test", "edit"],
        [1, 0],
        "parse_date rejects ISO weeks, fix it",
    ),
    "codex-rollout.jsonl": (
        "codex",
        "5f0c6e2a-2222-4d1e-8a3b-000000000002",
        ["test", "edit", "other"],
        [1, 0, None],  # the shell's output is JSON holding "1 failed"
        "parse_date rejects ISO weeks, fix it",
    ),
    "terminus-trajectory.json": (
        "terminus-2",
        "c2f3a1d0-3333-4b7e-9a11-000000000003",
        ["search", "search"],
        [0, 0],  # ls's "No such file" is terminal text, no harness status: not a failure
        "Compress every log file in /var/app older than a week.",
    ),
}

FAMILY = {
    "mini.traj.json": "mini-swe-agent-1",
    "swe.traj": "swe-agent-0",
    "openhands-events.json": "openhands-0",
    "claude-session.jsonl": "claude-code-2",
    "codex-rollout.jsonl": "codex-0",
    "terminus-trajectory.json": "terminus-2-2",
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_format_becomes_rows_with_actions_failures_and_the_real_task(name: str) -> None:
    family, run_id, actions, failed, task = EXPECTED[name]
    run = read_run(FILES / name)
    assert (run.family, run.trajectory_id) == (family, run_id)
    rows = list(replay(run))
    assert [row["action"] for row in rows] == actions
    assert [row["action_failed"] for row in rows] == failed
    assert [row["step"] for row in rows] == list(range(1, len(rows) + 1))
    assert all(row["task"] == task and row["family"] == FAMILY[name] for row in rows)
    assert all(row["feature_version"] == FEATURE_VERSION for row in rows)


def test_rows_hold_the_features_the_gateway_computes_for_the_same_state() -> None:
    run = read_run(FILES / "claude-session.jsonl")
    rows = list(replay(run))
    assistants = [i for i, m in enumerate(run.messages) if m["role"] == "assistant"]
    for row, index in zip(rows, assistants, strict=True):
        state = run.messages[:index]
        # Whatever size of body the state came in (a client's JSON formatting, its tool schemas),
        # the vector is the one the import wrote.
        for body_bytes in (0, 1_000, 500_000):
            counters = TrajectoryCounters(step=row["step"], request_bytes=body_bytes)
            served = [round(float(v), 5) for v in step_features(state, counters, run.tools)]
            assert served == row["features"]
    assert "Exit code 1" in rows[1]["excerpt"] and rows[0]["next_signals"] == ["nonzero_exit", "test_failure"]


def test_import_cli_writes_rows_with_outcomes_and_they_train_labels(tmp_path: Path) -> None:
    outcomes = tmp_path / "report.json"
    outcomes.write_bytes(orjson.dumps({"resolved_ids": ["dates__dates-1"], "unresolved_ids": ["swe"]}))
    out = tmp_path / "rows.jsonl.gz"
    assert main(["import", str(FILES), "--out", str(out), "--outcomes", str(outcomes)]) == 0
    rows = load_rows(out, show_progress=False)
    assert {row["family"] for row in rows} == set(FAMILY.values())
    assert len(rows) == sum(len(e[2]) for e in EXPECTED.values())
    by_run = {row["trajectory_id"]: row["outcome"] for row in rows}
    assert by_run["dates__dates-1"] == {"success": True} and by_run["swe"] == {"success": False}
    failed = make_labels(rows, "failed")
    assert failed.positives == sum(f.count(1) for *_, f, _ in EXPECTED.values())
    # The outcome of a replayed run blames every step of a failure evenly, none of a success.
    outcome = make_labels(rows, "outcome")
    labelled = {rows[i]["trajectory_id"]: int(y) for i, y in zip(outcome.rows, outcome.y, strict=True)}
    assert labelled == {"dates__dates-1": 0, "swe": 1}


def test_run_prefix_keeps_two_submissions_of_one_task_apart(tmp_path: Path) -> None:
    # Two models' runs of the same instance share the file's name: the prefix keeps their run ids
    # apart, and the outcomes are still joined by the instance.
    outcomes = tmp_path / "report.json"
    outcomes.write_bytes(orjson.dumps({"swe": False}))
    ids = set()
    for model in ("model-a", "model-b"):
        out = tmp_path / f"{model}.jsonl"
        args = ["import", str(FILES / "swe.traj"), "--out", str(out), "--outcomes", str(outcomes)]
        assert main([*args, "--family", "swe-agent-0", "--run-prefix", f"{model}/"]) == 0
        rows = load_rows(out, show_progress=False)
        assert {row["trajectory_id"] for row in rows} == {f"{model}/swe"}
        assert {row["family"] for row in rows} == {"swe-agent-0"}
        assert all(row["outcome"] == {"success": False} for row in rows)
        ids |= {row["trajectory_id"] for row in rows}
    assert ids == {"model-a/swe", "model-b/swe"}


def test_no_text_rows_leave_the_text_out(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    assert main(["import", str(FILES / "mini.traj.json"), "--out", str(out), "--no-text"]) == 0
    rows = load_rows(out, show_progress=False)
    assert rows and not any(key in row for row in rows for key in ("task", "command", "excerpt"))


BAD: list[tuple[str, bytes, str]] = [
    ("broken.json", b'{"messages": [\n  {"role": "user",\n  "content": }\n]}', r"broken\.json:3: not valid JSON"),
    (
        "lines.jsonl",
        b'{"type":"user","message":{"role":"user","content":"hi"}}\n{"type": oops}\n',
        r"lines\.jsonl:2: not valid JSON",
    ),
    ("unknown.json", b'{"hello": "world"}', r"unknown\.json:1: not a trajectory format this importer knows"),
    ("empty.traj", b"  \n", r"empty\.traj:1: the file is empty"),
    (
        "claude.jsonl",
        b'{"type":"user","message":{"role":"user","content":"hi"}}\n{"type":"assistant","message":"nope"}\n',
        r"claude\.jsonl:2: a assistant line needs a message object",
    ),
    (
        "mini.traj.json",
        b'{"messages": [{"content": "no role"}], "info": {}}',
        r"mini\.traj\.json: a message has no role \(at messages\[0\]\)",
    ),
    (
        "codex.jsonl",
        b'{"type":"session_meta","payload":{"id":"s"}}\n{"type":"response_item","payload":{"type":"message","role":"robot"}}\n',
        r"codex\.jsonl:2: a message item has role 'robot'",
    ),
]


@pytest.mark.parametrize(("name", "content", "message"), BAD, ids=[b[0] for b in BAD])
def test_bad_files_name_the_file_the_line_and_the_problem(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(TrajectoryFormatError, match=message):
        read_run(path)


def test_the_cli_stops_at_a_bad_file_or_skips_it_when_told(tmp_path: Path, capsys: Any) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "good.traj.json").write_bytes((FILES / "mini.traj.json").read_bytes())
    (folder / "bad.traj.json").write_bytes(b"{not json")
    out = tmp_path / "rows.jsonl"
    assert main(["import", str(folder), "--out", str(out)]) == 2
    assert "bad.traj.json:1: not valid JSON" in capsys.readouterr().err
    assert main(["import", str(folder), "--out", str(out), "--keep-going"]) == 0
    captured = capsys.readouterr()
    assert "skipped" in captured.err and "bad.traj.json:1" in captured.err
    assert "wrote 3 rows of 1 runs" in captured.out


def test_rows_with_no_failed_step_are_refused_for_training(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    assert main(["import", str(FILES / "mini.traj.json"), "--out", str(out)]) == 0
    rows = load_rows(out, show_progress=False)
    for row in rows:
        row["action_failed"] = 0 if row["action_failed"] is not None else None
    with pytest.raises(JudgeTrainingError, match="no positive"):
        make_labels(rows, "failed")


def test_the_teacher_is_shown_the_task_the_command_and_what_followed() -> None:
    from judge.label import build_prompt, describe_step

    rows = list(replay(read_run(FILES / "mini.traj.json")))
    line = describe_step(rows[1])
    assert "action test" in line and "command: " in line and "pytest" in line
    assert "errors after it: nonzero_exit, test_failure" in line
    prompt = build_prompt(rows[0]["task"], None, rows)[1]["content"]
    assert prompt.startswith("Task: parse_date rejects ISO weeks")


@pytest.mark.parametrize("store", ["memory", "redis"])
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_gateway_computes_the_features_the_import_wrote(
    name: str, store: str, make_gateway: Any, client: Any, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """One feature path: each imported state, sent to a live gateway as a client would send it
    (its own JSON formatting, the run's tools), is recorded with exactly the import's vector,
    the run's own record included (kept by the memory store and by Redis)."""
    from router.cli import main as tandem_main

    run = read_run(FILES / name)
    rows = list(replay(run))
    redis = {"redis_url": request.getfixturevalue("redis_url")} if store == "redis" else {}
    server = make_gateway(routes={"tandem": {"strategy": "judge", "record_features": True}}, **redis)
    assistants = [i for i, m in enumerate(run.messages) if m["role"] == "assistant"]
    for index in assistants:
        body: dict[str, Any] = {"model": "tandem", "messages": run.messages[:index], "temperature": 0.0}
        if run.tools:
            body["tools"] = run.tools
        # httpx's JSON (spaces after separators, non-ASCII escaped): a body size of its own.
        response = client.post(f"{server.url}/v1/chat/completions", json=body, headers={"X-Session-ID": "replay"})
        assert response.status_code == 200
        # As an agent's next request comes after its tool ran: the step's record is written (the
        # trajectory API waits for the recorder), with the label of the step before it.
        assert client.get(f"{server.url}/v1/trajectories/replay").status_code == 200
    out = tmp_path / "rows.jsonl"
    assert tandem_main(["trajectories", "export", "--url", server.url, "--judge-rows", "--out", str(out)]) == 0
    served = load_rows(out, show_progress=False)
    assert [row["step"] for row in served] == [row["step"] for row in rows]
    for imported, recorded in zip(rows, served, strict=True):
        assert recorded["features"] == imported["features"], f"step {imported['step']}"
    # Where a step before the previous one has a label, the record is not empty: the test
    # compares something.
    at = FEATURE_NAMES.index("run_labelled_log")
    assert [row["features"][at] > 0 for row in rows] == [step >= 3 for step in range(1, len(rows) + 1)]


def _mutate(value: Any, rng: Any) -> Any:
    junk = [None, 1, "x", [], {}, [1], {"a": 1}, True, 2.5, [{"role": 3}], {"type": "user"}]
    if isinstance(value, dict):
        value = {k: _mutate(v, rng) if rng.random() < 0.8 else v for k, v in value.items()}
        if value and rng.random() < 0.7:
            value[rng.choice(list(value))] = rng.choice(junk)
        return value
    if isinstance(value, list):
        value = [_mutate(v, rng) if rng.random() < 0.5 else v for v in value]
        if value and rng.random() < 0.5:
            value[rng.randrange(len(value))] = rng.choice(junk)
    return value


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_damaged_files_give_a_format_error_or_rows_never_a_crash(name: str, tmp_path: Path) -> None:
    import random

    rng = random.Random(name)
    raw = (FILES / name).read_bytes()
    lines = name.endswith(".jsonl")
    document = [orjson.loads(line) for line in raw.splitlines() if line.strip()] if lines else orjson.loads(raw)
    outcomes = {"rows": 0, "errors": 0}
    for attempt in range(60):
        damaged = [_mutate(d, rng) for d in document] if lines else _mutate(document, rng)
        path = tmp_path / f"{attempt}-{name}"
        path.write_bytes(b"\n".join(orjson.dumps(d) for d in damaged) if lines else orjson.dumps(damaged))
        try:
            list(replay(read_run(path)))
            outcomes["rows"] += 1
        except TrajectoryFormatError as exc:
            assert str(exc).startswith(str(path))  # names the file
            outcomes["errors"] += 1
    assert outcomes["errors"] > 0  # the damage was seen, and reported as such


def test_a_claude_code_result_flagged_as_an_error_labels_its_step_failed(tmp_path: Path) -> None:
    """Claude Code's transcript keeps `is_error` on a tool result: the imported step failed, and
    its result reads as the gateway's Messages surface shows a flagged one to the model."""
    lines = [
        {"type": "user", "sessionId": "s1", "message": {"role": "user", "content": "open the PR"}},
        {
            "type": "assistant",
            "message": {
                "id": "m1",
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "mcp__github__create_pull_request", "input": {}}],
            },
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": True, "content": "Not Found"}],
            },
        },
        {
            "type": "assistant",
            "message": {"id": "m2", "role": "assistant", "content": [{"type": "text", "text": "I could not."}]},
        },
    ]
    path = tmp_path / "flagged.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(line) for line in lines) + b"\n")
    run = read_run(path)
    assert run.messages[2]["content"] == "[tool error] Not Found"
    rows = list(replay(run))
    assert rows[0]["action_failed"] == 1 and rows[0]["failure"] == "tool error"


def test_an_openhands_error_observation_labels_its_step_failed(tmp_path: Path) -> None:
    """An event stream's `error` observation reads as CodeAct shows it to its model (the error,
    then `[Error occurred in processing last action]`): the step failed, whatever the error says."""
    history = [
        {"id": 0, "source": "agent", "action": "system", "args": {"content": "You are OpenHands agent."}},
        {"id": 1, "source": "user", "action": "message", "args": {"content": "Fix the parser."}},
        {"id": 2, "source": "agent", "action": "read", "args": {"path": "/w/nope.py", "thought": "look"}},
        {"id": 3, "source": "agent", "observation": "error", "content": "File not found: /w/nope.py", "cause": 2},
        {"id": 4, "source": "agent", "action": "run", "args": {"command": "sleep 600", "thought": "wait"}},
        {
            "id": 5,
            "source": "agent",
            "observation": "run",
            "content": "\n[The command timed out after 120.0 seconds. You may wait longer to see additional output]",
            "cause": 4,
            "extras": {"metadata": {"exit_code": -1}},
        },
        {"id": 6, "source": "agent", "action": "finish", "args": {}},
    ]
    path = tmp_path / "output.json"
    path.write_bytes(orjson.dumps({"instance_id": "demo-1", "history": history}))
    run = read_run(path)
    assert run.messages[3]["content"] == "File not found: /w/nope.py\n[Error occurred in processing last action]"
    rows = list(replay(run))
    assert [row["failure"] for row in rows[:2]] == ["openhands error message", "openhands error message"]


def test_openhands_evaluation_output_is_one_run_a_line(tmp_path: Path) -> None:
    """OpenHands' evaluation writes `output.jsonl`: one instance a line, its event stream under
    `history`, its result beside it. Each line is a run of its own, named by its instance."""

    def instance(name: str, code: int) -> dict[str, Any]:
        history = [
            {"id": 0, "source": "agent", "action": "system", "args": {"content": "You are OpenHands agent."}},
            {"id": 1, "source": "user", "action": "message", "args": {"content": f"Fix {name}."}},
            {"id": 2, "source": "agent", "action": "run", "args": {"command": "python -m pytest", "thought": "t"}},
            {
                "id": 3,
                "source": "agent",
                "observation": "run",
                "content": "1 failed" if code else "1 passed",
                "cause": 2,
                "extras": {"metadata": {"exit_code": code}},
            },
            {"id": 4, "source": "agent", "action": "finish", "args": {}},
        ]
        return {"instance_id": name, "history": history, "report": {"resolved": code == 0}, "metadata": {}}

    path = tmp_path / "output.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(instance(n, c)) for n, c in (("a__a-1", 1), ("b__b-2", 0))) + b"\n")
    out = tmp_path / "rows.jsonl"
    assert main(["import", str(tmp_path), "--out", str(out)]) == 0
    rows = load_rows(out)
    assert sorted({row["trajectory_id"] for row in rows}) == ["a__a-1", "b__b-2"]
    failed = {row["trajectory_id"]: row["action_failed"] for row in rows if row["step"] == 1}
    assert failed == {"a__a-1": 1, "b__b-2": 0}

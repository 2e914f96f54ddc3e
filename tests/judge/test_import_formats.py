"""Files of several runs (tests/judge/formats/, written by hand in public formats): the OpenHands
agent SDK's evaluation output, tau2-bench results, chat logs. Each run is read as the chat its
model saw, with the harness-status label; a run with no step is left out and said (its line and
id), the others read; a format that cannot be read faithfully is refused, file by file."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from judge.cli import main
from judge.importers import Run, TrajectoryFormatError, family_of, read_run, read_runs
from judge.replay import replay
from judge.rows import load_rows
from judge.status import TOOL_ERROR_MARKER

FORMATS = Path(__file__).parent / "formats"
SDK = FORMATS / "openhands-sdk-output.jsonl"
TAU2 = FORMATS / "tau2-results.json"


def _runs(path: Path) -> tuple[dict[str, Run], list[str]]:
    left_out: list[str] = []
    return {run.trajectory_id: run for run in read_runs(path, left_out)}, left_out


def _calls(run: Run) -> list[list[str]]:
    return [[c["function"]["name"] for c in m["tool_calls"]] for m in run.messages if m.get("tool_calls")]


def test_openhands_sdk_output_reads_as_the_chat_its_model_saw() -> None:
    runs, left_out = _runs(SDK)
    assert sorted(runs) == ["calc__round-1", "notes__summary-2"]
    assert {family_of(run) for run in runs.values()} == {"openhands-1"}  # not the trained openhands-0
    old, new = runs["calc__round-1"], runs["notes__summary-2"]
    # The tools the model called, by name; two calls of one response are one turn.
    assert _calls(old) == [
        ["execute_bash"],
        ["str_replace_editor"],
        ["str_replace_editor"],
        ["execute_bash", "str_replace_editor"],
        ["execute_bash"],
        ["finish"],
    ]
    assert _calls(new) == [["terminal"], ["web_search"], ["file_editor"]]
    # The evaluation's instruction is the first message where the history holds none.
    assert old.messages[0] == {"role": "user", "content": orjson.loads(SDK.read_bytes().splitlines()[0])["instruction"]}
    assert [m["role"] for m in new.messages[:2]] == ["system", "user"]
    results = [m["content"] for m in old.messages if m["role"] == "tool"]
    # A command's result as the SDK shows it: output, its suffix, then directory and exit code.
    assert results[0].endswith(
        "[The command completed with exit code 1.]\n[Current working directory: /workspace/calc]\n"
        "[Python interpreter: /usr/local/bin/python]\n[Command finished with exit code 1]"
    )
    assert results[1].startswith(TOOL_ERROR_MARKER + "Invalid `path` parameter: /workspace/calc/round.py")
    assert results[2] == "File created successfully at: /workspace/calc/test_round.py"
    assert results[5].startswith(TOOL_ERROR_MARKER + "[There was an error during command execution.]\nERROR:")
    new_results = [m["content"] for m in new.messages if m["role"] == "tool"]
    assert new_results == [
        "12 /workspace/notes.txt\n[Current working directory: /workspace]\n[Command finished with exit code 0]",
        TOOL_ERROR_MARKER + "Tool 'web_search' not found. Available: ['terminal', 'file_editor', 'finish']",
        TOOL_ERROR_MARKER + "[An error occurred during execution.]\n"
        "The path /workspace/summary.md does not exist. Please provide a valid path.",
    ]
    assert old.meta["model"] == "litellm_proxy/gpt-4o-2024-08-06"
    # The instance the agent never ran is left out, by its line and id, with the evaluation's error.
    assert left_out == [
        f"{SDK}:3: run 'calc__empty-3' left out: no agent step (empty history); "
        "the evaluation's error: RuntimeError: sandbox failed to start"
    ]


def test_openhands_sdk_steps_carry_their_actions_and_the_harness_status() -> None:
    runs, _ = _runs(SDK)
    old = list(replay(runs["calc__round-1"]))
    assert [row["action"] for row in old] == ["test", "read", "write", "search", "edit", "submit"]
    # failing tests (exit 1), a view of a missing path, a create, a grep and a view, a refused
    # command line (the SDK's error flag, no exit code), the finish.
    assert [row["action_failed"] for row in old] == [1, 1, 0, 0, 1, 0]
    new = list(replay(runs["notes__summary-2"]))
    assert [row["action_failed"] for row in new] == [0, 1, 1, None]
    assert {row["family"] for row in old + new} == {"openhands-1"}


def test_the_import_says_which_instance_it_left_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rows.jsonl"
    assert main(["import", str(SDK), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert f"{SDK}:3: run 'calc__empty-3' left out" in captured.err
    assert "wrote 10 rows of 2 runs" in captured.out and "1 run(s) with no step left out" in captured.out
    assert {row["family"] for row in load_rows(out, show_progress=False)} == {"openhands-1"}


def _sdk_action(kind: str, **fields: Any) -> dict[str, Any]:
    call = {"id": "call_1", "name": "execute_bash", "arguments": '{"command": "ls"}'}
    return {"kind": kind, "source": "agent", "thought": [], "tool_call": call, "llm_response_id": "r1", **fields}


@pytest.mark.parametrize(
    ("history", "problem"),
    [
        # SDK events whose action is an object: never an OpenHands 0.x run with tools named by it
        (
            [{"source": "agent", "action": {"kind": "ExecuteBashAction", "command": "ls"}}],
            "not an OpenHands event this importer reads",
        ),
        ([_sdk_action("ActionEvent", tool_call=None)], "an ActionEvent needs a tool_call with a name"),
        (
            [
                _sdk_action("ActionEvent"),
                {"kind": "ObservationEvent", "tool_call_id": "call_1", "observation": {"x": 1}},
            ],
            "holds none of content, output, message",
        ),
        (
            [_sdk_action("ActionEvent"), {"kind": "ShinyNewObservation", "tool_call_id": "call_1"}],
            "answers a tool call: not read",
        ),
    ],
)
def test_an_event_stream_that_cannot_be_read_faithfully_is_refused(
    tmp_path: Path, history: list[Any], problem: str
) -> None:
    path = tmp_path / "output.jsonl"
    good = SDK.read_bytes().splitlines()[0]
    path.write_bytes(good + b"\n" + orjson.dumps({"instance_id": "x-2", "history": history}) + b"\n")
    with pytest.raises(TrajectoryFormatError, match=problem) as caught:
        read_runs(path)
    assert str(caught.value).startswith(f"{path}:2: ")  # the file and the instance's line


def test_one_sdk_event_stream_is_one_run(tmp_path: Path) -> None:
    """The events of one conversation, as a JSON list: the same reader, the same family."""
    events = orjson.loads(SDK.read_bytes().splitlines()[1])["history"]
    path = tmp_path / "events.json"
    path.write_bytes(orjson.dumps(events))
    run = read_run(path)
    assert family_of(run) == "openhands-1" and _calls(run) == [["terminal"], ["web_search"], ["file_editor"]]
    path.write_bytes(orjson.dumps([e for e in events if e["kind"] in ("SystemPromptEvent", "MessageEvent")][:2]))
    with pytest.raises(TrajectoryFormatError, match="no agent step"):
        read_run(path)


def test_a_tau2_results_file_is_one_run_per_simulation() -> None:
    runs, left_out = _runs(TAU2)
    retail, telecom = (
        runs["tau2-results-task40-trial0"],
        runs["tau2-results-task[mobile_data_issue]airplane_mode_on-trial1"],
    )
    assert {family_of(run) for run in runs.values()} == {"tau2-bench-1"}
    assert (retail.outcome, telecom.outcome) == ({"success": True}, {"success": False})
    assert retail.meta["model"] == "gpt-4.1"
    # The agent's system prompt holds the domain's policy; its calls are in the chat's shape.
    system = retail.messages[0]
    assert system["role"] == "system" and "# Retail agent policy" in system["content"]
    assert retail.messages[3]["tool_calls"][0]["function"] == {
        "name": "find_user_id_by_email",
        "arguments": '{"email": "ada@example.com"}',
    }
    # The simulated user's own tool call and its result went to the user, not to the agent.
    text = orjson.dumps(telecom.messages).decode()
    assert "check_status_bar" not in text and "Status Bar" not in text
    assert [m["content"] for m in telecom.messages if m["role"] == "user"] == [
        "My phone has no mobile data.",
        "Airplane mode is on.",
        "Done. ###STOP###",
    ]
    assert left_out == [f"{TAU2}: run 'tau2-results-task41-trial0' left out: no agent turn (at simulations[2])"]


def test_tau2_steps_fail_by_the_harness_status_alone(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    assert main(["import", str(TAU2), "--out", str(out)]) == 0
    rows = load_rows(out, show_progress=False)
    failed = {(row["trajectory_id"].rsplit("-", 2)[-2], row["step"]): row["action_failed"] for row in rows}
    # the greeting, a lookup, a lookup the harness answered `Error: Order not found` (error: true),
    # the lookup again, the answer; the telecom run's refused call.
    assert [failed[("task40", step)] for step in range(1, 6)] == [0, 0, 1, 0, 0]
    assert [failed[("task[mobile_data_issue]airplane_mode_on", step)] for step in range(1, 6)] == [0, 0, 0, 1, 0]
    assert {row["family"] for row in rows} == {"tau2-bench-1"}


def test_a_tau2_error_flag_without_its_text_still_fails_the_step(tmp_path: Path) -> None:
    document = orjson.loads(TAU2.read_bytes())
    document["simulations"][0]["messages"][5]["content"] = "order lookup refused"  # error: true kept
    path = tmp_path / "results.json"
    path.write_bytes(orjson.dumps(document))
    rows = list(replay(read_runs(path)[0]))
    assert [row["action_failed"] for row in rows] == [0, 0, 1, 0, 0]


def test_tau2_results_saved_as_a_folder_are_named_as_such(tmp_path: Path) -> None:
    document = orjson.loads(TAU2.read_bytes())
    document["simulations"] = []
    document["simulation_index"] = [{"id": "x", "task_id": "40"}]
    path = tmp_path / "results.json"
    path.write_bytes(orjson.dumps(document))
    with pytest.raises(TrajectoryFormatError, match="simulations/ folder"):
        read_runs(path)


def _conversation(command: str, result: str) -> list[dict[str, Any]]:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "bash", "arguments": orjson.dumps({"command": command}).decode()},
    }
    return [
        {"role": "user", "content": "Fix the date parser."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": result},
        {"role": "assistant", "content": "Done."},
    ]


def test_an_empty_conversation_is_left_out_by_its_line_and_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "log.jsonl"
    lines = [
        {"id": "a", "messages": _conversation("ls", "calc.py")},
        {"id": "b", "messages": [{"role": "user", "content": "task"}]},  # the agent never answered
        {"id": "c", "messages": _conversation("ls x", "Exit code: 2")},
    ]
    log.write_bytes(b"\n".join(orjson.dumps(line) for line in lines) + b"\n")
    out = tmp_path / "rows.jsonl"
    assert main(["import", str(log), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert f"{log}:2: run 'b' left out: a conversation with no assistant message" in captured.err
    assert "wrote 4 rows of 2 runs" in captured.out
    assert {row["trajectory_id"] for row in load_rows(out, show_progress=False)} == {"a", "c"}
    # In a JSON list, by its place; a file of that one conversation is an error.
    many = tmp_path / "many.json"
    many.write_bytes(orjson.dumps([line["messages"] for line in lines]))
    left_out: list[str] = []
    assert [run.trajectory_id for run in read_runs(many, left_out)] == ["many-1", "many-3"]
    assert left_out == [
        f"{many}: run 'many-2' left out: a conversation with no assistant message: no step to read (at [1])"
    ]
    one = tmp_path / "one.json"
    one.write_bytes(orjson.dumps(lines[1]))
    with pytest.raises(TrajectoryFormatError, match="no assistant message"):
        read_runs(one)


def test_a_bad_message_in_a_chat_log_names_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "log.jsonl"
    bad = {"id": "b", "messages": [{"role": "user", "content": "task"}, {"role": "assistant", "content": 5}]}
    good = {"id": "a", "messages": _conversation("ls", "a.py")}
    log.write_bytes(orjson.dumps(good) + b"\n" + orjson.dumps(bad) + b"\n")
    out = tmp_path / "rows.jsonl"
    assert main(["import", str(log), "--out", str(out)]) == 2
    assert f"{log}:2: content must be a string or a list of parts, got int (at messages[1])" in capsys.readouterr().err


RECORDING = (
    "\x1b[?2004hroot@f88279b9562d:/app# asciinema rec --stdin /logs/agent.cast\r\n"
    "\x1b[?2004l\r\x1b[0;32masciinema: recording asciicast to /logs/agent.cast\x1b[0m\r\n"
    "\x1b[?2004hroot@f88279b9562d:/app# source /installed-agent/install-agent.sh && echo 'INSTALL_SUCCESS'\r\n"
    "Reading package lists... Done\r\nINSTALL_SUCCESS\r\n"
    "\x1b[?2004hroot@f88279b9562d:/app# openhands --task 'Fix the git history' \r\n"
    "\x1b[?2004hroot@f88279b9562d:/app# exit\r\n"
)


@pytest.mark.parametrize("name", ["agent.log", "session.txt"])
def test_another_harness_terminal_recording_is_named_as_one(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """terminal-bench keeps every agent's terminal as `sessions/agent.log`: only mini-swe-agent's
    console output is read from one; another harness's is said to be a recording not read, not
    a JSON file with a syntax error."""
    log = tmp_path / name
    log.write_text(RECORDING)
    assert main(["import", str(log), "--out", str(tmp_path / "rows.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "a terminal recording this importer does not read" in err and "mini-swe-agent" in err
    assert "not valid JSON" not in err
    # A JSON file broken somewhere is still told by its syntax error.
    broken = tmp_path / "run.log"
    broken.write_text('{"messages": [\n')
    with pytest.raises(TrajectoryFormatError, match="not valid JSON"):
        read_runs(broken)


def _mutate(value: Any, rng: random.Random) -> Any:
    junk = [None, 1, "x", [], {}, [1], {"a": 1}, True, 2.5, [{"role": 3}], {"kind": "ActionEvent"}]
    if isinstance(value, dict):
        value = {k: _mutate(v, rng) if rng.random() < 0.8 else v for k, v in value.items()}
        if value and rng.random() < 0.5:
            value[rng.choice(list(value))] = rng.choice(junk)
        return value
    if isinstance(value, list):
        value = [_mutate(v, rng) if rng.random() < 0.5 else v for v in value]
        if value and rng.random() < 0.4:
            value[rng.randrange(len(value))] = rng.choice(junk)
    return value


@pytest.mark.parametrize("path", [SDK, TAU2], ids=lambda p: p.name)
def test_damaged_files_give_a_format_error_or_rows_never_a_crash(path: Path, tmp_path: Path) -> None:
    rng = random.Random(path.name)
    lines = path.name.endswith(".jsonl")
    raw = path.read_bytes()
    document = [orjson.loads(line) for line in raw.splitlines() if line.strip()] if lines else orjson.loads(raw)
    outcomes = {"rows": 0, "errors": 0}
    for attempt in range(60):
        damaged = [_mutate(d, rng) for d in document] if lines else _mutate(document, rng)
        broken = tmp_path / f"{attempt}-{path.name}"
        broken.write_bytes(b"\n".join(orjson.dumps(d) for d in damaged) if lines else orjson.dumps(damaged))
        try:
            for run in read_runs(broken, []):
                list(replay(run))
            outcomes["rows"] += 1
        except TrajectoryFormatError as exc:
            assert str(exc).startswith(str(broken))  # names the file
            outcomes["errors"] += 1
    assert outcomes["errors"] > 0 and outcomes["rows"] > 0

"""Plain OpenAI chat logs import as runs (a JSON-lines file of conversations, a JSON array, one per
file), with `--family`; a file that is no known format is named with what was expected."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from judge.cli import main
from judge.features import feature_index
from judge.rows import load_rows


def conversation(command: str, result: str, answer: str = "Done.") -> list[dict[str, Any]]:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "bash", "arguments": orjson.dumps({"command": command}).decode()},
    }
    return [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the date parser."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": result},
        {"role": "assistant", "content": answer},
    ]


def write_folder(folder: Path) -> None:
    folder.mkdir()
    failing = conversation("python -m pytest -q | tail -2", "E   AssertionError\n=== 1 failed, 3 passed in 0.1s ===")
    lines = [
        orjson.dumps(failing),
        orjson.dumps({"id": "quiet", "messages": conversation("grep -rn parse_week src/", "Exit code: 1\n")}),
    ]
    (folder / "log.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    (folder / "one.json").write_bytes(orjson.dumps(conversation("cat dates.py", "Traceback (most recent call last):")))
    many = [
        {"messages": conversation("ls", "a.py"), "resolved": True},
        {"messages": conversation("ls x", "Exit code: 2")},
    ]
    (folder / "many.json").write_bytes(orjson.dumps(many))
    (folder / "results.json").write_bytes(orjson.dumps({"resolved_ids": ["x"]}))  # not a run
    (folder / "notes.txt").write_text("what the runs were for\n")  # not read, and said so


def test_a_folder_of_chat_logs_imports_with_the_family_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_folder(tmp_path / "chats")
    out = tmp_path / "rows.jsonl"
    assert main(["import", str(tmp_path / "chats"), "--out", str(out), "--family", "my-agent-1"]) == 0
    rows = load_rows(out, show_progress=False)
    first = {row["trajectory_id"]: row for row in rows if row["step"] == 1}
    assert set(first) == {"log-1", "quiet", "one", "many-1", "many-2"}
    assert {row["family"] for row in rows} == {"my-agent-1"}
    # The harness-status label: a failing run behind a pipe, a search that found nothing, a file
    # view holding a traceback, a listing, a non-zero exit.
    assert {tid: row["action_failed"] for tid, row in first.items()} == {
        "log-1": 1,
        "quiet": 0,
        "one": 0,
        "many-1": 0,
        "many-2": 1,
    }
    assert first["many-1"]["outcome"] == {"success": True}
    assert all(row["action_failed"] is None for row in rows if row["step"] == 2)  # nothing followed
    err = capsys.readouterr().err
    assert "passed over" in err and "results.json" in err and "expected one of" in err
    assert "not read: 1 file(s) whose names are not a trajectory's (.txt)" in err


def test_without_a_family_chat_logs_are_openai_chat(tmp_path: Path) -> None:
    (tmp_path / "c.jsonl").write_bytes(orjson.dumps(conversation("ls", "a.py")) + b"\n")
    out = tmp_path / "rows.jsonl"
    assert main(["import", str(tmp_path / "c.jsonl"), "--out", str(out)]) == 0
    assert {row["family"] for row in load_rows(out, show_progress=False)} == {"openai-chat"}


def test_an_unknown_file_is_named_with_what_was_expected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "notes.json"
    bad.write_bytes(orjson.dumps({"title": "not a run"}))
    assert main(["import", str(bad), "--out", str(tmp_path / "rows.jsonl")]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "expected one of" in err and "OpenAI chat log" in err
    # A folder holding only files that are no run says so, with each file's reason.
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "results.json").write_bytes(orjson.dumps({"resolved_ids": []}))
    assert main(["import", str(folder), "--out", str(tmp_path / "rows.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "no trajectory was read" in err and "results.json" in err and "expected one of" in err


def test_a_chat_log_line_that_is_no_conversation_is_named_by_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(orjson.dumps(conversation("ls", "a.py")) + b"\n" + orjson.dumps([{"role": "user"}, 3]) + b"\n")
    assert main(["import", str(log), "--out", str(tmp_path / "rows.jsonl")]) == 2
    err = capsys.readouterr().err
    assert f"{log}:2" in err and "expected" in err


def test_the_older_function_calling_shape_reads_as_tool_calls(tmp_path: Path) -> None:
    """`function_call` and `function` messages (and `functions`) from before tool calls."""
    arguments = orjson.dumps({"command": "python calc.py"}).decode()
    messages = [
        {"role": "user", "content": "Fix calc.py."},
        {"role": "assistant", "content": None, "function_call": {"name": "bash", "arguments": arguments}},
        {"role": "function", "name": "bash", "content": "Traceback (most recent call last):\nZeroDivisionError: x"},
        {"role": "assistant", "content": None, "function_call": {"name": "shell", "arguments": arguments}},
        {"role": "function", "name": "shell", "content": "ok"},
        {"role": "assistant", "content": "Done."},
    ]
    functions = [{"name": "bash", "parameters": {"type": "object", "properties": {}}}]
    (tmp_path / "old.jsonl").write_bytes(orjson.dumps({"messages": messages, "functions": functions}) + b"\n")
    out = tmp_path / "rows.jsonl"
    assert main(["import", str(tmp_path / "old.jsonl"), "--out", str(out), "--family", "legacy-0"]) == 0
    rows = load_rows(out, show_progress=False)
    assert [row["action"] for row in rows] == ["execute", "execute", "other"]
    assert [row["action_failed"] for row in rows] == [1, 0, None]  # the traceback the call produced
    # The declared functions are the run's tools: a call of one not declared is an invalid call.
    assert rows[2]["features"][feature_index("invalid_last")] == 1.0
    assert rows[1]["features"][feature_index("invalid_last")] == 0.0

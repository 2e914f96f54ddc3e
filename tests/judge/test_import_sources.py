"""The formats of the training sources: tau-bench results files and mini-swe-agent's console output
as a terminal recorder keeps it (terminal-bench's `sessions/agent.log`), read into runs whose rows
carry the family and the harness-status label."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from judge.cli import main
from judge.importers import TrajectoryFormatError, read_runs
from judge.rows import load_rows

ESC = "\x1b"


def tau_run(task_id: int, reward: float, result: str) -> dict[str, Any]:
    call = {"id": "c1", "type": "function", "function": {"name": "update_reservation_flights", "arguments": "{}"}}
    return {
        "task_id": task_id,
        "trial": 0,
        "reward": reward,
        "info": {},
        "traj": [
            {"role": "system", "content": "# Airline Agent Policy"},
            {"role": "user", "content": "Move my flight to the 13th."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "name": "update_reservation_flights", "content": result},
            {"role": "assistant", "content": "Done, anything else?"},
            {"role": "user", "content": "No, thanks.###STOP###"},
        ],
    }


def test_a_tau_bench_results_file_is_one_run_per_entry(tmp_path: Path) -> None:
    path = tmp_path / "gpt-4o-airline.json"
    failed = "Error: flight HAT030 not available on date 2024-05-13"
    path.write_bytes(orjson.dumps([tau_run(13, 0.0, failed), tau_run(14, 1.0, '{"reservation_id": "X"}')]))
    out = tmp_path / "rows.jsonl"
    assert main(["import", str(path), "--out", str(out)]) == 0
    rows = load_rows(out, show_progress=False)
    assert {row["family"] for row in rows} == {"tau-bench-tool-calling"}
    by_run = {(row["trajectory_id"], row["step"]): row for row in rows}
    assert by_run[("gpt-4o-airline-task13-trial0", 1)]["action_failed"] == 1
    assert by_run[("gpt-4o-airline-task14-trial0", 1)]["action_failed"] == 0
    assert by_run[("gpt-4o-airline-task13-trial0", 2)]["action_failed"] == 0  # a reply to the customer
    assert by_run[("gpt-4o-airline-task14-trial0", 1)]["outcome"] == {"success": True}
    assert by_run[("gpt-4o-airline-task13-trial0", 1)]["outcome"] == {"success": False}


def coloured(text: str, code: str = "1;31") -> str:
    return f"{ESC}[{code}m{text}{ESC}[0m"


def spinner() -> str:
    return f"{ESC}[32m⠹{ESC}[0m Waiting for the LM to respond...\r{ESC}[2K"


def console_log() -> str:
    noise = (
        "04:07:00 - LiteLLM:ERROR: litellm_logging.py:4483 - Error creating standard logging object\r\n"
        'Traceback (most recent call last):\r\n  File "proxy_server.py", line 74, in <module>\r\n'
        "    import backoff\r\nModuleNotFoundError: No module named 'backoff'\r\n"
    )
    retry = spinner() + "Give Feedback / Get Help: https://github.com/BerriAI/litellm/issues/new\r\n"
    retry += (
        spinner() + "Retrying minisweagent.models.litellm_model.LitellmModel._query in 4.0 seconds as it raised\r\n"
    )
    retry += "- Server disconnected without sending a response.\r\n"
    step = coloured("mini-swe-agent") + coloured(" (step ", "31") + coloured("{n}") + coloured(", ", "31")
    step += coloured("$0.01") + coloured("):", "31") + "\r\n"
    user = "\r\n" + coloured("User", "1;32") + ":\r\n"
    rule = "─" * 60 + "\r\n"
    parts = [
        "root@box:/app# mini -m anthropic/claude-sonnet-4 -t 'Map the maze' -y --exit-immediately\r\n",
        coloured("System", "1;34") + ":\r\nYou are a helpful assistant that can interact with a computer.\r\n",
        user + "Please solve this issue: Map the maze.\r\n" + rule,
        spinner() + step.format(n=1) + spinner() + "THOUGHT: look.\r\n\r\n```bash\r\nls -la\r\n```\r\n",
        user + noise + "<returncode>0</returncode>\r\n<output>\r\nmaze_game.sh\r\n</output>\r\n" + rule + retry,
        step.format(n=2) + "THOUGHT: play.\r\n\r\n```bash\r\n./maze_game.sh\r\n```\r\n",
        user + "The last command <command>./maze_game.sh</command>  \r\ntimed out and has been killed.\r\n"
        "The output of the command was:\r\n <output>\r\n> \r\n</output>\r\n" + rule,
        step.format(n=3) + "THOUGHT: kill it.\r\n\r\n```bash\r\nps aux | grep maze | xargs kill || true\r\n```\r\n",
        user + "<returncode>0</returncode>\r\n<output>\r\n/bin/sh: 1: ps: not found\r\n</output>\r\n" + rule,
        step.format(n=4) + "THOUGHT: done.\r\n\r\n```bash\r\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\r\n```\r\n",
        user + noise + "Saved trajectory to '/root/.config/mini-swe-agent/last_mini_run.traj.json'\r\n",
        "root@box:/app# \r\nexit\r\n",
    ]
    return "".join(parts)


def write_trial(folder: Path, resolved: bool) -> Path:
    log = folder / "sessions" / "agent.log"
    log.parent.mkdir(parents=True)
    log.write_text(console_log())
    trial = {"trial_name": folder.name, "task_id": "maze", "is_resolved": resolved}
    (folder / "results.json").write_bytes(orjson.dumps(trial))
    return log


def test_a_console_log_reads_as_the_chat_the_model_saw(tmp_path: Path) -> None:
    log = write_trial(tmp_path / "maze.1-of-1.run", resolved=True)
    [run] = read_runs(log)
    assert run.trajectory_id == "maze.1-of-1.run"
    assert run.outcome == {"success": True}
    assert [m["role"] for m in run.messages] == ["system", "user"] + ["assistant", "user"] * 3 + ["assistant"]
    text = "\n".join(str(m["content"]) for m in run.messages)
    # The terminal's additions are gone: colour codes, the spinner, other libraries' log lines.
    for left_out in (ESC, "Waiting for the LM", "LiteLLM", "backoff", "Saved trajectory", "───", "Retrying"):
        assert left_out not in text, left_out
    assert run.messages[3]["content"] == "<returncode>0</returncode>\n<output>\nmaze_game.sh\n</output>"


def test_a_console_log_imports_with_the_harness_status_label(tmp_path: Path) -> None:
    write_trial(tmp_path / "runs" / "maze.1-of-1.run", resolved=False)
    out = tmp_path / "rows.jsonl"
    log = tmp_path / "runs" / "maze.1-of-1.run" / "sessions" / "agent.log"
    assert main(["import", str(log), "--out", str(out), "--family", "mini-swe-agent-1"]) == 0
    rows = load_rows(out, show_progress=False)
    assert [row["action_failed"] for row in rows] == [0, 1, 1, None]  # listing, timeout, not found, submit
    assert {row["family"] for row in rows} == {"mini-swe-agent-1"}
    assert rows[0]["outcome"] == {"success": False}


def test_a_recording_where_the_agent_never_ran_is_named_as_no_run(tmp_path: Path) -> None:
    log = tmp_path / "agent.log"
    log.write_text("root@box:/app# mini -m m -t 'x'\r\nbash: mini: command not found\r\nroot@box:/app# exit\r\n")
    with pytest.raises(TrajectoryFormatError, match=r"agent\.log"):
        read_runs(log)


def completion_log(tool_result: str) -> dict[str, Any]:
    call = {
        "id": "toolu_01",
        "type": "function",
        "function": {"name": "execute_bash", "arguments": '{"command": "ls"}'},
    }
    messages = [
        {"role": "system", "content": "You are OpenHands agent."},
        {"role": "user", "content": "<issue_description>Fix the parser.</issue_description>"},
        {"role": "assistant", "content": "Let me look.", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "toolu_01", "name": "execute_bash", "content": tool_result},
    ]
    answer = {"role": "assistant", "content": "Done."}
    return {
        "messages": [{"role": "user", "content": "the same chat, as plain text"}],
        "fncall_messages": messages,
        "fncall_response": {"model": "claude-3-5-sonnet", "choices": [{"message": answer}]},
        "cost": 0.1,
    }


def test_an_openhands_completion_log_is_the_run_of_its_instance(tmp_path: Path) -> None:
    folder = tmp_path / "trajs" / "django__django-13449"
    folder.mkdir(parents=True)
    failed = "ls: cannot access 'x'\n[The command completed with exit code 2.]\n[Current working directory: /w]"
    (folder / "Claude-3.5-Sonnet(Oct)-1743405761.3.json").write_bytes(orjson.dumps(completion_log(failed)))
    report = tmp_path / "results.json"
    report.write_bytes(orjson.dumps({"resolved": ["django__django-13449"], "unresolved_ids": []}))
    out = tmp_path / "rows.jsonl"
    assert main(["import", str(tmp_path / "trajs"), "--outcomes", str(report), "--out", str(out)]) == 0
    rows = load_rows(out, show_progress=False)
    run = "django__django-13449.Claude-3.5-Sonnet(Oct)-1743405761.3"  # not the instance alone: other agents ran it
    assert [(row["trajectory_id"], row["step"], row["action_failed"]) for row in rows] == [
        (run, 1, 1),
        (run, 2, None),  # the run's last answer: nothing followed it
    ]
    assert {row["family"] for row in rows} == {"openhands-0"}
    assert rows[0]["outcome"] == {"success": True}

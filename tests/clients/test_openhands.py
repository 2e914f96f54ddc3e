"""The OpenHands SDK (V1, PyPI openhands-sdk + openhands-tools, in its own Python 3.12
virtualenv) through the gateway's chat completions: a two-step task with a terminal tool round
trip after an injected upstream error, and a context overflow it must recognise as one."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.clients.harness import ALIASES, OVERFLOW, ROUTES, SERVER_ERROR, installed, main_records, run, trajectories
from tests.clients.runs import RunScript, assert_uncrossed, twice_in_a_row_and_twice_at_once
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

SCRIPT = Path(__file__).with_name("run_openhands.py")


@pytest.fixture()
def server(make_gateway: Callable[..., GatewayServer]) -> GatewayServer:
    return make_gateway(routes=ROUTES, model_aliases=ALIASES)


def openhands(server: GatewayServer, tmp_path: Path, task: str, *flags: str) -> tuple[dict[str, Any], str, Path]:
    python = installed("openhands", "bin/python")
    work = tmp_path / "work"
    work.mkdir(parents=True, exist_ok=True)
    env = {"HOME": str(tmp_path), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "OPENHANDS_SUPPRESS_BANNER": "1"}
    code, output = run([str(python), str(SCRIPT), server.url, str(work), task, *flags], work, env)
    assert code == 0, output
    lines = [line for line in output.splitlines() if line.startswith("RESULT ")]
    assert lines, output
    return json.loads(lines[-1][len("RESULT ") :]), output, work


def test_openhands_two_steps_with_a_tool_round_trip_after_an_upstream_error(
    server: GatewayServer, edge: FakeUpstream, tmp_path: Path
) -> None:
    command = orjson.dumps({"command": "echo tandem > proof.txt && cat proof.txt", "security_risk": "LOW"}).decode()
    edge.push(SERVER_ERROR, {"kind": "tool_call", "name": "terminal", "arguments": command}, {"text": "all done"})
    result, output, work = openhands(server, tmp_path, "write proof.txt")
    assert result["status"] == "finished", output
    assert result["last_message"] == "all done"
    assert (work / "proof.txt").read_text() == "tandem\n"  # the agent ran the tool the model called
    assert len(edge.received) == 3
    sent = edge.received[2].body["messages"]
    assert sent[-2]["tool_calls"][0]["function"]["name"] == "terminal"
    assert sent[-1]["role"] == "tool" and "tandem" in json.dumps(sent[-1]["content"])
    # One trajectory named by its conversation id (prompt_cache_key); the error an attempt.
    [trajectory] = trajectories(server)
    assert trajectory["id"] == result["id"]
    assert main_records(trajectory) == [(1, 1, "error", []), (1, 2, "ok", ["terminal"]), (2, 1, "ok", [])]
    assert (trajectory["steps"], trajectory["edge_steps"]) == (2, 2)


def test_openhands_recognises_a_context_overflow(server: GatewayServer, edge: FakeUpstream, tmp_path: Path) -> None:
    edge.push(OVERFLOW)
    result, _, _ = openhands(server, tmp_path, "summarise the repository")
    assert result["status"] == "raised"
    assert "ContextWindowExceededError" in result["error"]
    assert len(edge.received) == 1  # not retried as a transient error


def test_openhands_runs_of_one_task_never_cross(server: GatewayServer, edge: FakeUpstream, tmp_path: Path) -> None:
    """OpenHands names each run by its conversation id: runs of one task in a row and at once."""

    def answer(run: int, turn: int) -> dict[str, Any]:
        if turn == 0:
            command = orjson.dumps({"command": f"echo run-{run} > proof.txt", "security_risk": "LOW"}).decode()
            return {"kind": "tool_call", "name": "terminal", "arguments": command, "call_id": f"call-run-{run}-0"}
        return {"text": f"done (run-{run})"}

    edge.respond = RunScript(answer)
    results = twice_in_a_row_and_twice_at_once(lambda i: openhands(server, tmp_path / f"run{i}", "write proof.txt"))
    assert all(result["status"] == "finished" for result, _, _ in results), [output for _, output, _ in results]
    assert sorted((work / "proof.txt").read_text() for *_, work in results) == [f"run-{n}\n" for n in (1, 2, 3, 4)]
    assert_uncrossed(server, runs=4, turns=(0, 1))
    assert {t["id"] for t in trajectories(server, expected=4)} == {result["id"] for result, _, _ in results}


def test_openhands_task_tool_sub_agent_is_a_child_of_the_step_that_started_it(
    server: GatewayServer, edge: FakeUpstream, tmp_path: Path
) -> None:
    """The Task tool runs its sub-agent in a conversation of its own (its own session id) that
    shares the parent's prompt cache key: its own trajectory, linked to the parent's step."""
    prompt = "Count the files in the folder and report the number."
    task = {"description": "count files", "prompt": prompt, "subagent_type": "general-purpose"}

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        users = [m for m in messages if m["role"] == "user"]
        if users and prompt in str(users[0]["content"]):
            return {"text": "There are no files."}  # the sub-agent finishes at once
        if messages[-1]["role"] == "tool":
            return {"kind": "tool_call", "name": "finish", "arguments": '{"message": "the sub-agent counted"}'}
        return {"kind": "tool_call", "name": "task", "arguments": orjson.dumps(task).decode(), "call_id": "call-task"}

    edge.respond = answer
    result, output, _ = openhands(server, tmp_path, "delegate the counting", "--task-tool")
    assert result["status"] == "finished", output
    found = trajectories(server, expected=2)
    assert len(found) == 2, [t["id"] for t in found]
    [parent] = [t for t in found if t["id"].endswith(result["id"])]
    [child] = [t for t in found if t is not parent]
    assert child["parent"] == {"id": parent["id"], "step": 1}
    assert [c["id"] for c in parent["children"]] == [child["id"]]


def test_openhands_failed_command_is_on_the_record(server: GatewayServer, edge: FakeUpstream, tmp_path: Path) -> None:
    """A command that exits non-zero comes back as the SDK's terminal words it: the gateway reads
    the previous step's failure from it, so the run's failure record (what the judges read) holds
    it; a command that worked is no failure."""

    def terminal(command: str, call_id: str) -> dict[str, Any]:
        arguments = orjson.dumps({"command": command}).decode()
        return {"kind": "tool_call", "name": "terminal", "arguments": arguments, "call_id": call_id}

    edge.push(terminal("ls /no-such-folder", "call_ls"), terminal("echo ok > proof.txt", "call_ok"), {"text": "done"})
    result, output, work = openhands(server, tmp_path, "write proof.txt")
    assert result["status"] == "finished", output
    assert (work / "proof.txt").read_text() == "ok\n"
    shown = [str(r.body["messages"][-1]["content"])[-300:] for r in edge.received[1:]]
    [trajectory] = trajectories(server)
    records = sorted(trajectory["records"], key=lambda r: r["step"])
    assert [(r["step"], r["failed_before"]) for r in records] == [(1, None), (2, 1), (3, 0)], shown


def test_openhands_call_to_a_tool_it_lacks_is_on_the_record(
    server: GatewayServer, edge: FakeUpstream, tmp_path: Path
) -> None:
    """A call to a tool the agent does not have: the SDK answers it with its own error as the
    call's result (`Tool '…' not found. Available: …`), and the gateway records that step failed."""
    wrong = orjson.dumps({"command": "view", "path": "/tmp"}).decode()
    ls = orjson.dumps({"command": "ls"}).decode()
    edge.push(
        {"kind": "tool_call", "name": "str_replace_editor", "arguments": wrong, "call_id": "call_wrong"},
        {"kind": "tool_call", "name": "terminal", "arguments": ls, "call_id": "call_ls"},
        {"text": "done"},
    )
    result, output, _ = openhands(server, tmp_path, "look around")
    assert result["status"] == "finished", output
    shown = str(edge.received[1].body["messages"][-1]["content"])
    assert "not found" in shown, shown
    [trajectory] = trajectories(server)
    records = sorted(trajectory["records"], key=lambda r: r["step"])
    assert [(r["step"], r["failed_before"]) for r in records] == [(1, None), (2, 1), (3, 0)], shown

"""mini-swe-agent 2.x (PyPI mini-swe-agent, the SWE-agent team's current agent, in its own
Python 3.12 virtualenv; SWE-agent itself is not on PyPI) as its `mini` command, through the
gateway's chat completions with litellm and no session id: a task done with its bash tool after
an injected upstream error, a context overflow it must recognise as one, and runs of one task
twice in a row and twice at once that stay apart."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.clients.harness import (
    ALIASES,
    OVERFLOW,
    ROUTES,
    SERVER_ERROR,
    assert_two_edge_steps,
    installed,
    main_records,
    run,
    trajectories,
)
from tests.clients.runs import RunScript, assert_uncrossed, twice_in_a_row_and_twice_at_once
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


@pytest.fixture()
def server(make_gateway: Callable[..., GatewayServer]) -> GatewayServer:
    return make_gateway(routes=ROUTES, model_aliases=ALIASES)


def bash(command: str, call_id: str = "call_1") -> dict[str, Any]:
    return {
        "kind": "tool_call",
        "name": "bash",
        "arguments": orjson.dumps({"command": command}).decode(),
        "call_id": call_id,
    }


def mini(server: GatewayServer, tmp_path: Path, task: str, *settings: str) -> tuple[int, str, dict[str, Any], Path]:
    """Runs `mini` in its yolo mode in a folder of its own (`settings`: more `-c` values); its
    saved trajectory (.traj.json)."""
    binary = installed("mini-swe-agent", "bin/mini")
    tmp_path.mkdir(exist_ok=True)
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    saved = tmp_path / "run.traj.json"
    command = [
        str(binary),
        *("-c", "mini.yaml", "-c", f"model.model_kwargs.api_base={server.url}/v1"),
        *("-c", "model.model_kwargs.api_key=unused", "-c", "model.cost_tracking=ignore_errors"),
        *(part for setting in settings for part in ("-c", setting)),
        *("-m", "openai/tandem", "-t", task, "--yolo", "--exit-immediately", "-o", str(saved)),
    ]
    env = {
        "HOME": str(tmp_path),
        "MSWEA_CONFIGURED": "true",
        "MSWEA_GLOBAL_CONFIG_DIR": str(tmp_path / "mswea"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "_TYPER_STANDARD_TRACEBACK": "1",  # a plain traceback: typer's renders every local
    }
    code, output = run(command, work, env)
    return code, output, json.loads(saved.read_text()) if saved.exists() else {}, work


def test_mini_swe_agent_uses_its_bash_tool_after_an_upstream_error(
    server: GatewayServer, edge: FakeUpstream, tmp_path: Path
) -> None:
    edge.push(SERVER_ERROR, bash("echo tandem > proof.txt && cat proof.txt"), bash(SUBMIT, "call_2"))
    code, output, saved, work = mini(server, tmp_path, "write proof.txt")
    assert code == 0, output
    assert saved["info"]["exit_status"] == "Submitted", saved["info"]
    assert (work / "proof.txt").read_text() == "tandem\n"  # it ran the command the model called
    assert len(edge.received) == 3  # the error, retried by mini-swe-agent, then the next step
    sent = edge.received[2].body["messages"]
    assert sent[-2]["tool_calls"][0]["function"]["name"] == "bash"
    assert sent[-1]["role"] == "tool" and sent[-1]["tool_call_id"] == "call_1" and "tandem" in sent[-1]["content"]
    # No session id: the steps stitched into one trajectory, the error an attempt of step 1.
    [trajectory] = trajectories(server)
    assert main_records(trajectory) == [(1, 1, "error", []), (1, 2, "ok", ["bash"]), (2, 1, "ok", ["bash"])]
    assert_two_edge_steps(trajectory, ["new", "retry", "extended"], "write proof.txt")


def test_mini_swe_agent_recognises_a_context_overflow(
    server: GatewayServer, edge: FakeUpstream, tmp_path: Path
) -> None:
    edge.push(OVERFLOW)
    code, output, saved, _ = mini(server, tmp_path, "summarise the repository")
    assert code != 0 and "ContextWindowExceededError" in output
    # litellm's ContextWindowExceededError, which mini-swe-agent aborts on instead of retrying.
    assert saved["info"]["exit_status"] == "ContextWindowExceededError", saved["info"]
    assert "maximum context length is 2048 tokens" in saved["messages"][-1]["content"]
    assert len(edge.received) == 1
    [trajectory] = trajectories(server)
    [record] = trajectory["records"]
    assert (record["status"], record["http_status"], record["stitch"]) == ("error", 400, "new")


def test_mini_swe_agent_runs_of_one_task_never_cross(server: GatewayServer, edge: FakeUpstream, tmp_path: Path) -> None:
    def answer(run: int, turn: int) -> dict[str, Any]:
        command = f"echo run-{run} > proof.txt" if turn == 0 else SUBMIT
        return bash(command, f"call-run-{run}-{turn}")

    edge.respond = RunScript(answer)
    results = twice_in_a_row_and_twice_at_once(lambda i: mini(server, tmp_path / f"run{i}", "write proof.txt"))
    assert all(code == 0 for code, *_ in results), [output for _, output, *_ in results]
    assert sorted((work / "proof.txt").read_text() for *_, work in results) == [f"run-{n}\n" for n in (1, 2, 3, 4)]
    assert_uncrossed(server, runs=4, turns=(0, 1))


def test_mini_swe_agents_failed_command_is_on_the_record(
    server: GatewayServer, edge: FakeUpstream, tmp_path: Path
) -> None:
    """`mini.yaml` writes a command's result as JSON (`{"returncode": 2, "output": …}`): the
    gateway reads the previous step's failure from it as from the tagged formats, so the run's
    failure record (what the judges read) holds it; a command that worked is no failure."""
    edge.push(bash("ls /no-such-folder"), bash("echo tandem > proof.txt", "call_2"), bash(SUBMIT, "call_3"))
    code, output, _, work = mini(server, tmp_path, "write proof.txt")
    assert code == 0, output
    assert (work / "proof.txt").read_text() == "tandem\n"
    shown = edge.received[1].body["messages"][-1]["content"]
    assert orjson.loads(shown)["returncode"] != 0  # the client's own JSON result, as sent on
    [trajectory] = trajectories(server)
    records = sorted(trajectory["records"], key=lambda r: r["step"])
    assert [(r["step"], r["failed_before"]) for r in records] == [(1, None), (2, 1), (3, 0)]


def test_mini_swe_agents_format_error_stays_in_its_run_and_on_the_record(
    server: GatewayServer, edge: FakeUpstream, tmp_path: Path
) -> None:
    """A reply without a tool call: mini-swe-agent drops it from its history and adds its format
    error (`Tool call error: … No tool calls found`) after the history it was given; the run goes
    on as one trajectory (the history rewritten: its answer left out), and the reply's step is on
    the record as failed."""
    edge.push(
        {"text": "I think the file should say tandem."},
        bash("echo tandem > proof.txt", "call_2"),
        bash(SUBMIT, "call_3"),
    )
    code, output, _, work = mini(server, tmp_path, "write proof.txt")
    assert code == 0, output
    assert (work / "proof.txt").read_text() == "tandem\n"
    assert "Tool call error" in str(edge.received[1].body["messages"][-1]["content"])
    [trajectory] = trajectories(server)
    records = sorted(trajectory["records"], key=lambda r: r["step"])
    assert [(r["step"], r["stitch"], r["failed_before"]) for r in records] == [
        (1, "new", None),
        (2, "rewritten", 1),
        (3, "extended", 0),
    ]


def test_mini_swe_agents_command_killed_for_time_is_on_the_record(
    server: GatewayServer, edge: FakeUpstream, tmp_path: Path
) -> None:
    """A command past the environment's timeout: `mini` reports it in its JSON result
    (`"returncode": -1` and `exception_info`), and the step is on the record as failed."""
    edge.push(bash("sleep 5"), bash(SUBMIT, "call_2"))
    code, output, _, _ = mini(server, tmp_path, "wait for it", "environment.timeout=1")
    assert code == 0, output
    shown = orjson.loads(edge.received[1].body["messages"][-1]["content"])
    assert shown["returncode"] == -1 and "timed out" in shown["exception_info"]
    [trajectory] = trajectories(server)
    records = sorted(trajectory["records"], key=lambda r: r["step"])
    assert [(r["step"], r["failed_before"]) for r in records] == [(1, None), (2, 1)]

"""Claude Code (npm @anthropic-ai/claude-code, its native binary) through the gateway's
/v1/messages, streamed: a two-step task with a tool round trip after an injected upstream error,
and a context overflow Claude Code must recognise as one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.clients.harness import ALIASES, OVERFLOW, ROUTES, SERVER_ERROR, installed, main_records, run, trajectories
from tests.clients.runs import RunScript, assert_uncrossed, twice_in_a_row_and_twice_at_once
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer


@pytest.fixture()
def server(make_gateway: Callable[..., GatewayServer]) -> GatewayServer:
    return make_gateway(routes=ROUTES, model_aliases=ALIASES)


def claude(server: GatewayServer, tmp_path: Path, task: str) -> tuple[int, str, Path]:
    binary = installed("claude", "node_modules/.bin/claude")
    work = tmp_path / "work"
    work.mkdir(parents=True, exist_ok=True)
    command = [str(binary), "-p", task, "--model", "claude-sonnet-4-6", "--allowedTools", "Bash"]
    env = {
        "HOME": str(tmp_path),
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "unused",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    code, output = run(command, work, env)
    return code, output, work


def test_claude_code_two_steps_with_a_tool_round_trip_after_an_upstream_error(
    server: GatewayServer, edge: FakeUpstream, tmp_path: Path
) -> None:
    command = orjson.dumps({"command": "echo tandem > proof.txt && cat proof.txt"}).decode()
    edge.push(SERVER_ERROR, {"kind": "tool_call", "name": "Bash", "arguments": command}, {"text": "all done"})
    code, output, work = claude(server, tmp_path, "write proof.txt")
    assert code == 0, output
    assert (work / "proof.txt").read_text() == "tandem\n"  # Claude Code ran the tool the model called
    assert "all done" in output
    assert all(r.body["stream"] for r in edge.received) and len(edge.received) == 3
    sent = edge.received[2].body["messages"]
    assert sent[-2]["tool_calls"][0]["function"]["name"] == "Bash"
    assert sent[-1]["role"] == "tool" and "tandem" in sent[-1]["content"]
    # One trajectory (Claude Code's session id); the main calls: two steps, the error an attempt.
    main = [t for t in trajectories(server) if main_records(t)]
    assert len(main) == 1
    assert main_records(main[0]) == [(1, 1, "error", []), (1, 2, "ok", ["Bash"]), (2, 1, "ok", [])]
    assert main[0]["edge_steps"] == 2


def test_claude_code_recognises_a_context_overflow(server: GatewayServer, edge: FakeUpstream, tmp_path: Path) -> None:
    edge.push(OVERFLOW)
    code, output, _ = claude(server, tmp_path, "summarise the repository")
    assert code != 0
    assert "Prompt is too long" in output and "5000 tokens" in output and "2048" in output


def test_claude_code_runs_of_one_task_never_cross(server: GatewayServer, edge: FakeUpstream, tmp_path: Path) -> None:
    """Claude Code names each run by its own session id: runs of one task in a row and at once
    (its side calls, on the small model's route, are left out of the check)."""

    def answer(run: int, turn: int) -> dict[str, Any]:
        if turn == 0:
            command = orjson.dumps({"command": f"echo run-{run} > proof.txt"}).decode()
            return {"kind": "tool_call", "name": "Bash", "arguments": command, "call_id": f"toolu_run-{run}-0"}
        return {"text": f"done (run-{run})"}

    edge.respond = RunScript(answer)
    results = twice_in_a_row_and_twice_at_once(lambda i: claude(server, tmp_path / f"run{i}", "write proof.txt"))
    assert all(code == 0 for code, _, _ in results), [output for _, output, _ in results]
    assert sorted((work / "proof.txt").read_text() for *_, work in results) == [f"run-{n}\n" for n in (1, 2, 3, 4)]
    assert_uncrossed(server, runs=4, turns=(0, 1))


def test_claude_codes_failed_command_is_on_the_record(
    server: GatewayServer, edge: FakeUpstream, tmp_path: Path
) -> None:
    """A command that exits non-zero comes back as Claude Code words it (a tool result it flags
    as an error, `Exit code N`): the gateway reads the previous step's failure from it, so the
    run's failure record (what the judges read) holds it; a command that worked is no failure.
    The upstream repeats its completion id (this fake always says `chatcmpl-fake`): each answer
    still reaches Claude Code as a message of its own, not merged with the one before."""

    def bash(command: str, call_id: str) -> dict[str, Any]:
        arguments = orjson.dumps({"command": command}).decode()
        return {"kind": "tool_call", "name": "Bash", "arguments": arguments, "call_id": call_id}

    edge.push(bash("ls /no-such-folder", "toolu_ls"), bash("echo ok > proof.txt", "toolu_ok"), {"text": "all done"})
    code, output, work = claude(server, tmp_path, "write proof.txt")
    assert code == 0, output
    assert (work / "proof.txt").read_text() == "ok\n"
    last = edge.received[2].body["messages"]
    assert [len(m.get("tool_calls") or []) for m in last if m["role"] == "assistant"] == [1, 1]  # two turns
    [trajectory] = trajectories(server)
    records = sorted(trajectory["records"], key=lambda r: r["step"])
    assert [(r["step"], r["failed_before"]) for r in records] == [(1, None), (2, 1), (3, 0)]

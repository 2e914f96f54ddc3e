"""Claude Code (npm @anthropic-ai/claude-code, its native binary) through the gateway's
/v1/messages, streamed: a two-step task with a tool round trip after an injected upstream error,
and a context overflow Claude Code must recognise as one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from tests.clients.harness import ALIASES, OVERFLOW, ROUTES, SERVER_ERROR, installed, main_records, run, trajectories
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer


@pytest.fixture()
def server(make_gateway: Callable[..., GatewayServer]) -> GatewayServer:
    return make_gateway(routes=ROUTES, model_aliases=ALIASES)


def claude(server: GatewayServer, tmp_path: Path, task: str) -> tuple[int, str, Path]:
    binary = installed("claude", "node_modules/.bin/claude")
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
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

"""harbor's Terminus-2 (PyPI harbor, in its own Python 3.12 virtualenv) through the gateway's
chat completions, with a local terminal in place of its container: a task whose commands run in
a tmux session on this machine, after an injected upstream error; and a context overflow it must
recognise as one. Terminus-2 speaks JSON in the message content, no tools: its tool round trip
is the terminal output it sends back."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.clients.harness import ALIASES, OVERFLOW, ROUTES, SERVER_ERROR, installed, main_records, run, trajectories
from tests.clients.runs import RunScript, assert_uncrossed, twice_in_a_row_and_twice_at_once
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

SCRIPT = Path(__file__).with_name("run_terminus.py")
WRITE = {
    "analysis": "nothing yet",
    "plan": "write the file",
    "commands": [{"keystrokes": "echo tandem > proof.txt && cat proof.txt\n", "duration": 0.5}],
    "task_complete": False,
}
DONE = {"analysis": "the file is written", "plan": "", "commands": [], "task_complete": True}


@pytest.fixture()
def server(make_gateway: Callable[..., GatewayServer]) -> GatewayServer:
    return make_gateway(routes=ROUTES, model_aliases=ALIASES)


def terminus(server: GatewayServer, tmp_path: Path, task: str, *flags: str) -> tuple[dict[str, Any], str, Path]:
    python = installed("harbor", "bin/python")
    if shutil.which("tmux") is None:
        pytest.fail("Terminus-2 needs tmux: `make clients` installs it (Debian's tmux)")
    work, scratch = tmp_path / "work", tmp_path / "scratch"
    work.mkdir(parents=True)
    scratch.mkdir()
    env = {"HOME": str(tmp_path), "OPENAI_API_KEY": "unused", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    command = [str(python), str(SCRIPT), f"{server.url}/v1", str(work), str(scratch), task, *flags]
    code, output = run(command, work, env)
    assert code == 0, output
    lines = [line for line in output.splitlines() if line.startswith("RESULT ")]
    assert lines, output
    return json.loads(lines[-1][len("RESULT ") :]), output, work


def test_terminus_runs_commands_in_its_terminal_after_an_upstream_error(
    server: GatewayServer, edge: FakeUpstream, tmp_path: Path
) -> None:
    # Its answers are JSON in the content; a task_complete is confirmed by a second one.
    edge.push(SERVER_ERROR, *({"text": json.dumps(answer)} for answer in (WRITE, DONE, DONE)))
    result, output, work = terminus(server, tmp_path, "write proof.txt")
    assert result["status"] == "finished", output
    assert (work / "proof.txt").read_text() == "tandem\n"  # its terminal ran the command
    assert len(edge.received) == 4
    sent = edge.received[2].body["messages"]
    assert sent[-2]["role"] == "assistant" and json.loads(sent[-2]["content"]) == WRITE
    assert sent[-1]["role"] == "user" and "tandem" in sent[-1]["content"]  # the terminal output, sent back
    assert edge.received[1].body["session_id"] == "terminus-run"
    [trajectory] = trajectories(server)
    assert trajectory["id"] == "terminus-run"
    assert main_records(trajectory) == [(1, 1, "error", []), (1, 2, "ok", []), (2, 1, "ok", []), (3, 1, "ok", [])]
    assert (trajectory["steps"], trajectory["edge_steps"]) == (3, 3)


def test_terminus_recognises_a_context_overflow(server: GatewayServer, edge: FakeUpstream, tmp_path: Path) -> None:
    edge.push(OVERFLOW)
    result, _, _ = terminus(server, tmp_path, "summarise the repository")
    assert result["status"] == "raised"
    assert result["error"].startswith("ContextLengthExceededError")
    assert len(edge.received) == 1  # not retried as a transient error


def test_terminus_runs_of_one_task_without_a_session_never_cross(
    server: GatewayServer, edge: FakeUpstream, tmp_path: Path
) -> None:
    """Given no session id, Terminus-2's model calls name none: its runs are stitched by their
    history (its answers are JSON text, no tools). Runs of one task in a row and at once."""

    def answer(run: int, turn: int) -> dict[str, Any]:
        if turn == 0:
            keys = {"keystrokes": f"echo run-{run} > proof.txt\n", "duration": 0.5}
            return {"text": json.dumps({**WRITE, "commands": [keys]})}
        return {"text": json.dumps({**DONE, "analysis": f"proof.txt says run-{run}"})}

    edge.respond = RunScript(answer)
    results = twice_in_a_row_and_twice_at_once(
        lambda i: terminus(server, tmp_path / f"run{i}", "write proof.txt", "no-session")
    )
    assert all(result["status"] == "finished" for result, _, _ in results), [output for _, output, _ in results]
    assert all("session_id" not in r.body for r in edge.received)
    assert sorted((work / "proof.txt").read_text() for *_, work in results) == [f"run-{n}\n" for n in (1, 2, 3, 4)]
    assert_uncrossed(server, runs=4, turns=(0, 1, 2))
    # Stitched, each run's first step new and the others extending it.
    records = [r for t in trajectories(server, expected=4) for r in t["records"]]
    assert sorted(r["stitch"] for r in records) == ["extended"] * 8 + ["new"] * 4

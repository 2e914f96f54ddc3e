"""smolagents (PyPI smolagents with its openai extra, in its own Python 3.12 virtualenv): a
ToolCallingAgent with an `OpenAIServerModel` through the gateway's chat completions and no
session id: a tool round trip after an injected upstream error, a context overflow it must
recognise as one, and runs of one task twice in a row and twice at once that stay apart."""

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

SCRIPT = Path(__file__).with_name("run_smolagents.py")


@pytest.fixture()
def server(make_gateway: Callable[..., GatewayServer]) -> GatewayServer:
    return make_gateway(routes=ROUTES, model_aliases=ALIASES)


def call(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"kind": "tool_call", "name": name, "arguments": orjson.dumps(arguments).decode(), "call_id": call_id}


def smolagents(server: GatewayServer, tmp_path: Path, task: str) -> tuple[dict[str, Any], str, Path]:
    python = installed("smolagents", "bin/python")
    work = tmp_path / "work"
    work.mkdir(parents=True, exist_ok=True)
    code, output = run([str(python), str(SCRIPT), f"{server.url}/v1", str(work), task], work, {"HOME": str(tmp_path)})
    assert code == 0, output
    lines = [line for line in output.splitlines() if line.startswith("RESULT ")]
    assert lines, output
    return json.loads(lines[-1][len("RESULT ") :]), output, work


def test_smolagents_calls_its_tool_after_an_upstream_error(
    server: GatewayServer, edge: FakeUpstream, tmp_path: Path
) -> None:
    write = call("write_file", {"path": "proof.txt", "text": "tandem\n"}, "call_5f1c0a")
    edge.push(SERVER_ERROR, write, call("final_answer", {"answer": "all done"}, "call_93b2e7"))
    result, output, work = smolagents(server, tmp_path, "write proof.txt")
    assert result == {"status": "finished", "answer": "all done"}, output
    assert (work / "proof.txt").read_text() == "tandem\n"  # the agent ran the tool the model called
    assert len(edge.received) == 3  # the error, retried by the openai SDK, then the next step
    # smolagents sends the tool call back as text and its result as a user "Observation".
    sent = edge.received[2].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[2]["content"][0]["text"].startswith("Calling tools:\n[{'id': 'call_5f1c0a'")
    assert sent[3]["content"][0]["text"] == "Observation:\ntandem"
    [trajectory] = trajectories(server)
    assert main_records(trajectory) == [
        (1, 1, "error", []),
        (1, 2, "ok", ["write_file"]),
        (2, 1, "ok", ["final_answer"]),
    ]
    assert_two_edge_steps(trajectory, ["new", "retry", "extended"], "write proof.txt")


def test_smolagents_recognises_a_context_overflow(server: GatewayServer, edge: FakeUpstream, tmp_path: Path) -> None:
    edge.push(OVERFLOW)
    result, _, _ = smolagents(server, tmp_path, "summarise the repository")
    # smolagents has no case of its own for an overflow: it ends the run with the openai SDK's
    # BadRequestError (the upstream's error as vLLM worded it, its code the status).
    assert result["status"] == "raised" and result["error"].startswith("AgentGenerationError"), result
    assert (result["cause"], result["code"]) == ("BadRequestError", "400"), result
    assert "maximum context length is 2048 tokens" in result["error"]
    assert len(edge.received) == 1  # not retried as a transient error
    [trajectory] = trajectories(server)
    [record] = trajectory["records"]
    assert (record["status"], record["http_status"]) == ("error", 400)


def test_smolagents_runs_of_one_task_never_cross(server: GatewayServer, edge: FakeUpstream, tmp_path: Path) -> None:
    def answer(run: int, turn: int) -> dict[str, Any]:
        if turn == 0:
            return call("write_file", {"path": "proof.txt", "text": f"run-{run}\n"}, f"call-run-{run}-0")
        return call("final_answer", {"answer": f"done (run-{run})"}, f"call-run-{run}-1")

    edge.respond = RunScript(answer)
    results = twice_in_a_row_and_twice_at_once(lambda i: smolagents(server, tmp_path / f"run{i}", "write proof.txt"))
    assert all(result["status"] == "finished" for result, _, _ in results), [output for _, output, _ in results]
    assert sorted((work / "proof.txt").read_text() for *_, work in results) == [f"run-{n}\n" for n in (1, 2, 3, 4)]
    assert_uncrossed(server, runs=4, turns=(0, 1))


@pytest.mark.parametrize("failing", [1, 2])
def test_smolagents_failed_tool_call_stays_in_its_run_and_on_the_record(
    server: GatewayServer, edge: FakeUpstream, tmp_path: Path, failing: int
) -> None:
    """A tool call that raised: smolagents drops the answer that made it and appends the error to
    its last user message (`Error:` … `Now let's retry`), so its next request extends no history
    the gateway answered. It stays in its run (stitched as a rewrite of that message), and the
    step's record says the previous step failed, from the words appended."""
    good = [call("write_file", {"path": f"part{n}.txt", "text": "ok\n"}, f"call_ok{n}") for n in (1, 2)]
    bad = call("write_file", {"path": "no-such-folder/proof.txt", "text": "x"}, "call_bad")
    answers = [
        *good[: failing - 1],
        bad,
        *good[failing - 1 :],
        call("final_answer", {"answer": "all done"}, "call_end"),
    ]
    edge.push(*answers)
    result, output, work = smolagents(server, tmp_path, "write the parts")
    assert result == {"status": "finished", "answer": "all done"}, output
    assert sorted(p.name for p in work.iterdir()) == ["part1.txt", "part2.txt"]
    amended = edge.received[failing].body["messages"][-1]["content"][0]["text"]
    assert "FileNotFoundError" in amended and "Now let's retry" in amended  # the client's own words
    [trajectory] = trajectories(server)
    records = sorted(trajectory["records"], key=lambda r: r["step"])
    stitches = ["new", *["extended"] * len(answers)]
    stitches[failing] = "rewritten"
    assert [r["stitch"] for r in records] == stitches[: len(answers)]
    failed: list[int | None] = [None, *[0] * (len(answers) - 1)]
    failed[failing] = 1
    assert [r["failed_before"] for r in records] == failed

"""openai-agents (the OpenAI Agents SDK, PyPI openai-agents, in its own Python 3.12 virtualenv)
through the gateway's /v1/responses with no session id: a function tool round trip after an
injected upstream error, a context overflow it must recognise as one, and runs of one task twice
in a row and twice at once that stay apart."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
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

SCRIPT = Path(__file__).with_name("run_openai_agents.py")


@pytest.fixture()
def server(make_gateway: Callable[..., GatewayServer]) -> GatewayServer:
    return make_gateway(routes=ROUTES, model_aliases=ALIASES)


def write(text: str, call_id: str) -> dict[str, Any]:
    arguments = orjson.dumps({"path": "proof.txt", "text": text}).decode()
    return {"kind": "tool_call", "name": "write_file", "arguments": arguments, "call_id": call_id}


def agents(
    server: GatewayServer, tmp_path: Path, task: str, *follow_up: str, handoff: bool = False
) -> tuple[dict[str, Any], str, Path]:
    python = installed("openai-agents", "bin/python")
    work = tmp_path / "work"
    work.mkdir(parents=True, exist_ok=True)
    command = [str(python), str(SCRIPT), f"{server.url}/v1", str(work), task, *follow_up]
    code, output = run(command, work, {"HOME": str(tmp_path), **({"AGENTS_HANDOFF": "1"} if handoff else {})})
    assert code == 0, output
    lines = [line for line in output.splitlines() if line.startswith("RESULT ")]
    assert lines, output
    return json.loads(lines[-1][len("RESULT ") :]), output, work


def test_openai_agents_calls_its_function_tool_after_an_upstream_error(
    server: GatewayServer, edge: FakeUpstream, tmp_path: Path
) -> None:
    edge.push(SERVER_ERROR, write("tandem\n", "call_4e0b9d"), {"text": "all done"})
    result, output, work = agents(server, tmp_path, "write proof.txt")
    assert result == {"status": "finished", "answer": "all done"}, output
    assert (work / "proof.txt").read_text() == "tandem\n"  # the agent ran the tool the model called
    assert len(edge.received) == 3  # the error, retried by the openai SDK, then the next step
    # What reached the upstream: the Responses input as chat messages, the call and its output.
    sent = edge.received[2].body["messages"]
    assert sent[0] == {"role": "system", "content": "You write files."}
    assert sent[-2]["tool_calls"][0]["id"] == "call_4e0b9d"
    assert sent[-1] == {"role": "tool", "tool_call_id": "call_4e0b9d", "content": "tandem\n"}
    [trajectory] = trajectories(server)
    assert main_records(trajectory) == [(1, 1, "error", []), (1, 2, "ok", ["write_file"]), (2, 1, "ok", [])]
    assert_two_edge_steps(trajectory, ["new", "retry", "extended"], "write proof.txt")
    # The SDK resends the whole conversation, its function call item as the gateway gave it: the
    # second answer is kept as continuing the first (not with the whole input again).
    metrics = httpx.get(f"{server.url}/metrics", timeout=10).text
    assert 'tandem_kept_responses_total{event="continued"} 1.0' in metrics
    assert 'tandem_kept_responses_total{event="kept_here"} 2.0' in metrics


def test_a_run_handed_from_one_agent_to_another_is_one_trajectory(
    server: GatewayServer, edge: FakeUpstream, tmp_path: Path
) -> None:
    """A triage agent hands the run to the writer (a handoff): the writer's requests carry its
    own instructions, then the conversation with the handoff call. One run, one trajectory."""
    handoff = {"kind": "tool_call", "name": "transfer_to_writer", "arguments": "{}", "call_id": "call_7f3a0c"}
    edge.push(handoff, write("tandem\n", "call_9b21e4"), {"text": "all done"})
    result, output, work = agents(server, tmp_path, "write proof.txt", handoff=True)
    assert result == {"status": "finished", "answer": "all done"}, output
    assert (work / "proof.txt").read_text() == "tandem\n"
    assert edge.received[1].body["messages"][0] == {"role": "system", "content": "You write files."}
    [trajectory] = trajectories(server)
    assert main_records(trajectory) == [
        (1, 1, "ok", ["transfer_to_writer"]),
        (2, 1, "ok", ["write_file"]),
        (3, 1, "ok", []),
    ]
    records = sorted(trajectory["records"], key=lambda r: r["step"])
    assert [r["stitch"] for r in records] == ["new", "rewritten", "extended"]


def test_openai_agents_recognises_a_context_overflow(server: GatewayServer, edge: FakeUpstream, tmp_path: Path) -> None:
    edge.push(OVERFLOW)
    result, _, _ = agents(server, tmp_path, "summarise the repository")
    # The Responses surface words it as OpenAI does: the SDK's BadRequestError whose code is
    # context_length_exceeded (vLLM's own code is the status); the Runner ends the run with it.
    assert result["status"] == "raised" and result["error"].startswith("BadRequestError: Error code: 400"), result
    assert result["code"] == "context_length_exceeded"
    assert "maximum context length is 2048 tokens" in result["error"]
    assert len(edge.received) == 1  # not retried as a transient error
    [trajectory] = trajectories(server)
    [record] = trajectory["records"]
    assert (record["status"], record["http_status"]) == ("error", 400)


def test_openai_agents_runs_of_one_task_never_cross(server: GatewayServer, edge: FakeUpstream, tmp_path: Path) -> None:
    edge.respond = RunScript(
        lambda run, turn: write(f"run-{run}\n", f"call-run-{run}-0") if turn == 0 else {"text": f"done (run-{run})"}
    )
    results = twice_in_a_row_and_twice_at_once(lambda i: agents(server, tmp_path / f"run{i}", "write proof.txt"))
    assert all(result["status"] == "finished" for result, _, _ in results), [output for _, output, _ in results]
    assert sorted((work / "proof.txt").read_text() for *_, work in results) == [f"run-{n}\n" for n in (1, 2, 3, 4)]
    assert_uncrossed(server, runs=4, turns=(0, 1))


def test_openai_agents_failed_tool_call_is_on_the_record(
    server: GatewayServer, edge: FakeUpstream, tmp_path: Path
) -> None:
    """A function tool that raised comes back in the SDK's own words (`An error occurred while
    running the tool`): the gateway reads the previous step's failure from it, so the run's failure
    record (what the judges read) holds it; a call that worked is no failure."""
    missing = orjson.dumps({"path": "no-such-folder/proof.txt", "text": "x"}).decode()
    edge.push(
        {"kind": "tool_call", "name": "write_file", "arguments": missing, "call_id": "call_1"},
        write("tandem\n", "call_2"),
        {"text": "all done"},
    )
    result, output, work = agents(server, tmp_path, "write proof.txt")
    assert result == {"status": "finished", "answer": "all done"}, output
    assert (work / "proof.txt").read_text() == "tandem\n"
    assert edge.received[1].body["messages"][-1]["content"].startswith("An error occurred while running the tool")
    [trajectory] = trajectories(server)
    records = sorted(trajectory["records"], key=lambda r: r["step"])
    assert [(r["step"], r["failed_before"]) for r in records] == [(1, None), (2, 1), (3, 0)]


def test_openai_agents_chained_by_previous_response_id(
    server: GatewayServer, edge: FakeUpstream, tmp_path: Path
) -> None:
    """The SDK's `auto_previous_response_id`: each request names the last response and sends only
    what is new (the tool's output; the follow-up's question). The upstream still gets the whole
    conversation, and the gateway sees one run."""
    edge.push(write("tandem\n", "call_77"), {"text": "all done"}, {"text": "it holds tandem"})
    result, output, work = agents(server, tmp_path, "write proof.txt", "what did you write?")
    assert result["status"] == "finished", output
    assert (result["answer"], result["follow_up_answer"]) == ("all done", "it holds tandem")
    assert result["first_response"].startswith("resp_")
    assert (work / "proof.txt").read_text() == "tandem\n"
    second, third = (received.body["messages"] for received in edge.received[1:3])
    assert second[0] == {"role": "system", "content": "You write files."}
    assert second[1] == {"role": "user", "content": "write proof.txt"}
    assert second[2]["tool_calls"][0]["id"] == "call_77"
    assert second[3] == {"role": "tool", "tool_call_id": "call_77", "content": "tandem\n"}
    assert third[1:] == [
        *second[1:],
        {"role": "assistant", "content": "all done"},
        {"role": "user", "content": "what did you write?"},
    ]
    [trajectory] = trajectories(server)
    assert [r["step"] for r in sorted(trajectory["records"], key=lambda r: r["step"])] == [1, 2, 3]


def test_openai_agents_chained_is_told_when_nothing_is_kept(
    make_gateway: Callable[..., GatewayServer], edge: FakeUpstream, tmp_path: Path
) -> None:
    """The chained SDK names the last response (it does not resend the history): with kept
    responses off, the gateway says so in a 400 the SDK raises, rather than answering a request
    that lost its history."""
    server = make_gateway(routes=ROUTES, model_aliases=ALIASES, kept_responses={"enabled": False})
    edge.push(write("tandem\n", "call_78"), {"text": "all done"})
    result, output, _ = agents(server, tmp_path, "write proof.txt", "what did you write?")
    assert result["status"] == "raised", output
    assert result["error"].startswith("BadRequestError") and "previous_response_id" in result["error"]
    assert len(edge.received) == 1  # the first step only: the second named a response

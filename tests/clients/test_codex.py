"""The Codex CLI (npm @openai/codex, its native binary) through the gateway's /v1/responses,
streamed: a two-step task with a tool round trip after an injected upstream error, and a context
overflow Codex must recognise as one."""

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


def codex(server: GatewayServer, tmp_path: Path, task: str, model: str = "gpt-5-codex") -> tuple[int, str, Path]:
    binary = installed("codex", "node_modules/.bin/codex")
    work = tmp_path / "work"
    work.mkdir(parents=True, exist_ok=True)
    provider = f'{{name="tandem", base_url="{server.url}/v1", wire_api="responses", env_key="TANDEM_KEY"}}'
    command = [
        str(binary),
        "exec",
        "--skip-git-repo-check",
        "--dangerously-bypass-approvals-and-sandbox",
        "-c",
        "model_provider=tandem",
        "-c",
        f"model_providers.tandem={provider}",
        "-m",
        model,
        task,
    ]
    env = {"HOME": str(tmp_path), "CODEX_HOME": str(tmp_path / "codex-home"), "TANDEM_KEY": "unused"}
    (tmp_path / "codex-home").mkdir(exist_ok=True)
    code, output = run(command, work, env)
    return code, output, work


def test_codex_two_steps_with_a_tool_round_trip_after_an_upstream_error(
    server: GatewayServer, edge: FakeUpstream, tmp_path: Path
) -> None:
    command = orjson.dumps({"cmd": "echo tandem > proof.txt && cat proof.txt"}).decode()
    edge.push(SERVER_ERROR, {"kind": "tool_call", "name": "exec_command", "arguments": command}, {"text": "all done"})
    code, output, work = codex(server, tmp_path, "write proof.txt")
    assert code == 0, output
    assert (work / "proof.txt").read_text() == "tandem\n"  # Codex ran the tool the model called
    assert "all done" in output
    # What Codex sent: streamed, its tool output returned as a tool message on the second step.
    assert all(r.body["stream"] for r in edge.received) and len(edge.received) == 3
    sent = edge.received[2].body["messages"]
    assert sent[-2]["tool_calls"][0]["function"]["name"] == "exec_command"
    assert sent[-1]["role"] == "tool" and "tandem" in sent[-1]["content"]
    assert sum(m["role"] == "system" for m in sent) == 1
    # What the gateway recorded: one trajectory (Codex's session), two steps, the error an attempt.
    [trajectory] = trajectories(server)
    assert main_records(trajectory) == [(1, 1, "error", []), (1, 2, "ok", ["exec_command"]), (2, 1, "ok", [])]
    assert (trajectory["steps"], trajectory["edge_steps"], trajectory["errors"]) == (2, 2, 1)


def test_codex_recognises_a_context_overflow(server: GatewayServer, edge: FakeUpstream, tmp_path: Path) -> None:
    edge.push(OVERFLOW)
    code, output, _ = codex(server, tmp_path, "summarise the repository")
    assert code != 0
    assert "ran out of room in the model's context window" in output
    assert len(edge.received) == 1  # not retried as if it were a transient error


def test_codex_runs_of_one_task_never_cross(server: GatewayServer, edge: FakeUpstream, tmp_path: Path) -> None:
    """Codex names each run by its own session id: runs of one task in a row and at once."""

    def answer(run: int, turn: int) -> dict[str, Any]:
        if turn == 0:
            command = orjson.dumps({"cmd": f"echo run-{run} > proof.txt"}).decode()
            return {"kind": "tool_call", "name": "exec_command", "arguments": command, "call_id": f"call-run-{run}-0"}
        return {"text": f"done (run-{run})"}

    edge.respond = RunScript(answer)
    results = twice_in_a_row_and_twice_at_once(lambda i: codex(server, tmp_path / f"run{i}", "write proof.txt"))
    assert all(code == 0 for code, _, _ in results), [output for _, output, _ in results]
    assert sorted((work / "proof.txt").read_text() for *_, work in results) == [f"run-{n}\n" for n in (1, 2, 3, 4)]
    assert_uncrossed(server, runs=4, turns=(0, 1))


def test_codex_spawns_a_sub_agent_that_is_its_own_trajectory_under_its_parent(
    server: GatewayServer, edge: FakeUpstream, tmp_path: Path
) -> None:
    """Codex's sub-agent tools come in a namespace (`multi_agent_v1`): the model sees them as
    chat functions, Codex gets the call back in its namespace and runs it, and the spawned
    agent (same session id, its own thread) is a child trajectory linked to the parent's step."""
    spawn = orjson.dumps({"task_name": "helper", "message": "Say hello from the child"}).decode()

    def child_asked() -> bool:
        return any(r.body["messages"][-1].get("content") == "Say hello from the child" for r in edge.received)

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        if any(m["role"] == "user" and m.get("content") == "Say hello from the child" for m in messages):
            return {"text": "hello from the child"}
        if "<subagent_notification>" in str(messages[-1].get("content")):
            return {"text": "parent done"}  # Codex tells the parent its child finished
        if messages[-1]["role"] == "tool":
            # Codex runs the child at once and ends when the parent does: the parent's last
            # answer waits for the child's request, or a busy machine loses the child.
            return {"text": "parent done", "until": child_asked, "delay": 30}
        return {"kind": "tool_call", "name": "multi_agent_v1__spawn_agent", "arguments": spawn, "call_id": "call-spawn"}

    edge.respond = answer
    code, output, _ = codex(server, tmp_path, "delegate a hello")
    assert code == 0, output
    assert "parent done" in output
    # The namespace's functions reached the model as flat chat functions...
    first = edge.received[0].body
    names = {tool["function"]["name"] for tool in first["tools"]}
    assert {"multi_agent_v1__spawn_agent", "multi_agent_v1__close_agent", "exec_command"} <= names
    # ...Codex ran the call (its child asked the model), and its history's call came back flat.
    child_requests = [r for r in edge.received if r.body["messages"][-1].get("content") == "Say hello from the child"]
    assert len(child_requests) == 1, [r.body["messages"][-1] for r in edge.received]
    parent_second = [r for r in edge.received if r.body["messages"][-1]["role"] == "tool"]
    assert parent_second[0].body["messages"][-2]["tool_calls"][0]["function"]["name"] == "multi_agent_v1__spawn_agent"
    # Two trajectories: the run, and its sub-agent under it, linked to the step that spawned it.
    found = trajectories(server, expected=2)
    [child] = [t for t in found if "~" in t["id"]]
    [parent] = [t for t in found if "~" not in t["id"]]
    assert child["id"].startswith(parent["id"] + "~")
    # A child that ends before its parent's turn does is reported to the parent: one more step.
    notified = any("<subagent_notification>" in str(r.body["messages"][-1].get("content")) for r in edge.received)
    assert (parent["steps"], child["steps"]) == (3 if notified else 2, 1)
    assert child["parent"] == {"id": parent["id"], "step": 1}
    assert [c["id"] for c in parent["children"]] == [child["id"]]


def test_codex_edits_a_file_with_its_freeform_apply_patch_tool(
    server: GatewayServer, edge: FakeUpstream, tmp_path: Path
) -> None:
    """For a model it knows (here gpt-5.5), Codex offers `apply_patch` as a custom (freeform)
    tool: the model sees a function of one `input` string, and its call reaches Codex as a
    `custom_tool_call` that Codex applies."""
    patch = "*** Begin Patch\n*** Add File: hello.txt\n+hello from the edge\n*** End Patch\n"
    edit = {"kind": "tool_call", "name": "apply_patch", "arguments": orjson.dumps({"input": patch}).decode()}
    edge.push(edit, {"text": "edited"})
    code, output, work = codex(server, tmp_path, "create hello.txt", model="gpt-5.5")
    assert code == 0, output
    assert (work / "hello.txt").read_text() == "hello from the edge\n"
    [function] = [t["function"] for t in edge.received[0].body["tools"] if t["function"]["name"] == "apply_patch"]
    assert "*** Begin Patch" in function["description"]  # the grammar, for the model to follow
    sent = edge.received[1].body["messages"]
    assert orjson.loads(sent[-2]["tool_calls"][0]["function"]["arguments"]) == {"input": patch}
    assert sent[-1]["role"] == "tool" and "hello.txt" in sent[-1]["content"]


def test_codex_failed_command_patch_and_unknown_call_are_on_the_record(
    server: GatewayServer, edge: FakeUpstream, tmp_path: Path
) -> None:
    """A command that exits non-zero, a patch Codex cannot apply and a call to a tool it lacks
    come back in Codex's own words: the gateway reads each previous step's failure from them, so
    the run's failure record (what the judges read) holds them; a command that worked is no
    failure."""

    def shell(command: str, call_id: str) -> dict[str, Any]:
        arguments = orjson.dumps({"cmd": command}).decode()
        return {"kind": "tool_call", "name": "exec_command", "arguments": arguments, "call_id": call_id}

    patch = "*** Begin Patch\n*** Update File: missing.txt\n@@\n-old\n+new\n*** End Patch\n"
    bad_patch = {
        "kind": "tool_call",
        "name": "apply_patch",
        "arguments": orjson.dumps({"input": patch}).decode(),
        "call_id": "call_patch",
    }
    unknown = {"kind": "tool_call", "name": "nope_tool", "arguments": "{}", "call_id": "call_nope"}
    answers = [shell("ls /no-such-folder", "call_ls"), shell("echo ok > proof.txt", "call_ok"), bad_patch, unknown]
    edge.push(*answers, {"text": "done"})
    code, output, work = codex(server, tmp_path, "write proof.txt", model="gpt-5.5")
    assert code == 0, output
    assert (work / "proof.txt").read_text() == "ok\n"
    [trajectory] = trajectories(server)
    records = sorted(trajectory["records"], key=lambda r: r["step"])
    shown = [r.body["messages"][-1]["content"] for r in edge.received[1:]]
    assert shown[-1] == "unsupported call: nope_tool"  # a call to a tool Codex does not have
    failed = [(r["step"], r["failed_before"]) for r in records]
    assert failed == [(1, None), (2, 1), (3, 0), (4, 1), (5, 1)], shown

"""Sub-agents as child trajectories (issue 30): Claude Code's Task tool starts a new conversation
(its own system prompt, the Task's prompt as its first user message) in the same session; it is
its own trajectory, linked to its parent and the parent's step, and the parent's cost shows its
children's apart. Real gateway, `/v1/messages` streamed as Claude Code sends it, a scripted
upstream; both stores."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import orjson
import pytest

from tests import both_stores
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, wait_until

MakeGateway = Callable[..., GatewayServer]
make_gateway = both_stores.make_gateway
SESSION = {"X-Claude-Code-Session-Id": "cc-session-1", "anthropic-version": "2023-06-01"}
PROMPT = "Find where the config file is loaded and report the function name."
TASK_INPUT = {"description": "find the loader", "prompt": PROMPT, "subagent_type": "general-purpose"}


@pytest.fixture()
def server(make_gateway: MakeGateway) -> GatewayServer:
    return make_gateway(routes={"tandem": {"strategy": "edge", "failover": False}})


def _messages(
    client: httpx.Client,
    server: GatewayServer,
    system: str,
    messages: list[dict[str, Any]],
    headers: dict[str, str] = SESSION,
) -> tuple[str, str]:
    """A streamed Messages step as Claude Code sends it: (trajectory id, step)."""
    body = {"model": "tandem", "max_tokens": 512, "stream": True, "system": system, "messages": messages}
    with client.stream("POST", f"{server.url}/v1/messages", json=body, headers=headers) as response:
        assert response.status_code == 200
        response.read()
        return response.headers["x-tandem-trajectory"], response.headers["x-tandem-step"]


def _detail(client: httpx.Client, server: GatewayServer, trajectory_id: str, steps: int) -> dict[str, Any]:
    found: dict[str, Any] = {}

    def recorded() -> bool:
        found.clear()
        found.update(client.get(f"{server.url}/v1/trajectories/{trajectory_id}").json())
        return len(found.get("records", [])) >= steps

    assert wait_until(recorded)
    return found


def test_a_task_tool_sub_agent_is_a_child_trajectory_of_its_parent_step(
    server: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    arguments = orjson.dumps(TASK_INPUT).decode()
    edge.push(
        {"kind": "tool_call", "call_id": "toolu_01", "name": "Task", "arguments": arguments},  # the parent's step 1
        {"kind": "tool_call", "call_id": "toolu_02", "name": "Grep", "arguments": '{"pattern": "load_config"}'},
        {"kind": "text", "text": "The loader is load_config in app/config.py."},  # the sub-agent's answer
        {"kind": "text", "text": "Refactored."},  # the parent's step 2
    )
    task = [{"role": "user", "content": "refactor the config loading"}]
    parent, step = _messages(client, server, "You are Claude Code.", task)
    assert (parent, step) == ("cc-session-1", "1")

    # The sub-agent: the same session, its own system prompt, the Task's prompt first.
    sub = [{"role": "user", "content": [{"type": "text", "text": PROMPT}]}]
    child, child_step = _messages(client, server, "You are a search agent.", sub)
    assert child != parent and child.startswith(parent + "~")
    assert child_step == "1"
    grep = {"type": "tool_use", "id": "toolu_02", "name": "Grep", "input": {"pattern": "load_config"}}
    sub += [
        {"role": "assistant", "content": [grep]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_02", "content": "app/config.py"}]},
    ]
    assert _messages(client, server, "You are a search agent.", sub) == (child, "2")

    # The parent goes on with the Task's result: its own step 2.
    use = {"type": "tool_use", "id": "toolu_01", "name": "Task", "input": TASK_INPUT}
    result = {"type": "tool_result", "tool_use_id": "toolu_01", "content": "load_config in app/config.py"}
    history = [*task, {"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    assert _messages(client, server, "You are Claude Code.", history) == (parent, "2")

    child_detail = _detail(client, server, child, 2)
    assert child_detail["parent"] == {"id": parent, "step": 1}
    assert child_detail["steps"] == 2
    parent_detail = _detail(client, server, parent, 2)
    assert parent_detail["steps"] == 2  # the sub-agent's steps are not the parent's
    assert wait_until(lambda: bool(_detail(client, server, parent, 2).get("children")))
    parent_detail = _detail(client, server, parent, 2)
    [listed] = parent_detail["children"]
    assert (listed["id"], listed["parent_step"], listed["steps"]) == (child, 1, 2)
    assert listed["cost_usd"] > 0 and parent_detail["children_cost_usd"] == listed["cost_usd"]
    assert parent_detail["cost_with_children_usd"] == pytest.approx(parent_detail["cost_usd"] + listed["cost_usd"])


def test_a_new_conversation_no_task_started_stays_in_its_session(
    server: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    """A side call of the same session (a title, a summary) that no Task started is no child."""
    task = [{"role": "user", "content": "refactor the config loading"}]
    parent, _ = _messages(client, server, "You are Claude Code.", task)
    side, step = _messages(client, server, "Write a title.", [{"role": "user", "content": PROMPT}])
    assert (side, step) == (parent, "2")


def test_a_sub_agents_sub_agent_is_its_child_and_its_cost_reaches_the_top_run(
    server: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    """A sub-agent that starts a sub-agent of its own: the grandchild is the child's child, and
    the top run's cost with children counts it."""
    inner_prompt = "List the callers of load_config."
    inner = {"description": "callers", "prompt": inner_prompt, "subagent_type": "general-purpose"}
    edge.push(
        {"kind": "tool_call", "call_id": "toolu_11", "name": "Task", "arguments": orjson.dumps(TASK_INPUT).decode()},
        {"kind": "tool_call", "call_id": "toolu_12", "name": "Task", "arguments": orjson.dumps(inner).decode()},
        {"kind": "text", "text": "main.py and cli.py call it."},  # the grandchild's answer
    )
    parent, _ = _messages(client, server, "You are Claude Code.", [{"role": "user", "content": "refactor"}])
    child, _ = _messages(client, server, "You are a search agent.", [{"role": "user", "content": PROMPT}])
    grandchild, step = _messages(client, server, "You are a search agent.", [{"role": "user", "content": inner_prompt}])
    assert child.startswith(parent + "~") and grandchild.startswith(child + "~") and step == "1"
    assert _detail(client, server, grandchild, 1)["parent"] == {"id": child, "step": 1}

    def linked() -> bool:
        listed = _detail(client, server, parent, 1).get("children") or [{}]
        return listed[0].get("children") == 1

    assert wait_until(linked)
    top = _detail(client, server, parent, 1)
    [listed] = top["children"]
    costs = {t: _detail(client, server, t, 1)["cost_usd"] for t in (parent, child, grandchild)}
    assert all(cost > 0 for cost in costs.values())
    assert listed["id"] == child and listed["cost_usd"] == pytest.approx(costs[child])
    assert listed["cost_with_children_usd"] == pytest.approx(costs[child] + costs[grandchild])
    assert top["children_cost_usd"] == pytest.approx(costs[child] + costs[grandchild])
    assert top["cost_with_children_usd"] == pytest.approx(sum(costs.values()))


def test_a_sub_agent_of_a_stitched_run_is_linked_to_it(
    server: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    """No session: the parent and its sub-agent are stitched runs; the sub-agent's first request
    (its own system prompt, the Task's prompt first) is linked to the step that started it,
    and its later steps stay its own."""
    edge.push(
        {"kind": "tool_call", "call_id": "toolu_21", "name": "Task", "arguments": orjson.dumps(TASK_INPUT).decode()},
        {"kind": "tool_call", "call_id": "toolu_22", "name": "Grep", "arguments": '{"pattern": "load_config"}'},
        {"kind": "text", "text": "The loader is load_config in app/config.py."},
    )
    plain = {"anthropic-version": "2023-06-01"}
    parent, _ = _messages(client, server, "You are Claude Code.", [{"role": "user", "content": "refactor"}], plain)
    sub: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
    child, step = _messages(client, server, "You are a search agent.", sub, plain)
    assert child != parent and step == "1"
    grep = {"type": "tool_use", "id": "toolu_22", "name": "Grep", "input": {"pattern": "load_config"}}
    sub += [
        {"role": "assistant", "content": [grep]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_22", "content": "app/config.py"}]},
    ]
    assert _messages(client, server, "You are a search agent.", sub, plain) == (child, "2")
    assert _detail(client, server, child, 2)["parent"] == {"id": parent, "step": 1}
    assert wait_until(lambda: bool(_detail(client, server, parent, 1).get("children")))
    [listed] = _detail(client, server, parent, 1)["children"]
    assert (listed["id"], listed["parent_step"], listed["steps"]) == (child, 1, 2)
    # The prompt links once: another run that starts with it is a run of its own.
    other, _ = _messages(client, server, "You are a search agent.", [{"role": "user", "content": PROMPT}], plain)
    assert "parent" not in _detail(client, server, other, 1)


def _responses(client: httpx.Client, server: GatewayServer, text: str, headers: dict[str, str]) -> tuple[str, str]:
    """A Responses step as Codex sends it: (trajectory id, step)."""
    body = {"model": "tandem", "input": text, "prompt_cache_key": headers["session-id"]}
    response = client.post(f"{server.url}/v1/responses", json=body, headers=headers)
    assert response.status_code == 200, response.text
    return response.headers["x-tandem-trajectory"], response.headers["x-tandem-step"]


def _thread(thread: str, parent: str | None = None) -> dict[str, str]:
    """Codex's identity headers: one session for every agent of a run, each agent's own thread."""
    headers = {"session-id": "run-1", "thread-id": thread}
    return headers if parent is None else {**headers, "x-codex-parent-thread-id": parent}


def test_codex_threads_are_children_by_the_threads_they_name_and_nest(
    server: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    spawn = {"kind": "tool_call", "name": "multi_agent_v1__spawn_agent", "arguments": '{"message": "look"}'}
    edge.push(spawn, spawn, {"text": "child done"}, {"text": "grandchild done"}, {"text": "parent again"})
    assert _responses(client, server, "delegate", _thread("run-1")) == ("run-1", "1")
    child, _ = _responses(client, server, "look", _thread("t-child", "run-1"))
    grandchild, _ = _responses(client, server, "look deeper", _thread("t-grand", "t-child"))
    assert _responses(client, server, "go on", _thread("t-child", "run-1")) == (child, "2")
    # The root thread stays the run's trajectory, whatever the parent header of another says.
    assert _responses(client, server, "and on", _thread("run-1")) == ("run-1", "2")
    assert (child, grandchild) == ("run-1~t-child", "run-1~t-grand")
    assert _detail(client, server, child, 2)["parent"] == {"id": "run-1", "step": 1}
    assert _detail(client, server, grandchild, 1)["parent"] == {"id": child, "step": 1}
    parent = _detail(client, server, "run-1", 2)
    assert [c["id"] for c in parent["children"]] == [child]
    assert parent["steps"] == 2  # the sub-agents' steps are theirs, not the run's


def _chat(client: httpx.Client, server: GatewayServer, messages: list[dict[str, Any]], session: str) -> str:
    """A chat step as the OpenHands SDK sends it: its conversation's session header, and the
    run's cache key (a Task sub-agent shares its parent's)."""
    body = {"model": "tandem", "messages": messages, "prompt_cache_key": "conv-parent"}
    response = client.post(f"{server.url}/v1/chat/completions", json=body, headers={"x-litellm-session-id": session})
    assert response.status_code == 200, response.text
    return response.headers["x-tandem-trajectory"]


def test_a_sub_agent_in_a_conversation_of_its_own_is_linked_by_the_cache_key_it_shares(
    server: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    task = {"description": "count", "prompt": PROMPT, "subagent_type": "general-purpose"}
    edge.push({"kind": "tool_call", "name": "task", "arguments": orjson.dumps(task).decode()}, {"text": "3 files"})
    system = {"role": "system", "content": "You are OpenHands."}
    assert _chat(client, server, [system, {"role": "user", "content": "delegate"}], "conv-parent") == "conv-parent"
    child = _chat(client, server, [system, {"role": "user", "content": PROMPT}], "conv-child")
    # Another conversation that shares the key but was started by no Task call stays unlinked.
    edge.push({"text": "hello"})
    other = _chat(client, server, [system, {"role": "user", "content": "something else"}], "conv-other")
    assert (child, other) == ("conv-child", "conv-other")
    assert _detail(client, server, child, 1)["parent"] == {"id": "conv-parent", "step": 1}
    assert "parent" not in _detail(client, server, other, 1)
    assert [c["id"] for c in _detail(client, server, "conv-parent", 1)["children"]] == [child]

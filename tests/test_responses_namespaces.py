"""`/v1/responses` tools in namespaces (Codex's sub-agent tools, dynamic and MCP tools): each
function reaches a chat model as `<namespace>__<name>`, the answer's call goes back under its own
name with its `namespace` (plain and streamed), the history's namespaced calls flatten the same
way, on the whole path and on a split body. Real gateway, scripted upstream, the openai SDK."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import orjson

from router.surfaces.responses.handler import SPEC
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

PARAMETERS = {"type": "object", "properties": {"message": {"type": "string"}}}
TOOLS: list[Any] = [
    {"type": "function", "name": "exec_command", "description": "run a command", "parameters": PARAMETERS},
    {
        "type": "namespace",
        "name": "multi_agent_v1",
        "description": "Tools for spawning and managing sub-agents.",
        "tools": [
            {"type": "function", "name": "spawn_agent", "description": "start an agent", "parameters": PARAMETERS},
            {"type": "function", "name": "close_agent", "description": "stop an agent", "parameters": PARAMETERS},
        ],
    },
    {"type": "web_search", "external_web_access": True},
]
SPAWN = {"kind": "tool_call", "name": "multi_agent_v1__spawn_agent", "arguments": '{"message": "hi"}', "call_id": "c1"}


def sdk(server: GatewayServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)


def test_namespaced_functions_reach_the_model_flat_and_come_back_in_their_namespace(
    gateway: GatewayServer, edge: FakeUpstream
) -> None:
    edge.push(SPAWN)
    answer = sdk(gateway).responses.create(model="tandem", input="delegate", tools=TOOLS)
    sent = edge.received[0].body
    assert [t["function"]["name"] for t in sent["tools"]] == [
        "exec_command",
        "multi_agent_v1__spawn_agent",
        "multi_agent_v1__close_agent",
    ]
    assert sent["tools"][1]["function"]["description"] == "start an agent"
    [call] = answer.output
    raw = call.model_dump()
    assert (raw["type"], raw["name"], raw["namespace"], raw["call_id"]) == (
        "function_call",
        "spawn_agent",
        "multi_agent_v1",
        "c1",
    )


def test_a_streamed_call_names_its_namespace_in_every_event_that_carries_the_item(
    gateway: GatewayServer, edge: FakeUpstream
) -> None:
    edge.push(SPAWN)
    body = {"model": "tandem", "input": "delegate", "tools": TOOLS, "stream": True}
    with httpx.Client(timeout=10) as http:
        text = http.post(f"{gateway.base_url}/responses", json=body).text
    events = [orjson.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
    items = [e["item"] for e in events if "item" in e] + [
        o for e in events if e["type"] == "response.completed" for o in e["response"]["output"]
    ]
    assert len(items) == 3  # added, done, and in the completed response
    assert all((i["name"], i["namespace"]) == ("spawn_agent", "multi_agent_v1") for i in items)


def test_a_plain_function_keeps_its_name_and_has_no_namespace(gateway: GatewayServer, edge: FakeUpstream) -> None:
    edge.push({"kind": "tool_call", "name": "exec_command", "arguments": "{}", "call_id": "c2"})
    answer = sdk(gateway).responses.create(model="tandem", input="run", tools=TOOLS)
    raw = answer.output[0].model_dump()
    assert raw["name"] == "exec_command" and raw.get("namespace") is None


def test_the_history_of_namespaced_calls_flattens_as_the_tools_do(gateway: GatewayServer, edge: FakeUpstream) -> None:
    history: list[Any] = [
        {"type": "message", "role": "user", "content": "delegate"},
        {
            "type": "function_call",
            "call_id": "c1",
            "name": "spawn_agent",
            "namespace": "multi_agent_v1",
            "arguments": "{}",
        },
        {"type": "function_call_output", "call_id": "c1", "output": '{"agent_id": "a1"}'},
    ]
    # Long enough that the second request reuses the first's translated history (a split body).
    padding = [{"type": "message", "role": "user", "content": "x" * 70_000}]
    for turn in range(2):
        body = {"model": "tandem", "input": padding + history, "tools": TOOLS}
        with httpx.Client(timeout=10) as http:
            assert http.post(f"{gateway.base_url}/responses", json=body).status_code == 200
        history = [*history, {"type": "message", "role": "user", "content": f"turn {turn}"}]
    assert gateway.gateway.parser.translated(SPEC).reused == 1
    for received in edge.received:
        calls = [m for m in received.body["messages"] if m.get("tool_calls")]
        assert calls[0]["tool_calls"][0]["function"]["name"] == "multi_agent_v1__spawn_agent"


def test_tools_that_would_share_a_chat_name_or_a_bad_namespace_are_a_400_naming_them(
    gateway: GatewayServer, edge: FakeUpstream
) -> None:
    clash = [*TOOLS, {"type": "function", "name": "multi_agent_v1__spawn_agent", "parameters": PARAMETERS}]
    nameless: list[Any] = [{"type": "namespace", "tools": []}]
    bad_call = [{"type": "function_call", "call_id": "c", "name": "x", "namespace": 3, "arguments": "{}"}]
    cases: list[tuple[dict[str, Any], str]] = [
        ({"model": "tandem", "input": "x", "tools": clash}, "multi_agent_v1__spawn_agent"),
        ({"model": "tandem", "input": "x", "tools": nameless}, "namespace needs a name"),
        ({"model": "tandem", "input": bad_call}, "namespace must be a non-empty string"),
    ]
    with httpx.Client(timeout=10) as http:
        for body, words in cases:
            reply = http.post(f"{gateway.base_url}/responses", json=body)
            assert reply.status_code == 400, reply.text
            assert words in reply.json()["error"]["message"]
    assert edge.received == []

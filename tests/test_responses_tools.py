"""`/v1/responses` tools chat lacks: tools in namespaces (Codex's sub-agent tools, dynamic and
MCP tools) reach a chat model as `<namespace>__<name>` and their calls go back under their own
name with their `namespace`; custom (freeform) tools (Codex's `apply_patch`) reach it as a
function of one `input` string described with its grammar and go back as `custom_tool_call`s;
plain and streamed, the history's calls translated the same way, on the whole path and on a
split body. Real gateway, scripted upstream, the openai SDK."""

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
    {
        "type": "custom",
        "name": "apply_patch",
        "description": "edit files",
        "format": {"type": "grammar", "syntax": "lark", "definition": "start: begin_patch hunk+ end_patch"},
    },
    {"type": "web_search", "external_web_access": True},
]
PATCH = "*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch\n"
EDIT = {
    "kind": "tool_call",
    "name": "apply_patch",
    "arguments": orjson.dumps({"input": PATCH}).decode(),
    "call_id": "c3",
}
SPAWN = {"kind": "tool_call", "name": "multi_agent_v1__spawn_agent", "arguments": '{"message": "hi"}', "call_id": "c1"}


def sdk(server: GatewayServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)


def streamed(gateway: GatewayServer, text: str) -> list[dict[str, Any]]:
    """The events of a streamed answer to `text` with the tools above."""
    body = {"model": "tandem", "input": text, "tools": TOOLS, "stream": True}
    with httpx.Client(timeout=10) as http:
        reply = http.post(f"{gateway.base_url}/responses", json=body).text
    return [orjson.loads(line[6:]) for line in reply.splitlines() if line.startswith("data: ")]


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
        "apply_patch",
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
    events = streamed(gateway, "delegate")
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


def test_a_custom_tool_is_a_function_of_its_input_and_its_call_a_custom_tool_call(
    gateway: GatewayServer, edge: FakeUpstream
) -> None:
    edge.push(EDIT)
    answer = sdk(gateway).responses.create(model="tandem", input="edit", tools=TOOLS)
    [function] = [t["function"] for t in edge.received[0].body["tools"] if t["function"]["name"] == "apply_patch"]
    assert function["parameters"]["required"] == ["input"]
    assert "edit files" in function["description"] and "start: begin_patch hunk+ end_patch" in function["description"]
    raw = answer.output[0].model_dump()
    assert (raw["type"], raw["name"], raw["call_id"], raw["input"]) == ("custom_tool_call", "apply_patch", "c3", PATCH)


def test_a_streamed_custom_tool_call_sends_its_input_whole_never_json_fragments(
    gateway: GatewayServer, edge: FakeUpstream
) -> None:
    edge.push(EDIT)
    events = streamed(gateway, "edit")
    kinds = [e["type"] for e in events]
    assert "response.function_call_arguments.delta" not in kinds
    [done] = [e for e in events if e["type"] == "response.custom_tool_call_input.done"]
    assert done["input"] == PATCH
    [final] = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert (final["type"], final["input"]) == ("custom_tool_call", PATCH)


def test_the_history_of_a_custom_tool_call_is_its_function_call_and_tool_message(
    gateway: GatewayServer, edge: FakeUpstream
) -> None:
    history: list[Any] = [
        {"type": "message", "role": "user", "content": "edit"},
        {"type": "custom_tool_call", "call_id": "c3", "name": "apply_patch", "input": PATCH},
        {"type": "custom_tool_call_output", "call_id": "c3", "output": "Success. Updated: A a.txt"},
    ]
    with httpx.Client(timeout=10) as http:
        reply = http.post(f"{gateway.base_url}/responses", json={"model": "tandem", "input": history, "tools": TOOLS})
    assert reply.status_code == 200, reply.text
    sent = edge.received[0].body["messages"]
    call = sent[-2]["tool_calls"][0]
    assert call["function"]["name"] == "apply_patch" and orjson.loads(call["function"]["arguments"]) == {"input": PATCH}
    assert sent[-1] == {"role": "tool", "tool_call_id": "c3", "content": "Success. Updated: A a.txt"}

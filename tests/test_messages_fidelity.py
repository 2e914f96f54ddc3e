"""`/v1/messages`: nothing a client sends is dropped without a word. Images (inline and by URL)
and documents, in a turn or inside a tool result, reach the upstream in the chat form; a block
that has none is a 400 naming it; `top_k`, `disable_parallel_tool_use` and `is_error` are mapped.
Real gateway, scripted upstream, the real anthropic SDK."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx

from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

PNG = "iVBORw0KGgo="
PDF = "JVBERi0xLjQ="
TOOLS: Any = [
    {
        "name": "read",
        "description": "read a file",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    }
]


def sdk(server: GatewayServer) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.url, api_key="unused", max_retries=0)


def _history(result: Any, is_error: bool = False) -> Any:
    """A read of a file whose tool result is `result`."""
    call = {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.png"}}
    tool_result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": result, "is_error": is_error}
    return [
        {"role": "user", "content": "look at a.png"},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [tool_result, {"type": "text", "text": "what is in it?"}]},
    ]


def test_an_image_in_a_tool_result_follows_the_tool_message(gateway: GatewayServer, edge: FakeUpstream) -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    result = [{"type": "text", "text": "a.png (1x1)"}, image]
    sdk(gateway).messages.create(model="tandem", max_tokens=32, tools=TOOLS, messages=_history(result))
    sent = edge.received[0].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "user"]
    assert sent[2]["tool_call_id"] == "toolu_1" and sent[2]["content"].startswith("a.png (1x1)\n")
    assert "follow in the next user message" in sent[2]["content"]
    parts = sent[3]["content"]
    assert parts[0]["type"] == "text" and "toolu_1" in parts[0]["text"]
    assert parts[1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
    assert parts[2] == {"type": "text", "text": "what is in it?"}


def test_url_images_and_documents_in_a_turn(gateway: GatewayServer, edge: FakeUpstream) -> None:
    content: Any = [
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
        {
            "type": "document",
            "title": "spec.pdf",
            "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
        },
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "plain notes"}},
        {"type": "text", "text": "summarise"},
    ]
    sdk(gateway).messages.create(model="tandem", max_tokens=32, messages=[{"role": "user", "content": content}])
    assert edge.received[0].body["messages"][0]["content"] == [
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{PDF}", "filename": "spec.pdf"}},
        {"type": "text", "text": "plain notes"},
        {"type": "text", "text": "summarise"},
    ]


def test_a_failed_tool_result_is_marked(gateway: GatewayServer, edge: FakeUpstream) -> None:
    history = _history("No such file: a.png", is_error=True)
    sdk(gateway).messages.create(model="tandem", max_tokens=32, tools=TOOLS, messages=history)
    assert edge.received[0].body["messages"][2]["content"] == "[tool error] No such file: a.png"


def test_top_k_and_disable_parallel_tool_use_are_mapped(gateway: GatewayServer, edge: FakeUpstream) -> None:
    sdk(gateway).messages.create(
        model="tandem",
        max_tokens=32,
        extra_body={"top_k": 20},  # this SDK has no top_k argument; the API has the field
        tools=TOOLS,
        tool_choice={"type": "auto", "disable_parallel_tool_use": True},
        messages=[{"role": "user", "content": "hi"}],
    )
    sent = edge.received[0].body
    assert sent["top_k"] == 20 and sent["parallel_tool_calls"] is False and sent["tool_choice"] == "auto"


def test_blocks_without_a_chat_form_are_a_400_naming_them(
    gateway: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    cases = [
        ({"type": "image", "source": {"type": "file", "file_id": "file_1"}}, "messages[0].content[1]", "'file'"),
        (
            {"type": "document", "source": {"type": "url", "url": "https://e.com/a.pdf"}},
            "messages[0].content[1]",
            "'url'",
        ),
        (
            {"type": "search_result", "source": "s", "title": "t", "content": []},
            "messages[0].content[1]",
            "search_result",
        ),
        (
            {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "image", "source": {"type": "file"}}]},
            "messages[0].content[1].content[0]",
            "'file'",
        ),
        # A document's inline content that is neither text nor a list of blocks (a 500 before).
        *(
            (
                {"type": "document", "source": {"type": "content", "content": odd}},
                "messages[0].content[1].source.content",
                named,
            )
            for odd, named in (
                (5, "number"),
                (True, "boolean"),
                ({"type": "text", "text": "x"}, "object"),
                (None, "null"),
            )
        ),
    ]
    for block, where, named in cases:
        content = [{"type": "text", "text": "hi"}, block]
        body = {"model": "tandem", "max_tokens": 8, "messages": [{"role": "user", "content": content}]}
        answer = client.post(f"{gateway.url}/v1/messages", json=body)
        assert answer.status_code == 400, block
        message = answer.json()["error"]["message"]
        assert message.startswith(where + ":") and named in message, message
        # count_tokens refuses what /v1/messages refuses, in the same shape and words.
        counted = client.post(f"{gateway.url}/v1/messages/count_tokens", json=body)
        assert counted.status_code == 400 and counted.json()["type"] == "error", counted.text
        assert counted.json()["error"]["message"] == message
    assert edge.received == []


def test_structured_output_and_effort_are_mapped(
    gateway: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    sdk(gateway).messages.create(
        model="tandem",
        max_tokens=32,
        output_config={"effort": "low", "format": {"type": "json_schema", "schema": schema}},
        messages=[{"role": "user", "content": "is it ok?"}],
    )
    sent = edge.received[0].body
    assert sent["response_format"] == {"type": "json_schema", "json_schema": {"name": "output", "schema": schema}}
    assert sent["reasoning_effort"] == "low"
    body = {
        "model": "tandem",
        "max_tokens": 8,
        "output_config": {"format": {"type": "xml"}},
        "messages": [{"role": "user", "content": "hi"}],
    }
    answer = client.post(f"{gateway.url}/v1/messages", json=body)
    assert answer.status_code == 400 and "output_config.format" in answer.json()["error"]["message"]
    assert len(edge.received) == 1

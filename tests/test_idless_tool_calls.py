"""Tool calls an upstream gives without ids (Gemini's OpenAI-compatible endpoint gives empty
ids, NVIDIA NIM and older llama.cpp servers none): the chat surface relays them as they are,
plain as streamed (no 502, no failover); the translated surfaces give each call an id of its
own, so that a client can answer each. Real gateway, scripted upstream, the real SDKs."""

from __future__ import annotations

import anthropic
import httpx
import openai
import pytest

from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer
from tests.translated_answers import plain, streamed

CALLS = [("", "get_weather", '{"city": "Paris"}'), ("", "get_weather", '{"city": "Rome"}')]


@pytest.mark.parametrize("stream", [False, True])
def test_the_chat_surface_relays_calls_without_ids(
    gateway: GatewayServer, edge: FakeUpstream, cloud: FakeUpstream, client: httpx.Client, stream: bool
) -> None:
    edge.push((streamed if stream else plain)({}, finish="tool_calls", calls=CALLS))
    body = {"model": "tandem", "stream": stream, "messages": [{"role": "user", "content": "weather?"}]}
    response = client.post(f"{gateway.base_url}/chat/completions", json=body)
    assert response.status_code == 200, response.text
    assert response.headers["x-tandem-target"] == "edge" and not cloud.received
    if not stream:
        calls = response.json()["choices"][0]["message"]["tool_calls"]
        assert [c["function"]["arguments"] for c in calls] == ['{"city": "Paris"}', '{"city": "Rome"}']


def test_messages_give_each_call_without_an_id_one(gateway: GatewayServer, edge: FakeUpstream) -> None:
    sdk = anthropic.Anthropic(base_url=gateway.url, api_key="unused", max_retries=0)
    args = {"model": "tandem", "max_tokens": 100, "messages": [{"role": "user", "content": "weather?"}]}
    edge.push(plain({}, finish="tool_calls", calls=CALLS))
    whole = sdk.messages.create(**args)  # type: ignore[call-overload]
    edge.push(streamed({}, finish="tool_calls", calls=CALLS))
    with sdk.messages.stream(**args) as stream:  # type: ignore[arg-type]
        built = stream.get_final_message()
    for answer in (whole, built):
        ids = [block.id for block in answer.content if block.type == "tool_use"]
        assert len(ids) == 2 and len(set(ids)) == 2 and all(i.startswith("toolu_") for i in ids), ids


def test_responses_give_each_call_without_an_id_one(gateway: GatewayServer, edge: FakeUpstream) -> None:
    sdk = openai.OpenAI(base_url=gateway.base_url, api_key="unused", max_retries=0)
    edge.push(plain({}, finish="tool_calls", calls=CALLS))
    whole = sdk.responses.create(model="tandem", input="weather?")
    edge.push(streamed({}, finish="tool_calls", calls=CALLS))
    with sdk.responses.stream(model="tandem", input="weather?") as stream:
        built = stream.get_final_response()
    for answer in (whole, built):
        ids = [item.call_id for item in answer.output if item.type == "function_call"]
        assert len(ids) == 2 and len(set(ids)) == 2 and all(i.startswith("call_") for i in ids), ids

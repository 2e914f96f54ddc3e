"""The real vLLM server does what the gateway relies on: usage, streaming, logprobs, tool calls,
context-length errors. These talk to vLLM directly, without the gateway."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from sim.vllm_edge import VLLMServer

pytestmark = pytest.mark.vllm

# A random model never closes an unconstrained JSON string, and with parallel tool calls allowed
# it starts a second call until max_tokens. An enum and one call make the output end by itself.
WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city.",
        "strict": True,
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "enum": ["Paris", "Tokyo"]}},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}


@pytest.fixture()
def client(vllm_server: VLLMServer) -> Iterator[httpx.Client]:
    # trust_env=False: loopback requests must never go through a proxy from the environment.
    with httpx.Client(base_url=vllm_server.base_url, timeout=30.0, trust_env=False) as client:
        yield client


def chat_body(vllm_server: VLLMServer, **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": vllm_server.model,
        "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
        "max_tokens": 8,
        "temperature": 0,
    }
    body.update(fields)
    return body


def sse_events(response: httpx.Response) -> list[dict[str, Any]]:
    """Parse an SSE body into its JSON events; assert it ends with [DONE]."""
    data = [line[len("data: ") :] for line in response.iter_lines() if line.startswith("data: ")]
    assert data[-1] == "[DONE]"
    return [json.loads(item) for item in data[:-1]]


def test_chat_at_temperature_zero_is_deterministic_and_reports_usage(
    vllm_server: VLLMServer, client: httpx.Client
) -> None:
    answers = [client.post("/chat/completions", json=chat_body(vllm_server)) for _ in range(2)]

    for response in answers:
        assert response.status_code == 200, response.text
    first, second = (response.json() for response in answers)
    assert first["model"] == vllm_server.model
    assert first["choices"][0]["message"]["content"]
    assert first["choices"][0]["message"]["content"] == second["choices"][0]["message"]["content"]
    usage = first["usage"]
    assert usage["prompt_tokens"] > 0
    assert 0 < usage["completion_tokens"] <= 8
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_stream_with_include_usage_ends_with_a_usage_chunk(vllm_server: VLLMServer, client: httpx.Client) -> None:
    body = chat_body(vllm_server, stream=True, stream_options={"include_usage": True}, ignore_eos=True)

    with client.stream("POST", "/chat/completions", json=body) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = sse_events(response)

    *content_events, usage_event = events
    assert usage_event["choices"] == []
    assert usage_event["usage"]["completion_tokens"] == 8  # ignore_eos: exactly max_tokens
    assert usage_event["usage"]["prompt_tokens"] > 0
    text = "".join(event["choices"][0]["delta"].get("content") or "" for event in content_events)
    assert text
    assert content_events[-1]["choices"][0]["finish_reason"] == "length"


def test_one_token_with_twenty_top_logprobs(vllm_server: VLLMServer, client: httpx.Client) -> None:
    body = chat_body(vllm_server, max_tokens=1, logprobs=True, top_logprobs=20)

    response = client.post("/chat/completions", json=body)

    assert response.status_code == 200, response.text
    (token,) = response.json()["choices"][0]["logprobs"]["content"]
    top = token["top_logprobs"]
    assert len(top) == 20
    values = [entry["logprob"] for entry in top]
    assert values == sorted(values, reverse=True)
    assert all(value <= 0.0 for value in values)
    # Greedy decoding picks the most likely token.
    assert token["logprob"] == pytest.approx(values[0])
    over_limit = client.post("/chat/completions", json={**body, "top_logprobs": 21})
    assert over_limit.status_code == 400


def test_strict_tool_with_required_choice_gives_a_valid_call(vllm_server: VLLMServer, client: httpx.Client) -> None:
    body = chat_body(
        vllm_server, max_tokens=100, tools=[WEATHER_TOOL], tool_choice="required", parallel_tool_calls=False
    )

    response = client.post("/chat/completions", json=body)

    assert response.status_code == 200, response.text
    choice = response.json()["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    (call,) = choice["message"]["tool_calls"]
    assert call["type"] == "function"
    assert call["id"]
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"])["city"] in ("Paris", "Tokyo")


def test_strict_tool_call_streams_as_tool_call_deltas(vllm_server: VLLMServer, client: httpx.Client) -> None:
    body = chat_body(
        vllm_server,
        max_tokens=100,
        tools=[WEATHER_TOOL],
        tool_choice="required",
        parallel_tool_calls=False,
        stream=True,
        stream_options={"include_usage": True},
    )

    with client.stream("POST", "/chat/completions", json=body) as response:
        assert response.status_code == 200
        events = sse_events(response)

    deltas = [
        tool_call
        for event in events
        for choice in event["choices"]
        for tool_call in choice["delta"].get("tool_calls") or []
    ]
    assert len(deltas) > 1  # arguments arrive in pieces, not as one blob
    assert {delta["index"] for delta in deltas} == {0}
    assert deltas[0]["id"]
    assert deltas[0]["function"]["name"] == "get_weather"
    arguments = "".join(delta["function"].get("arguments") or "" for delta in deltas)
    assert json.loads(arguments)["city"] in ("Paris", "Tokyo")
    finish_reasons = [choice["finish_reason"] for event in events for choice in event["choices"]]
    assert finish_reasons[-1] == "tool_calls"
    assert events[-1]["choices"] == []
    assert events[-1]["usage"]["completion_tokens"] > 0


def test_prompt_over_the_context_is_a_400(vllm_server: VLLMServer, client: httpx.Client) -> None:
    body = chat_body(vllm_server, messages=[{"role": "user", "content": "hello world " * 1100}])

    response = client.post("/chat/completions", json=body)

    assert response.status_code == 400
    error = response.json()["error"]
    assert "maximum context length" in error["message"]
    assert error["code"] == 400


def test_unknown_model_is_a_404(vllm_server: VLLMServer, client: httpx.Client) -> None:
    response = client.post("/chat/completions", json=chat_body(vllm_server, model="no-such-model"))

    assert response.status_code == 404
    assert "no-such-model" in response.json()["error"]["message"]

"""An upstream's answer where it comes in (router/protocol/completion_shape.py): a plain answer
that is not a chat completion is the upstream's failure, named; a chunk keeps what a translator
can read; a usage whose counts are not counts is no usage (the step is estimated)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from router.ledger import Usage
from router.protocol.completion_shape import clean_chunk, completion_problem
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

GOOD: dict[str, Any] = {
    "id": "c",
    "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1},
}


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"choices": None}, "'choices' must be an array, got null"),
        ({"choices": [5]}, "choices[0] must be an object, got number"),
        ({"choices": [{"message": "hi"}]}, "choices[0].message must be an object, got string"),
        (
            {"choices": [{"message": {"content": 5}}]},
            "choices[0].message.content must be a string or an array, got number",
        ),
        (
            {"choices": [{"message": {"tool_calls": {}}}]},
            "choices[0].message.tool_calls must be an array of tool calls, got object",
        ),
        (
            {"choices": [{"message": {"tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {}}}]}}]},
            "choices[0].message.tool_calls[0].function.arguments must be a string, got object",
        ),
        ({"choices": [{"message": {}, "finish_reason": 1}]}, "choices[0].finish_reason must be a string, got number"),
        ({"usage": []}, "'usage' must be an object, got array"),
        # No choice, or a tool call a client could neither answer nor run (200s before).
        ({"choices": []}, "'choices' is empty"),
        (
            {"choices": [{"message": {"tool_calls": [{"type": "function", "id": "c1"}]}}]},
            "choices[0].message.tool_calls[0].function.name is missing",
        ),
        (
            {"choices": [{"message": {"tool_calls": [{"id": "c1", "function": None}]}}]},
            "choices[0].message.tool_calls[0].function.name is missing",
        ),
        ({"model": 7}, "'model' must be a string, got number"),
    ],
)
def test_what_is_not_a_chat_completion_is_named(change: dict[str, Any], words: str) -> None:
    assert completion_problem(GOOD) is None
    problem = completion_problem({**GOOD, **change})
    assert problem is not None and words in problem


@pytest.mark.parametrize("call_id", [None, ""])
def test_a_tool_call_without_an_id_is_an_answer(call_id: str | None) -> None:
    # Gemini's OpenAI-compatible endpoint gives empty ids, NVIDIA NIM and older llama.cpp none;
    # streamed, such calls were always relayed.
    call: dict[str, Any] = {"type": "function", "function": {"name": "f", "arguments": "{}"}}
    if call_id is not None:
        call["id"] = call_id
    assert completion_problem({**GOOD, "choices": [{"message": {"tool_calls": [call]}}]}) is None


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"prompt_tokens": 3, "completion_tokens": 1}, Usage(3, 0, 1)),
        ({"prompt_tokens": 3.0, "completion_tokens": None}, Usage(3, 0, 0)),
        ({"prompt_tokens": 3, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": 2}}, Usage(3, 2, 1)),
        ({"prompt_tokens": 1e308, "completion_tokens": 1}, None),
        ({"prompt_tokens": -1, "completion_tokens": 1}, None),
        ({"prompt_tokens": True, "completion_tokens": 1}, None),
        ({"prompt_tokens": "3", "completion_tokens": 1}, None),
        ({"prompt_tokens": 2.5, "completion_tokens": 1}, None),
        ([3, 1], None),
        # Past a billion in one call: no count (2**53 was taken, and made the metrics' float
        # counters inexact for every later step).
        ({"prompt_tokens": 2**53, "completion_tokens": 1}, None),
        ({"prompt_tokens": 2**30, "completion_tokens": 1}, Usage(2**30, 0, 1)),
        # No count under any name: none (it read as 0 and 0, reported by the upstream).
        ({}, None),
        ({"total_tokens": 9}, None),
        # Anthropic's names, as a proxy may answer the chat API with them.
        ({"input_tokens": 7, "output_tokens": 2}, Usage(7, 0, 2)),
        (
            {"input_tokens": 7, "output_tokens": 2, "cache_read_input_tokens": 90, "cache_creation_input_tokens": 3},
            Usage(100, 90, 2),
        ),
        ({"input_tokens": 7}, None),
        ({"input_tokens": "7", "output_tokens": 2}, None),
    ],
)
def test_usage_counts_are_whole_numbers_in_range(usage: Any, expected: Usage | None) -> None:
    assert Usage.from_openai(usage) == expected


def test_a_chunk_keeps_what_a_translator_reads() -> None:
    chunk = {
        "id": 5,
        "model": "m",
        "usage": {"prompt_tokens": "x"},
        "choices": [
            7,
            {
                "index": True,
                "delta": {
                    "content": ["no"],
                    "tool_calls": [3, {"index": 1, "id": 9, "function": {"name": "bash", "arguments": {}}}],
                },
                "finish_reason": 0,
            },
        ],
    }
    assert clean_chunk(chunk) == {
        "model": "m",
        "choices": [
            {"index": 0, "delta": {"tool_calls": [{"index": 1, "function": {"name": "bash"}}]}, "finish_reason": None}
        ],
    }
    assert clean_chunk({"choices": "x"}) == {"choices": []}


def test_a_broken_plain_answer_fails_over_or_is_a_502_naming_it(
    make_gateway: Any, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    broken = {"kind": "raw", "status": 200, "body": '{"choices": null}', "content_type": "application/json"}
    body = {"model": "tandem", "messages": [{"role": "user", "content": "hi"}]}
    server: GatewayServer = make_gateway(routes={"tandem": {"strategy": "edge", "failover": True}})
    edge.push(broken)
    answer = httpx.post(f"{server.url}/v1/chat/completions", json=body, timeout=10)
    assert answer.status_code == 200 and answer.headers["x-tandem-target"] == "cloud"
    assert answer.headers["x-tandem-fallback"] == "true"
    alone = make_gateway(routes={"tandem": {"strategy": "edge"}})
    edge.reset()
    edge.push(broken)
    answer = httpx.post(f"{alone.url}/v1/chat/completions", json=body, timeout=10)
    assert answer.status_code == 502
    assert "not a chat completion" in answer.json()["error"]["message"]
    assert "'choices' must be an array, got null" in answer.json()["error"]["message"]

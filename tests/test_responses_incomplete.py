"""An answer the upstream cut short (`finish_reason: length`) on `/v1/responses` is reported as
the Responses API reports it: `status: "incomplete"` with `incomplete_details.reason`
`max_output_tokens`, and a stream that ends with `response.incomplete`, not a completed
response a client would act on as whole. Against a real gateway and a raw upstream."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import openai
import orjson
import pytest
from aiohttp import web

from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer
from tests.raw_upstream import RawUpstream, stream_bytes
from tests.test_answer_limits import raw_upstream

__all__ = ["raw_upstream"]  # the fixture, shared with the answer-limit tests

EDGE_ONLY = {"tandem": {"strategy": "edge", "failover": False}}
USAGE = {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}


def _chunk(delta: dict[str, object] | None, finish: str | None = None) -> bytes:
    chunk: dict[str, object] = {"id": "chatcmpl-cut", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    chunk["choices"] = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    if delta is None:
        chunk["usage"] = USAGE
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


def _completion(finish: str) -> bytes:
    choice = {"index": 0, "message": {"role": "assistant", "content": "The answer is"}, "finish_reason": finish}
    answer = {"id": "chatcmpl-cut", "object": "chat.completion", "created": 0, "model": "m", "choices": [choice]}
    return orjson.dumps({**answer, "usage": USAGE})


@pytest.fixture()
def cut_short(make_gateway: Callable[..., GatewayServer], raw_upstream: Callable[..., RawUpstream]) -> GatewayServer:
    async def answer(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        finish = "length" if "cut" in str(body["messages"]) else "stop"
        if not body.get("stream"):
            return web.Response(body=_completion(finish), content_type="application/json")
        parts = [_chunk({"role": "assistant", "content": ""}), _chunk({"content": "The answer is"})]
        parts += [_chunk({}, finish), _chunk(None), b"data: [DONE]\n\n"]
        return await stream_bytes(request, parts)

    upstream = raw_upstream({("POST", "/v1/chat/completions"): answer})
    return make_gateway(edge_url=upstream.base_url, cloud_url=upstream.base_url, routes=EDGE_ONLY)


def test_a_plain_answer_cut_short_is_incomplete(cut_short: GatewayServer, edge: FakeUpstream) -> None:
    client = openai.OpenAI(base_url=cut_short.base_url, api_key="k", max_retries=0, timeout=20)
    response = client.responses.create(model="tandem", input="cut", max_output_tokens=3)
    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"
    assert response.output_text == "The answer is"
    assert response.usage is not None and response.usage.output_tokens == 3
    whole = client.responses.create(model="tandem", input="whole")
    assert whole.status == "completed" and whole.incomplete_details is None


def test_a_streamed_answer_cut_short_ends_with_response_incomplete(
    cut_short: GatewayServer, edge: FakeUpstream
) -> None:
    client = openai.OpenAI(base_url=cut_short.base_url, api_key="k", max_retries=0, timeout=20)
    events = list(client.responses.create(model="tandem", input="cut", max_output_tokens=3, stream=True))
    last = events[-1]
    assert last.type == "response.incomplete"
    assert last.response.status == "incomplete"
    assert last.response.incomplete_details is not None
    assert last.response.incomplete_details.reason == "max_output_tokens"
    assert last.response.output_text == "The answer is"
    assert last.response.usage is not None and last.response.usage.output_tokens == 3
    assert "response.completed" not in [event.type for event in events]
    assert [event.sequence_number for event in events] == list(range(len(events)))


def test_a_whole_streamed_answer_still_completes(cut_short: GatewayServer, client: httpx.Client) -> None:
    body = {"model": "tandem", "input": "whole", "stream": True}
    text = client.post(f"{cut_short.base_url}/responses", json=body).text
    assert "event: response.completed" in text and "response.incomplete" not in text

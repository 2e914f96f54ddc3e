"""A body that goes upstream as the client sent it is not serialised twice: the depth check's
serialisation (the model first) is forwarded with the model swapped. The same request as
re-serialising it; when more must change (fields dropped, stream options merged), the fields
are encoded again around the messages' bytes, which are not."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import httpx
import orjson
import pytest

from router.protocol.chat import chat_request, parse_chat_request
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

MakeGateway = Callable[..., GatewayServer]


def _both(body: bytes, model: str, drop: frozenset[str] = frozenset()) -> tuple[bytes, bytes]:
    """(the forwarded body, the body re-serialised from the parsed request)."""
    request = parse_chat_request(body)
    edited, _ = request.upstream_body(model, drop)
    request.serialised = None
    rebuilt, _ = request.upstream_body(model, drop)
    return edited, rebuilt


def test_random_requests_forward_as_their_re_serialisation() -> None:
    rng = random.Random(5)
    for _ in range(400):
        fields: dict[str, Any] = {
            "messages": [{"role": "user", "content": rng.choice(['"model"', "é\\", "x" * rng.randint(0, 9)])}],
            "model": rng.choice(["tandem", 'a"b', "é", "tandem/edge"]),
        }
        if rng.random() < 0.5:
            fields["stream"] = rng.random() < 0.7
        if rng.random() < 0.3:
            fields["metadata"] = {"model": "nested"}
        if rng.random() < 0.3:
            fields["stream_options"] = {"include_usage": True}
        order = list(fields)
        rng.shuffle(order)
        body = orjson.dumps({key: fields[key] for key in order})
        edited, rebuilt = _both(body, rng.choice(["up", "tandem", 'q"uote']))
        assert orjson.loads(edited) == orjson.loads(rebuilt), body
        assert edited.startswith(b'{"model":')


@pytest.mark.parametrize(
    ("body", "drop"),
    [
        (b'{"messages":[{"role":"user","content":"a"}],"model":"t","seed":1}', frozenset({"seed"})),
        (
            b'{"model":"t","messages":[{"role":"user","content":"a"}],"stream":true,"stream_options":{"x":1}}',
            frozenset(),
        ),
        (b'{"model":"t","messages":[{"role":"user","content":"a"}],"stream":true,"stream_options":null}', frozenset()),
    ],
)
def test_what_needs_more_than_the_model_keeps_the_messages_bytes(body: bytes, drop: frozenset[str]) -> None:
    edited, rebuilt = _both(body, "up", drop)
    assert orjson.loads(edited) == orjson.loads(rebuilt)
    assert edited.startswith(b'{"model":"up"')
    # The messages are the bytes `serialised` holds, not encoded again: written there with
    # spaces (as no encoder of ours would), they go upstream with them.
    request = parse_chat_request(body)
    assert request.serialised is not None and request.messages_span is not None
    start, end = request.messages_span
    assert orjson.loads(request.serialised[start:end]) == request.messages
    spaced = b"[ " + bytes(request.serialised[start + 1 : end - 1]) + b" ]"
    request.serialised = memoryview(bytes(request.serialised[:start]) + spaced + bytes(request.serialised[end:]))
    request.messages_span = (start, start + len(spaced))
    forwarded, dropped = request.upstream_body("up", drop)
    assert b'"messages":' + spaced + b"}" in forwarded
    assert orjson.loads(forwarded) == orjson.loads(rebuilt)
    assert dropped == sorted(drop & set(request.raw))


def test_dropped_fields_and_merged_options_forward_as_their_re_serialisation() -> None:
    rng = random.Random(11)
    for _ in range(400):
        fields: dict[str, Any] = {"messages": [{"role": "user", "content": "x" * rng.randint(0, 9)}], "model": "t"}
        for key, value in (("session_id", "s"), ("return_token_ids", True), ("seed", 3), ("user", "u")):
            if rng.random() < 0.5:
                fields[key] = value
        if rng.random() < 0.5:
            fields["stream"] = rng.random() < 0.7
            fields["stream_options"] = rng.choice([None, {}, {"include_usage": False}, {"x": 1}])
        order = list(fields)
        rng.shuffle(order)
        body = orjson.dumps({key: fields[key] for key in order})
        drop = frozenset(rng.sample(["session_id", "return_token_ids", "user", "absent"], rng.randint(0, 3)))
        request = parse_chat_request(body)
        edited, dropped = request.upstream_body("up", drop)
        request.serialised = None
        rebuilt, rebuilt_dropped = request.upstream_body("up", drop)
        assert orjson.loads(edited) == orjson.loads(rebuilt), body
        assert sorted(dropped) == sorted(rebuilt_dropped)


def test_the_edge_receives_the_request_serialised_once_with_its_model(
    make_gateway: MakeGateway, client: httpx.Client, edge: FakeUpstream
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "edge"}})
    body = b'{ "messages" : [ {"role": "user", "content": "hi"} ],\n "model": "tandem", "max_tokens": 5 }'
    reply = client.post(f"{server.url}/v1/chat/completions", content=body, headers={"content-type": "application/json"})
    assert reply.status_code == 200, reply.text
    expected = {"model": "edge-model", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 5}
    assert edge.received[0].raw == orjson.dumps(expected)
    body = body.replace(b'"max_tokens": 5', b'"max_tokens": 5, "stream": true')
    reply = client.post(f"{server.url}/v1/chat/completions", content=body, headers={"content-type": "application/json"})
    assert reply.status_code == 200 and b"[DONE]" in reply.content
    streamed = {"model": "edge-model", "stream_options": {"include_usage": True}, **expected, "stream": True}
    assert edge.received[1].raw == orjson.dumps(streamed)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("options", [None, {"include_usage": False, "other": 1}])
@pytest.mark.parametrize("drops", [frozenset(), frozenset({"temperature", "seed"}), frozenset({"messages"})])
def test_a_body_from_encoded_messages_equals_the_body_encoded_whole(
    stream: bool, options: dict[str, object] | None, drops: frozenset[str]
) -> None:
    raw: dict[str, object] = {
        "temperature": 0.3,
        "model": "tandem",
        "messages": [
            {"role": "user", "content": 'a \u00e9 "q"'},
            {"role": "assistant", "content": None, "tool_calls": []},
        ],
        "stream": stream,
        "seed": 7,
    }
    if options is not None:
        raw["stream_options"] = options
    request = chat_request(raw, 100)
    redacted = {**raw, "messages": [{"role": "user", "content": "[EMAIL_1]"}, raw["messages"][1]]}  # type: ignore[index]
    encoded = [orjson.dumps(message) for message in redacted["messages"]]  # type: ignore[attr-defined]
    joined, dropped = request.body_with_messages("up-model", drops, redacted, encoded)
    whole, dropped_whole = request.upstream_body("up-model", drops, redacted)
    assert orjson.loads(joined) == orjson.loads(whole) and sorted(dropped) == sorted(dropped_whole)
    assert joined.startswith(b'{"model":"up-model"') or "messages" in drops

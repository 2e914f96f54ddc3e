"""Every field of a request that reaches the cloud is scanned and redacted, or exempt for a
stated reason (issue 28): the lists of router/privacy/request_fields.py held to the protocol's
own lists of fields, and the real gateway on a redact route, where the fake cloud must see no
value put in any scanned field, in a message's name, in a tool's descriptions, an Anthropic
`system` block or a Responses `instructions`; and base64 wrapping a secret in a tool result
goes as one placeholder and comes back byte for byte."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import httpx
import orjson
import pytest

from router.privacy.request_fields import EXEMPT, SCANNED, field_strings
from router.protocol.fields import CHAT_FIELDS
from router.surfaces.messages import translate as anthropic
from router.surfaces.responses import request as responses
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

MakeGateway = Callable[..., GatewayServer]
EMAIL = "jane.doe@example.com"
PASSWORD = "Xv8!qLm2z9Kw"
REDACT = {"tandem": {"strategy": "cloud", "privacy": "redact"}}

# How the translated surfaces' fields reach the cloud: as a chat field (then scanned or exempt
# as that field) or not at all.
ANTHROPIC = {
    "stream": "stream",
    "max_tokens": "max_tokens",
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": None,
    "system": "messages",
    "tools": "tools",
    "tool_choice": "tool_choice",
    "stop_sequences": "stop",
    "metadata": None,
    "thinking": None,
    "service_tier": None,
    "output_config": "response_format",  # and its effort reasoning_effort
    "output_format": "response_format",
}
RESPONSES = {
    "stream": "stream",
    "input": "messages",
    "instructions": "messages",
    "max_output_tokens": "max_tokens",
    "temperature": "temperature",
    "top_p": "top_p",
    "tools": "tools",
    "tool_choice": "tool_choice",
    "reasoning": "reasoning_effort",
    "parallel_tool_calls": "parallel_tool_calls",
    "store": None,
    "metadata": None,
    "previous_response_id": None,  # refused with a 400
    "prompt_cache_key": "prompt_cache_key",
    "text": "response_format",  # its format's schema (structured output)
    # Checked, not sent on.
    "max_tool_calls": None,
    "top_logprobs": None,
    "background": None,
    "safety_identifier": None,
    "service_tier": None,
    "truncation": None,
    "user": None,
    "include": None,
}


def top_level(fields: dict[str, object]) -> set[str]:
    """The request's own fields in a surface's table (`tools[].name` is a member of `tools`)."""
    return {name.split(".")[0].removesuffix("[]") for name in fields}


def test_every_chat_field_is_scanned_or_exempt_with_a_reason() -> None:
    fields = set(CHAT_FIELDS) | {"model", "messages"}
    assert set(SCANNED) | set(EXEMPT) == fields
    assert not set(SCANNED) & set(EXEMPT)
    assert all(reason.strip() for reason in [*SCANNED.values(), *EXEMPT.values()])


def test_every_translated_field_becomes_a_listed_chat_field_or_nothing() -> None:
    assert set(ANTHROPIC) == top_level(anthropic.FIELDS)
    assert set(RESPONSES) == top_level(responses.FIELDS)
    for chat in [*ANTHROPIC.values(), *RESPONSES.values()]:
        assert chat is None or chat in SCANNED or chat in EXEMPT


def test_schema_names_are_kept_and_descriptions_scanned() -> None:
    tool = {
        "type": "function",
        "function": {
            "name": "connect",
            "description": f"Connects with password {PASSWORD}",
            "parameters": {
                "type": "object",
                "properties": {"host": {"type": "string", "description": f"ask {EMAIL}", "enum": ["db", EMAIL]}},
                "required": ["host"],
            },
        },
    }
    strings = field_strings({"tools": [tool], "user": EMAIL, "model": "tandem", "n": 1})
    assert "connect" not in strings and "object" not in strings and "host" not in strings
    assert f"Connects with password {PASSWORD}" in strings and f"ask {EMAIL}" in strings and EMAIL in strings


def _ask(client: httpx.Client, server: GatewayServer, path: str, body: dict[str, Any]) -> httpx.Response:
    return client.post(f"{server.url}{path}", json=body, headers={"X-Session-ID": "fields"})


def test_chat_fields_reach_the_cloud_redacted(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes=REDACT)
    tool = {
        "type": "function",
        "function": {
            "name": "connect",
            "description": f"Connect to the database; the password is {PASSWORD}",
            "parameters": {
                "type": "object",
                "properties": {"owner": {"type": "string", "description": f"defaults to {EMAIL}"}},
            },
        },
    }
    body = {
        "model": "tandem",
        "messages": [{"role": "user", "name": EMAIL, "content": "Open the database."}],
        "user": EMAIL,
        "metadata": {"owner": EMAIL},
        "tools": [tool],
        "safety_identifier": EMAIL,
    }
    cloud.push({"text": "Connected as [EMAIL_1]."})
    answer = _ask(client, server, "/v1/chat/completions", body)
    assert answer.status_code == 200
    sent = cloud.received[0].body
    text = orjson.dumps(sent).decode()
    assert EMAIL not in text and PASSWORD not in text
    assert sent["user"] == sent["metadata"]["owner"] == sent["messages"][0]["name"] == "[EMAIL_1]"
    assert sent["tools"][0]["function"]["name"] == "connect"
    assert sent["tools"][0]["function"]["parameters"]["properties"]["owner"]["description"] == "defaults to [EMAIL_1]"
    assert answer.json()["choices"][0]["message"]["content"] == f"Connected as {EMAIL}."


def test_anthropic_system_blocks_and_responses_instructions_reach_the_cloud_redacted(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes=REDACT)
    cloud.push({"text": "ok"}, {"text": "ok"})
    _ask(
        client,
        server,
        "/v1/messages",
        {
            "model": "tandem",
            "max_tokens": 64,
            "system": [{"type": "text", "text": f"The operator is {EMAIL}."}],
            "metadata": {"user_id": EMAIL},
            "tools": [{"name": "db", "description": f"password={PASSWORD}", "input_schema": {"type": "object"}}],
            "messages": [{"role": "user", "content": "hi"}],
        },
    )
    _ask(
        client,
        server,
        "/v1/responses",
        {
            "model": "tandem",
            "instructions": f"Log in with password: {PASSWORD}",
            "input": "hi",
            "metadata": {"u": EMAIL},
        },
    )
    assert len(cloud.received) == 2
    for received in cloud.received:
        text = orjson.dumps(received.body).decode()
        assert EMAIL not in text and PASSWORD not in text


def test_a_base64_secret_in_a_tool_result_goes_as_one_placeholder_and_comes_back_whole(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes=REDACT)
    encoded = base64.b64encode(f"DB_HOST=db.internal\nDB_PASSWORD={PASSWORD}\nDEBUG=0\n".encode()).decode()
    blob = "\n".join(encoded[i : i + 60] for i in range(0, len(encoded), 60))
    result = json.dumps({"path": ".env", "content": blob, "encoding": "base64"})
    messages = [
        {"role": "user", "content": "Restore the .env file."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_file", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": result},
    ]
    arguments = json.dumps({"path": ".env", "content": "[ENCODED_SECRET_1]"})
    cloud.push({"kind": "tool_call", "name": "write_file", "arguments": arguments})
    answer = _ask(client, server, "/v1/chat/completions", {"model": "tandem", "messages": messages})
    sent = orjson.dumps(cloud.received[0].body).decode()
    assert encoded[:40] not in sent and "[ENCODED_SECRET_1]" in sent
    call = answer.json()["choices"][0]["message"]["tool_calls"][0]
    # The placeholder stands for the blob as the agent read it in the tool result (JSON text, its
    # line breaks written `\n`): exactly those bytes come back.
    assert json.loads(call["function"]["arguments"])["content"] == json.dumps(blob)[1:-1]
    assert json.dumps(blob)[1:-1] in result


def test_allow_counts_a_value_sent_in_a_field_as_exposed(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "cloud", "privacy": "allow"}})
    body = {"model": "tandem", "messages": [{"role": "user", "content": "hi"}], "user": EMAIL}
    assert _ask(client, server, "/v1/chat/completions", body).status_code == 200
    assert cloud.received[0].body["user"] == EMAIL  # sent as it is
    detail = client.get(f"{server.url}/v1/trajectories/fields").json()
    assert detail["privacy"]["exposed"] == {"EMAIL": 1}


# Where the probes found values reaching the cloud as they were: a message's other fields, the
# legacy function call, metadata under a schema word or as a key, a client's own fields.
LEAKY_MESSAGES: list[tuple[str, list[dict[str, Any]]]] = [
    (
        "legacy function_call arguments",
        [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "f", "arguments": json.dumps({"a": EMAIL})},
            },
            {"role": "function", "name": "f", "content": "done"},
        ],
    ),
    (
        "reasoning_content",
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "ok", "reasoning_content": f"mail {EMAIL}"},
            {"role": "user", "content": "go"},
        ],
    ),
    (
        "refusal",
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "refusal": f"not {EMAIL}"},
            {"role": "user", "content": "go"},
        ],
    ),
    ("a message's own field", [{"role": "user", "content": "hi", "annotation": {"by": EMAIL}}]),
    ("a message's own field named by a value", [{"role": "user", "content": "hi", EMAIL: "x"}]),
]
LEAKY_FIELDS: list[tuple[str, dict[str, Any]]] = [
    ("metadata under a schema word", {"metadata": {"name": f"mail {EMAIL}", "type": EMAIL, "format": EMAIL}}),
    ("metadata key", {"metadata": {EMAIL: "x"}}),
    ("logit_bias key", {"logit_bias": {EMAIL: 1}}),
    ("a client's own field", {"extra_note": f"password={PASSWORD}"}),
    ("vLLM's chat_template_kwargs", {"chat_template_kwargs": {"user_name": EMAIL}}),
    ("LiteLLM's extra_body", {"extra_body": {"session": {"owner": EMAIL}}}),
]


def _leaky_cases() -> list[tuple[str, dict[str, Any]]]:
    cases = [(name, {"messages": messages}) for name, messages in LEAKY_MESSAGES]
    return cases + [
        (name, {"messages": [{"role": "user", "content": "hi"}], **fields}) for name, fields in LEAKY_FIELDS
    ]


def test_every_part_of_a_message_is_scanned_but_its_exempt_words() -> None:
    from router.privacy.redact import MESSAGE_EXEMPT, message_strings

    message = {
        "role": "assistant",
        "content": "c",
        "tool_calls": [{"id": "call_9", "type": "function", "function": {"name": "bash", "arguments": '{"x": "a"}'}}],
        "function_call": {"name": "legacy", "arguments": '{"y": "b"}'},
        "reasoning_content": "r",
        "refusal": "n",
        "tool_call_id": "call_8",
    }
    strings = message_strings(message)
    assert {"c", "a", "b", "r", "n", "reasoning_content", "refusal"} <= set(strings)
    assert not {"assistant", "call_9", "call_8", "bash", "legacy", "function"} & set(strings)
    assert set(MESSAGE_EXEMPT) == {
        "role",
        "tool_call_id",
        "tool_calls[].id",
        "tool_calls[].type",
        "tool_calls[].function.name",
        "function_call.name",
    } and all(reason.strip() for reason in MESSAGE_EXEMPT.values())


@pytest.mark.parametrize(("case", "fields"), _leaky_cases(), ids=[name for name, _ in _leaky_cases()])
def test_no_field_of_a_chat_request_reaches_the_cloud_with_its_value(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream, case: str, fields: dict[str, Any]
) -> None:
    server = make_gateway(routes={**REDACT, "blocked": {"strategy": "cloud", "privacy": "block"}})
    for stream in (False, True):
        answer = _ask(client, server, "/v1/chat/completions", {"model": "tandem", "stream": stream, **fields})
        assert answer.status_code == 200, answer.text
    assert len(cloud.received) == 2
    for received in cloud.received:
        text = orjson.dumps(received.body).decode()
        assert EMAIL not in text and PASSWORD not in text, text
    # `block` refuses the same request: the value is found there too.
    refused = _ask(client, server, "/v1/chat/completions", {"model": "blocked", **fields})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "privacy_blocked"
    assert len(cloud.received) == 2


def _sse(*deltas: dict[str, Any]) -> str:
    events = [
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": d}],
        }
        for d in deltas
    ]
    events.append(
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        }
    )
    return "".join(f"data: {json.dumps(event)}\n\n" for event in events) + "data: [DONE]\n\n"


def test_placeholders_in_the_answers_reasoning_and_refusal_come_back_as_values(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes=REDACT)
    body = {"model": "tandem", "messages": [{"role": "user", "content": f"Write to {EMAIL}."}]}
    message = {"role": "assistant", "content": "ok", "reasoning_content": "to [EMAIL_1]", "refusal": "not [EMAIL_1]"}
    answer = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }
    cloud.push({"kind": "raw", "body": json.dumps(answer), "content_type": "application/json"})
    got = _ask(client, server, "/v1/chat/completions", body).json()["choices"][0]["message"]
    assert got["reasoning_content"] == f"to {EMAIL}" and got["refusal"] == f"not {EMAIL}"
    # Streamed, the placeholder split between two events, and one left held at the end.
    stream = _sse(
        {"reasoning_content": "to [EMA"}, {"reasoning_content": "IL_1] and [EMAIL_"}, {"reasoning": "[EMAIL_1]"}
    )
    cloud.push({"kind": "raw", "body": stream, "content_type": "text/event-stream"})
    text = _ask(client, server, "/v1/chat/completions", {**body, "stream": True}).text
    deltas = [
        orjson.loads(line[6:])["choices"][0]["delta"]
        for line in text.splitlines()
        if line.startswith("data: {") and '"choices":[{' in line
    ]
    reasoning = "".join(d.get("reasoning_content", "") for d in deltas)
    assert reasoning == f"to {EMAIL} and [EMAIL_" and "".join(d.get("reasoning", "") for d in deltas) == EMAIL

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
}


def test_every_chat_field_is_scanned_or_exempt_with_a_reason() -> None:
    fields = set(CHAT_FIELDS) | {"model", "messages"}
    assert set(SCANNED) | set(EXEMPT) == fields
    assert not set(SCANNED) & set(EXEMPT)
    assert all(reason.strip() for reason in [*SCANNED.values(), *EXEMPT.values()])


def test_every_translated_field_becomes_a_listed_chat_field_or_nothing() -> None:
    assert set(ANTHROPIC) == set(anthropic.FIELDS)
    assert set(RESPONSES) == set(responses.FIELDS)
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

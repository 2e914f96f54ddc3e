"""The redact/restore path probed as a client could abuse it, through the real gateway: a message
edited after it was scanned still reaches the cloud redacted (on one replica and across two
sharing Redis), an answer puts back only the values the client's own request holds, and a
legacy `function_call`'s arguments get their originals back, whole and streamed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import orjson

from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

MakeGateway = Callable[..., GatewayServer]
ROUTES = {"tandem": {"strategy": "cloud", "privacy": "redact"}}
EMAIL, OTHER, CARD = "jane.doe@example.com", "bob@corp-mail.com", "4111 1111 1111 1111"


def ask(client: httpx.Client, server: GatewayServer, messages: list[dict[str, Any]], **body: Any) -> httpx.Response:
    response = client.post(
        f"{server.url}/v1/chat/completions",
        json={"model": "tandem", "messages": messages, **body},
        headers={"X-Session-ID": "probe"},
    )
    assert response.status_code == 200, response.text
    return response


def sent_text(cloud: FakeUpstream) -> str:
    return orjson.dumps(cloud.received[-1].body["messages"]).decode()


def test_an_edited_message_is_scanned_again(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes=ROUTES)
    ask(
        client,
        server,
        [
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": "hi"},
            {"role": "user", "content": "x"},
        ],
    )
    # The client edits its last message and resends as many messages (a chat UI's edit).
    edited = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]
    ask(client, server, [*edited, {"role": "user", "content": f"card {CARD}, mail {OTHER}"}])
    assert CARD not in sent_text(cloud) and OTHER not in sent_text(cloud)
    # A history rewritten to fewer messages than were scanned, then to the same count again.
    ask(client, server, [{"role": "user", "content": f"mail {EMAIL}"}])
    assert EMAIL not in sent_text(cloud)
    ask(client, server, [*edited, {"role": "user", "content": "my phone is +44 20 7946 0958"}])
    assert "7946 0958" not in sent_text(cloud)


def test_an_edit_is_scanned_on_another_replica(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream, redis_url: str
) -> None:
    a, b = make_gateway(routes=ROUTES, redis_url=redis_url), make_gateway(routes=ROUTES, redis_url=redis_url)
    first = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]
    ask(client, a, [*first, {"role": "user", "content": "nothing here"}])
    # Replica B never saw the trajectory: the count in the note alone would skip the edit.
    ask(client, b, [*first, {"role": "user", "content": f"mail {OTHER}"}])
    assert OTHER not in sent_text(cloud)
    # And A, whose own memory holds the older list, reads the same edit.
    ask(client, a, [*first, {"role": "user", "content": f"card {CARD}"}])
    assert CARD not in sent_text(cloud)


def test_an_answer_restores_only_values_the_request_holds(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes=ROUTES)
    ask(client, server, [{"role": "user", "content": f"mail {EMAIL}"}])
    # Later the client's request no longer holds EMAIL, but holds a card (so the step is
    # redacted) and a placeholder typed by hand: the answer's [EMAIL_1] stays as typed.
    cloud.push({"text": "echo [EMAIL_1] [CARD_1]"}, {"text": "echo [EMAIL_1] [CARD_1]", "chunks": 3})
    messages = [{"role": "system", "content": "summary"}, {"role": "user", "content": f"card {CARD}, say [EMAIL_1]"}]
    answer = ask(client, server, messages).json()["choices"][0]["message"]["content"]
    assert answer == f"echo [EMAIL_1] {CARD}"
    streamed = ask(client, server, messages, stream=True).text
    assert EMAIL not in streamed and "[EMAIL_1]" in streamed and "4111" in streamed
    # While the request holds the value, the answer gets it back.
    cloud.push({"text": "echo [EMAIL_1]"})
    answer = ask(client, server, [{"role": "user", "content": f"mail {EMAIL}"}])
    assert answer.json()["choices"][0]["message"]["content"] == f"echo {EMAIL}"


def _function_call_answer(arguments: str, stream: bool) -> dict[str, Any]:
    if not stream:
        message = {"role": "assistant", "content": None, "function_call": {"name": "mail", "arguments": arguments}}
        answer = {"id": "x", "object": "chat.completion", "created": 1, "model": "m", "usage": None}
        answer["choices"] = [{"index": 0, "message": message, "finish_reason": "function_call"}]
        return {"kind": "raw", "body": orjson.dumps(answer).decode(), "content_type": "application/json"}
    events = [{"function_call": {"name": "mail", "arguments": ""}}]
    # The placeholder split across two fragments.
    events += [{"function_call": {"arguments": part}} for part in (arguments[:12], arguments[12:])]
    body = b""
    for index, delta in enumerate([*events, {}]):
        finish = "function_call" if index == len(events) else None
        chunk = {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m"}
        chunk["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
        body += b"data: " + orjson.dumps(chunk) + b"\n\n"
    return {"kind": "raw", "body": (body + b"data: [DONE]\n\n").decode(), "content_type": "text/event-stream"}


def test_legacy_function_call_arguments_are_restored(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes=ROUTES)
    functions = [{"name": "mail", "parameters": {"type": "object", "properties": {"to": {"type": "string"}}}}]
    messages = [{"role": "user", "content": f"mail {EMAIL}"}]
    cloud.push(_function_call_answer('{"to": "[EMAIL_1]"}', stream=False))
    answer = ask(client, server, messages, functions=functions).json()
    assert orjson.loads(answer["choices"][0]["message"]["function_call"]["arguments"]) == {"to": EMAIL}
    cloud.push(_function_call_answer('{"to": "[EMAIL_1]"}', stream=True))
    text = ask(client, server, messages, functions=functions, stream=True).text
    arguments = ""
    for block in text.split("\n\n"):
        if block.startswith("data: {"):
            for choice in orjson.loads(block[6:]).get("choices") or ():
                arguments += ((choice.get("delta") or {}).get("function_call") or {}).get("arguments") or ""
    assert orjson.loads(arguments) == {"to": EMAIL}

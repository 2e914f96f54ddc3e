"""`/v1/responses` as the openai SDK reads it: the full event sequence a real OpenAI stream sends
(its stream helper and accumulated final response), structured output (`text.format` to
`response_format` and back), image and file parts translated or refused with a 400 naming them.
Real gateway, scripted upstream, the real openai SDK."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import orjson
import pydantic

from router.surfaces.responses.request import item_messages, usable
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

TOOLS: list[Any] = [
    {
        "type": "function",
        "name": "shell",
        "description": "run a command",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
    }
]

# The order of a real OpenAI stream's events for one text item.
TEXT_EVENTS = [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.delta",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
]


def sdk(server: GatewayServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)


def _chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    chunk = {"id": "chatcmpl-mixed", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    chunk["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
    return "data: " + orjson.dumps(chunk).decode() + "\n\n"


def _call(index: int, call_id: str, name: str, arguments: str) -> str:
    first = {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
    half = len(arguments) // 2
    return (
        _chunk({"tool_calls": [first]})
        + _chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[:half]}}]})
        + _chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[half:]}}]})
    )


# A stream with text, then two function calls: three output items.
MIXED = (
    _chunk({"role": "assistant", "content": ""})
    + _chunk({"content": "Let me "})
    + _chunk({"content": "look."})
    + _call(0, "call_a", "shell", '{"command": "ls"}')
    + _call(1, "call_b", "shell", '{"command": "pwd"}')
    + _chunk({}, "tool_calls")
    + "data: [DONE]\n\n"
)


def test_stream_helper_reads_a_text_answer(gateway: GatewayServer, edge: FakeUpstream) -> None:
    edge.push({"text": "one two three"})
    with sdk(gateway).responses.stream(model="tandem", input="go") as stream:
        events = list(stream)
        final = stream.get_final_response()
    kinds = [e.type for e in events]
    assert [k for n, k in enumerate(kinds) if n == 0 or k != kinds[n - 1]] == TEXT_EVENTS
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert final.output_text == "one two three" and final.status == "completed"
    assert final.usage is not None and final.usage.output_tokens > 0
    added = next(e for e in events if e.type == "response.content_part.added")
    delta = next(e for e in events if e.type == "response.output_text.delta")
    assert (added.item_id, added.output_index, added.content_index) == (delta.item_id, 0, 0)


def test_stream_helper_reads_text_then_function_calls(gateway: GatewayServer, edge: FakeUpstream) -> None:
    edge.push({"kind": "raw", "body": MIXED, "content_type": "text/event-stream"})
    with sdk(gateway).responses.stream(model="tandem", input="go", tools=TOOLS) as stream:
        events = list(stream)
        final = stream.get_final_response()
    assert [item.type for item in final.output] == ["message", "function_call", "function_call"]
    assert final.output_text == "Let me look."
    calls = [item for item in final.output if item.type == "function_call"]
    assert [(c.call_id, c.name, c.arguments) for c in calls] == [
        ("call_a", "shell", '{"command": "ls"}'),
        ("call_b", "shell", '{"command": "pwd"}'),
    ]
    done = [e for e in events if e.type == "response.function_call_arguments.done"]
    assert [(e.output_index, e.arguments) for e in done] == [(1, '{"command": "ls"}'), (2, '{"command": "pwd"}')]
    deltas = [e for e in events if e.type == "response.function_call_arguments.delta"]
    assert {e.item_id for e in deltas} == {c.id for c in calls}


def test_create_stream_events_are_the_sdk_types(gateway: GatewayServer, edge: FakeUpstream) -> None:
    edge.push({"text": "alpha beta"})
    events = list(sdk(gateway).responses.create(model="tandem", input="go", stream=True))
    parts = [e for e in events if e.type in ("response.content_part.added", "response.content_part.done")]
    assert [p.part.type for p in parts] == ["output_text", "output_text"]
    assert parts[1].part.text == "alpha beta"  # type: ignore[union-attr]
    assert events[-1].type == "response.completed" and events[-1].response.output_text == "alpha beta"


class Verdict(pydantic.BaseModel):
    ok: bool
    reason: str


def test_structured_output_reaches_the_upstream_and_parses(gateway: GatewayServer, edge: FakeUpstream) -> None:
    answer = '{"ok": true, "reason": "tests pass"}'
    edge.push({"text": answer}, {"text": answer})
    parsed = sdk(gateway).responses.parse(model="tandem", input="judge", text_format=Verdict)
    assert parsed.output_parsed == Verdict(ok=True, reason="tests pass")
    form = edge.received[0].body["response_format"]
    assert form["type"] == "json_schema" and form["json_schema"]["name"] == "Verdict"
    assert form["json_schema"]["schema"]["properties"].keys() == {"ok", "reason"}
    assert parsed.text is not None and parsed.text.format.type == "json_schema"  # echoed back
    with sdk(gateway).responses.stream(model="tandem", input="judge", text_format=Verdict) as stream:
        final = stream.get_final_response()
    assert final.output_parsed == Verdict(ok=True, reason="tests pass")
    assert edge.received[1].body["response_format"]["type"] == "json_schema"


def test_images_and_files_are_translated(gateway: GatewayServer, edge: FakeUpstream) -> None:
    content: Any = [
        {"type": "input_text", "text": "what is this?"},
        {"type": "input_image", "image_url": "https://example.com/a.png", "detail": "low"},
        {"type": "input_file", "filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBERi0="},
    ]
    sdk(gateway).responses.create(model="tandem", input=[{"role": "user", "content": content}])
    sent = edge.received[0].body["messages"][0]["content"]
    assert sent == [
        {"type": "text", "text": "what is this?"},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": "low"}},
        {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0=", "filename": "a.pdf"}},
    ]


def test_parts_without_a_chat_form_are_a_400_naming_them(
    gateway: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    cases = [
        ({"type": "input_file", "file_url": "https://example.com/a.pdf"}, "input[0].content[1]"),
        ({"type": "input_image", "file_id": "file_1"}, "input[0].content[1]"),
        ({"type": "input_audio", "data": "x"}, "input[0].content[1]"),
    ]
    for part, where in cases:
        content = [{"type": "input_text", "text": "hi"}, part]
        body = {"model": "tandem", "input": [{"role": "user", "content": content}]}
        answer = client.post(f"{gateway.base_url}/responses", json=body)
        assert answer.status_code == 400, part
        assert answer.json()["error"]["param"] == where and where in answer.json()["error"]["message"]
    bad_format = {"model": "tandem", "input": "hi", "text": {"format": {"type": "xml"}}}
    answer = client.post(f"{gateway.base_url}/responses", json=bad_format)
    assert answer.status_code == 400 and answer.json()["error"]["param"] == "text.format"
    assert edge.received == []


IMAGE = "data:image/png;base64,iVBORw0KGgo="
OUTPUTS: Any = [
    {"role": "user", "content": "look at both screenshots"},
    {"type": "function_call", "call_id": "c1", "name": "shot", "arguments": "{}"},
    {"type": "function_call", "call_id": "c2", "name": "shot", "arguments": "{}"},
    {"type": "function_call", "call_id": "c3", "name": "shot", "arguments": "{}"},
    {
        "type": "function_call_output",
        "call_id": "c1",
        "output": [{"type": "input_text", "text": "first"}, {"type": "input_image", "image_url": IMAGE}],
    },
    {"type": "function_call_output", "call_id": "c2", "output": "no screen"},
    {"type": "function_call_output", "call_id": "c3", "output": [{"type": "input_image", "image_url": IMAGE}]},
    {"role": "user", "content": "compare them"},
]


def test_images_in_function_call_outputs_follow_the_tool_messages(gateway: GatewayServer, edge: FakeUpstream) -> None:
    sdk(gateway).responses.create(model="tandem", input=OUTPUTS)
    sent = edge.received[0].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool", "tool", "user", "user"]
    assert [m["tool_call_id"] for m in sent[2:5]] == ["c1", "c2", "c3"]
    assert sent[2]["content"].startswith("first\n[1 attachment(s)") and sent[3]["content"] == "no screen"
    attachments = sent[5]["content"]
    assert [p["type"] for p in attachments] == ["text", "image_url", "text", "image_url"]
    assert "c1" in attachments[0]["text"] and "c3" in attachments[2]["text"]
    assert sent[6]["content"] == "compare them"


def test_a_user_message_in_the_words_of_the_attachments_note_is_the_users_own(
    gateway: GatewayServer, edge: FakeUpstream
) -> None:
    """The note's words written by a user (a 500 before: the output after it was placed as if the
    gateway had made that message, in a list that did not hold it)."""
    mimic = [
        {"type": "input_text", "text": "Attachments of the output of function call x:"},
        {"type": "input_image", "image_url": IMAGE},
    ]
    items: Any = [
        {"type": "message", "role": "user", "content": mimic},
        {"type": "function_call", "call_id": "c1", "name": "shot", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "r"},
    ]
    sdk(gateway).responses.create(model="tandem", input=items)
    sent = edge.received[0].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[0]["content"][0]["text"] == "Attachments of the output of function call x:"
    assert sent[2] == {"role": "tool", "tool_call_id": "c1", "content": "r"}
    edge.received.clear()
    # And right after it, with no call between (the shape the 500 needed).
    sdk(gateway).responses.create(model="tandem", input=[items[0], items[2]])
    sent = edge.received[0].body["messages"]
    assert [m["role"] for m in sent] == ["user", "tool"]


def test_a_split_body_translates_as_the_whole_one() -> None:
    # The prefix store reuses the messages of a history's first items where `usable` allows
    # a split: every allowed split must give the whole translation.
    whole = [m for made in item_messages(OUTPUTS, 0) for m in made]
    for cut in range(1, len(OUTPUTS)):
        head = [m for made in item_messages(OUTPUTS[:cut], 0) for m in made]
        if usable(head, len(head)):
            tail = [m for made in item_messages(OUTPUTS[cut:], cut) for m in made]
            assert head + tail == whole, cut

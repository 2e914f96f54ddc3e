"""Chat-completion chunks are built in one place (router/protocol/chat.py's `chunk_event`): the
gateway's prepared answers turned into a stream, its estimated usage chunk, and the simulator's
streams. In process, no sockets."""

from __future__ import annotations

from pathlib import Path

import orjson

from router.protocol.chat import chunk_event, completion_to_sse

ROOT = Path(__file__).resolve().parents[1]
CALL = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
ANSWER = {
    "id": "chatcmpl-1",
    "created": 5,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "hi",
                "reasoning_content": "think",
                "tool_calls": [CALL],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
}


def _events(stream: bytes) -> list[bytes]:
    return [event.removeprefix(b"data: ") for event in stream.split(b"\n\n") if event]


def test_a_chunk_event_is_one_sse_event_with_the_chunk_envelope() -> None:
    event = chunk_event("id1", "m", 7, [{"index": 0, "delta": {"content": "a"}, "finish_reason": None}])
    assert event.startswith(b"data: ") and event.endswith(b"\n\n") and event.count(b"\n\n") == 1
    assert list(orjson.loads(event[6:])) == ["id", "object", "created", "model", "choices"]
    usage = orjson.loads(chunk_event("id1", "m", 7, [], usage={"prompt_tokens": 1})[6:])
    assert (
        usage["object"] == "chat.completion.chunk" and usage["choices"] == [] and usage["usage"]["prompt_tokens"] == 1
    )


def test_a_prepared_answer_streams_as_chunks() -> None:
    events = _events(completion_to_sse(ANSWER))
    assert events[-1] == b"[DONE]"
    chunks = [orjson.loads(event) for event in events[:-1]]
    assert all(c["id"] == "chatcmpl-1" and c["model"] == "m" and c["created"] == 5 for c in chunks)
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    deltas = [c["choices"][0]["delta"] for c in chunks[:-1]]
    assert deltas == [
        {"role": "assistant", "content": ""},
        {"reasoning_content": "think"},
        {"content": "hi"},
        {"tool_calls": [{"index": 0, **CALL}]},
        {},
    ]
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"] == ANSWER["usage"]


def test_no_other_module_builds_a_chunk() -> None:
    """The gateway and the simulator name the chunk's `object` only in the builder (the tests'
    fake upstreams build theirs on purpose: an upstream independent of the gateway's code)."""
    builders = [
        path.relative_to(ROOT).as_posix()
        for package in ("router", "sim")
        for path in (ROOT / package).rglob("*.py")
        if '"chat.completion.chunk"' in path.read_text()
    ]
    assert builders == ["router/protocol/chat.py"]
    assert (ROOT / "router/protocol/chat.py").read_text().count('"chat.completion.chunk"') == 1

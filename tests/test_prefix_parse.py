"""A chat body parsed from the trajectory's last body equals the same body parsed whole.

`PrefixParser` (router/protocol/prefix.py) parses only what a body adds to one it saw before.
Every case here parses a sequence of bodies both ways and compares the whole request (fields,
messages, model, stream, size, what the upstream is sent) or, for a bad body, the error a
client gets; and checks that the prefix was in fact reused where it should be.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from router.errors import GatewayError
from router.protocol.chat import ChatRequest, parse_chat_request
from router.protocol.prefix import MIN_BYTES, PrefixParser
from router.protocol.prefix_bytes import MAX_HEAD_BYTES, MAX_TAIL_BYTES, array_close, array_start

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": 'Run a command; "messages" and "tools" are words here],"tools":[',
            "parameters": {"type": "object", "properties": {"tools": {"type": "string"}, "messages": {}}},
        },
    }
]
SYSTEM = "You are a careful software engineer. " * 40  # longer than KEY_BYTES: bodies share a bucket

Encode = Callable[[dict[str, Any]], bytes]
ENCODINGS: dict[str, Encode] = {
    "orjson": orjson.dumps,
    "json-default": lambda body: json.dumps(body).encode(),  # ", " and ": ", \u escapes
    "json-compact-utf8": lambda body: json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode(),
    "indented": lambda body: json.dumps(body, indent=2, ensure_ascii=False).encode() + b"\n",
}


def _text(rng: random.Random) -> str:
    pieces = [
        "plain words",
        'a "quoted" word',
        "back\\slash",
        "line\nbreak\ttab",
        "é ü 漢字 🙂",
        '],"tools":[{"x":1}]}',
        '{"role":"user","content":"fake"}',
        '"messages":[',
        "\u2028\u0000\u001f",
    ]
    return " ".join(rng.choice(pieces) for _ in range(rng.randint(1, 12))) * rng.randint(1, 20)


def _message(rng: random.Random, index: int) -> dict[str, Any]:
    kind = rng.choice(["user", "assistant", "tool", "parts"])
    if kind == "assistant":
        call = {
            "id": f"c{index}",
            "type": "function",
            "function": {"name": "bash", "arguments": orjson.dumps({"cmd": _text(rng)}).decode()},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    if kind == "tool":
        return {"role": "tool", "tool_call_id": f"c{index}", "content": _text(rng)}
    if kind == "parts":
        return {
            "role": "user",
            "content": [{"type": "text", "text": _text(rng)}],
            "metadata": {"messages": [1], "tools": {}},
        }
    return {"role": "user", "content": _text(rng)}


def _body(rng: random.Random, messages: list[dict[str, Any]], order: str, **extra: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {"model": "edge", "tools": TOOLS, "temperature": 0, **extra}
    if order == "messages-first":
        return {"messages": messages, **fields}
    if order == "messages-last":
        return {**fields, "messages": messages}
    return {"model": "edge", "messages": messages, "tools": TOOLS, "max_tokens": 256, **extra}


def _same(reused: ChatRequest, whole: ChatRequest) -> None:
    assert reused.raw == whole.raw
    assert list(reused.raw) == list(whole.raw)  # the client's field order, for what passes through
    assert reused.messages == whole.messages
    assert (reused.model, reused.stream, reused.size) == (whole.model, whole.stream, whole.size)
    # Byte for byte: a retry is known by these bytes (its fingerprint), and they go upstream.
    assert bytes(reused.encoded()) == bytes(whole.encoded())
    assert reused.upstream_body("m", frozenset())[1] == whole.upstream_body("m", frozenset())[1]
    assert orjson.loads(reused.upstream_body("m", frozenset())[0]) == orjson.loads(
        whole.upstream_body("m", frozenset())[0]
    )


def _error(parse: Callable[[], ChatRequest]) -> tuple[int, str, str | None, str | None] | None:
    try:
        parse()
    except GatewayError as exc:
        return exc.status, exc.message, exc.param, exc.code
    return None


def _both(parser: PrefixParser, body: bytes) -> None:
    expected = _error(lambda: parse_chat_request(body))
    got = _error(lambda: parser.parse(body))
    assert got == expected
    if expected is None:
        _same(parser.parse(body), parse_chat_request(body))


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
@pytest.mark.parametrize("order", ["messages-first", "messages-last", "between"])
def test_a_growing_history_parses_as_a_whole_parse_does_and_reuses_its_prefix(encoding: str, order: str) -> None:
    rng = random.Random(f"{encoding}-{order}")
    encode = ENCODINGS[encoding]
    parser = PrefixParser(64 * 1024 * 1024, 128, min_bytes=0)
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": _text(rng)}]
    steps = 40
    for index in range(steps):
        # A field before the messages is part of the prefix: changed, the body is parsed whole.
        stream = index % 3 == 0 if order != "messages-last" else False
        body = encode(_body(rng, messages, order, stream=stream))
        _same(parser.parse(body), parse_chat_request(body))
        messages = [*messages, *(_message(rng, index) for _ in range(rng.randint(1, 3)))]
    # Every body after the first extends the last: one whole parse, one to check the prefix
    # found in it (its first reuse), then only new bytes.
    assert parser.whole == 1
    assert parser.reused == steps - 1


def test_an_edited_history_is_parsed_from_the_last_message_end_it_shares() -> None:
    rng = random.Random(7)
    parser = PrefixParser(64 * 1024 * 1024, 128, min_bytes=0)
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "task"}]
    for index in range(12):
        messages.append(_message(rng, index))
        if index == 6:  # context compaction: an old tool output shortened
            messages[3] = {"role": "user", "content": "[output elided]"}
        body = orjson.dumps(_body(rng, messages, "between"))
        _same(parser.parse(body), parse_chat_request(body))
    # The edited body shares the ends of its first three messages (known since the first
    # reuse): it is parsed from there, not whole.
    assert parser.whole == 1
    assert parser.reused == 11


def test_the_same_body_sent_twice_and_a_shorter_one() -> None:
    parser = PrefixParser(64 * 1024 * 1024, 128, min_bytes=0)
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"},
    ]
    long = orjson.dumps({"model": "edge", "messages": messages})
    short = orjson.dumps({"model": "edge", "messages": messages[:2]})
    for body in (long, long, short, long):
        _same(parser.parse(body), parse_chat_request(body))
    # The repeat; the shorter one ends where a known message ends; the last extends it.
    assert (parser.reused, parser.whole) == (3, 1)


BAD_ENDINGS = [
    b"",  # truncated after the prefix
    b",",
    b",]}",  # an empty addition
    b",{}",
    b', {"role":"user","content":"x"}',  # no closing bracket
    b', {"role":"user","content":"x"}]',  # no closing brace
    b', {"role":"user","content":"x"}]}}',  # trailing garbage
    b', {"role":"user","content":"x"}] , "messages":[{"role":"user","content":"y"}]}',  # messages twice
    b", 5]}",  # a message that is not an object
    b', {"content":"x"}]}',  # no role
    b', {"role":"user","content":7}]}',
    b', {"role":"user","content":"x"}],"temperature":"hot"}',
    b', {"role":"user","content":"x"}],"model":5}',
    b', {"role":"user","content":"x"}],"model":""}',
    b', {"role":"user","content":"\xff\xfe"}]}',  # not UTF-8
    b', {"role":"user","content":"x"' + b', "deep":' + b"[" * 200 + b"]" * 200 + b"}]}",
    b', {"role":"user","content":"x", "n": ' + b"[" * 130 + b"]" * 130 + b"}]}",
    b'] , "temperature": 1}',
    b"]}",
    b'],"stream":"yes"}',
]


@pytest.mark.parametrize("ending", BAD_ENDINGS, ids=range(len(BAD_ENDINGS)))
def test_a_body_that_goes_wrong_after_a_known_prefix_gets_the_whole_parse_s_answer(ending: bytes) -> None:
    parser = PrefixParser(64 * 1024 * 1024, 128, min_bytes=0)
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "task"}]
    first = orjson.dumps({"model": "edge", "messages": messages})
    parser.parse(first)
    prefix = first[: first.rindex(b"]")]
    parser.parse(first)  # the first reuse checks the prefix
    _both(parser, prefix + ending)
    # And a good body after it is still parsed right.
    _both(parser, prefix + b',{"role":"user","content":"next"}]}')


def test_each_client_key_has_its_own_prefixes() -> None:
    parser = PrefixParser(64 * 1024 * 1024, 128, min_bytes=0)
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "task"}]
    body = orjson.dumps({"model": "edge", "messages": messages})
    parser.parse(body, "tenant-a")
    parser.parse(body, "tenant-b")
    assert parser.reused == 0
    parser.parse(body, "tenant-a")
    assert parser.reused == 1


def test_what_is_held_stays_within_its_budget() -> None:
    budget = 200_000
    parser = PrefixParser(budget, 128, min_bytes=0)
    rng = random.Random(3)
    for run in range(30):
        messages = [{"role": "system", "content": f"{run} " + SYSTEM}, {"role": "user", "content": _text(rng)}]
        for index in range(3):
            messages.append(_message(rng, index))
            body = orjson.dumps({"model": "edge", "messages": messages})
            _same(parser.parse(body), parse_chat_request(body))
            assert parser.held_bytes <= budget
    assert parser.held_bytes > 0
    off = PrefixParser(0, 128, min_bytes=0)
    off.parse(body)
    off.parse(body)
    assert (off.reused, off.held_bytes) == (0, 0)


def test_short_bodies_are_parsed_whole_and_long_ones_reused() -> None:
    parser = PrefixParser(64 * 1024 * 1024, 128)  # the gateway's default: MIN_BYTES
    short = orjson.dumps({"model": "edge", "messages": [{"role": "system", "content": SYSTEM}]})
    long = orjson.dumps({"model": "edge", "messages": [{"role": "system", "content": "x" * MIN_BYTES}]})
    assert len(short) < MIN_BYTES < len(long)
    for body in (short, short, short):
        _same(parser.parse(body), parse_chat_request(body))
    assert (parser.reused, parser.held_bytes) == (0, 0)
    for body in (long, long):
        _same(parser.parse(body), parse_chat_request(body))
    assert parser.reused == 1 and parser.held_bytes > 0


def test_a_body_built_to_make_the_split_search_parse_again_and_again_is_parsed_whole() -> None:
    # Every `"messages"` string before the real key is a place the search tries (and parses
    # the bytes before it); past MAX_HEAD_BYTES it stops trying: such a body is not kept.
    decoys = {"notes": ["messages"] * (MAX_HEAD_BYTES // 10 + 1), "model": "edge"}
    body = orjson.dumps({**decoys, "messages": [{"role": "system", "content": SYSTEM}]})
    assert body.index(b'"messages":') > MAX_HEAD_BYTES
    assert array_start(body, b'"messages"', True) is None
    parser = PrefixParser(64 * 1024 * 1024, 128, min_bytes=0)
    for _ in range(2):
        _same(parser.parse(body), parse_chat_request(body))
    assert (parser.reused, parser.held_bytes) == (0, 0)
    # The same decoys after the messages: the tail search gives up past MAX_TAIL_BYTES.
    tail = orjson.dumps({"model": "edge", "messages": [{"role": "user", "content": "x"}], "notes": ["tools"] * 200_000})
    assert len(tail) > MAX_TAIL_BYTES
    assert array_close(tail, 0, "notes") is None

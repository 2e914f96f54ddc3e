"""A body whose newest messages were rewritten is parsed from the last message end it shares,
and the result equals a whole parse.

Real clients rewrite their last message or two at every step: Claude Code, and LiteLLM's
Anthropic-style prompt caching on chat completions, move `cache_control` onto the newest
messages. `PrefixParser` knows where each message added since it learned a body ends, and
takes the longest end a new body shares. Each case compares every body both ways (all fields,
and the bytes sent upstream) or, for a bad body, the error a client gets.
"""

from __future__ import annotations

import json
import random
from typing import Any

import orjson
import pytest

from router.errors import GatewayError
from router.protocol.chat import parse_chat_request
from router.protocol.prefix import PrefixParser
from router.protocol.prefix_bytes import chain_ends, compact_ends, item_ends, shared_end
from router.protocol.prefix_encoded import Encoded
from router.protocol.prefix_store import LEARN_BACK
from tests.test_prefix_parse import BAD_ENDINGS, ENCODINGS, SYSTEM, _body, _error, _message, _same, _text

COMPACT = ("orjson", "json-compact-utf8")  # JS JSON.stringify and httpx >= 0.28 write so
MARK = {"type": "ephemeral"}


def _both(parser: PrefixParser, body: bytes) -> None:
    """Parse `body` once with the parser (so that its counts are the steps') and whole."""
    expected = _error(lambda: parse_chat_request(body))
    try:
        got = parser.parse(body)
    except GatewayError as exc:
        assert (exc.status, exc.message, exc.param, exc.code) == expected
        return
    assert expected is None
    _same(got, parse_chat_request(body))


def _marked(messages: list[dict[str, Any]], newest: int) -> list[dict[str, Any]]:
    """The messages with `cache_control` on the text parts of the newest `newest` ones only."""
    out = []
    for index, message in enumerate(messages):
        content = message.get("content")
        if isinstance(content, str) and message["role"] != "system":
            content = [{"type": "text", "text": content}]
        if isinstance(content, list):
            marked = index >= len(messages) - newest
            content = [
                {
                    **{k: v for k, v in part.items() if k != "cache_control"},
                    **({"cache_control": MARK} if marked else {}),
                }
                for part in content
            ]
            message = {**message, "content": content}
        out.append(message)
    return out


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
@pytest.mark.parametrize("newest", [1, 2])
def test_cache_control_moved_onto_the_newest_messages_reuses_the_rest(encoding: str, newest: int) -> None:
    rng = random.Random(f"{encoding}-{newest}")
    encode = ENCODINGS[encoding]
    parser = PrefixParser(64 * 1024 * 1024, 128, min_bytes=0)
    history: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "task"}]
    steps = 30
    for index in range(steps):
        body = encode(_body(rng, _marked(history, newest), "between"))
        _both(parser, body)
        call = {"id": f"c{index}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
        history += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{index}", "content": _text(rng)},
        ]
    if encoding in COMPACT:
        # The first body is parsed whole; its last messages' ends are found as their compact
        # encodings, so even the second body (whose marked messages changed) is reused.
        assert (parser.whole, parser.reused) == (1, steps - 1)
    else:
        # Only the last end of a body parsed whole is known: every body rewrites it.
        assert parser.reused == 0


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_random_edits_of_the_last_messages_parse_as_a_whole_parse_does(encoding: str) -> None:
    rng = random.Random(encoding)
    encode = ENCODINGS[encoding]
    parser = PrefixParser(64 * 1024 * 1024, 128, min_bytes=0)
    history: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "task"}]
    reusable = 0
    previous_len = 0
    for index in range(60):
        edited = rng.choice([0, 0, 1, 2, 3, 5])
        for at in range(max(2, len(history) - edited), len(history)):
            history[at] = _message(rng, 1000 + at)
        history += [_message(rng, index) for _ in range(rng.randint(0, 3))]
        if rng.random() < 0.1:
            history = history[: max(2, len(history) - rng.randint(1, 4))]  # a retry of an older step
        reusable += min(len(history), previous_len) > 2 and edited < previous_len - 2
        previous_len = len(history)
        body = encode(_body(rng, history, rng.choice(["between", "messages-last"]), stream=False))
        _both(parser, body)
    assert parser.reused > 0
    assert parser.reused + parser.whole >= 60


@pytest.mark.parametrize("ending", BAD_ENDINGS, ids=range(len(BAD_ENDINGS)))
def test_a_body_that_goes_wrong_after_an_earlier_message_end_gets_the_whole_parse_s_answer(ending: bytes) -> None:
    parser = PrefixParser(64 * 1024 * 1024, 128, min_bytes=0)
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"},
    ]
    body = orjson.dumps({"model": "edge", "messages": messages})
    parser.parse(body)
    cut = body[: body.rindex(b',{"role":"user","content":"b"}')]  # through the second message
    _both(parser, cut + ending)
    # A bad body leaves what was known: the next good one is still parsed from it.
    reused = parser.reused
    _both(parser, cut + b',{"role":"user","content":"next"}]}')
    assert parser.reused == reused + 1


def test_the_longest_shared_end_is_taken() -> None:
    parser = PrefixParser(64 * 1024 * 1024, 128, min_bytes=0)
    messages = [{"role": "system", "content": SYSTEM}] + [{"role": "user", "content": f"m{n}"} for n in range(20)]
    parser.parse(orjson.dumps({"model": "edge", "messages": messages}))
    # A body parsed whole knows its last LEARN_BACK ends; the bodies parsed from it know theirs.
    for kept in (18, 15, 12):
        edited = [*messages[:kept], {"role": "user", "content": "rewritten"}]
        body = orjson.dumps({"model": "edge", "messages": edited})
        _both(parser, body)
        entry = next(iter(parser.store._buckets.values()))[0]
        assert entry.counts[-1] == kept + 1 and entry.items is not None
    assert parser.whole == 1


def test_item_ends_skip_brackets_inside_strings() -> None:
    items = [{"a": '}]{[\\"', "b": [1, {"c": "]"}]}, {"d": "\\"}, []]
    body = b"[ " + b" ,\n".join(orjson.dumps(item) for item in items) + b" ]"
    ends = item_ends(body, 1, len(body) - 1)
    assert [orjson.loads(b"[" + body[1:end] + b"]") for end in ends] == [
        items[:1],
        items[:2],
        items[:3],
    ]


def test_chain_ends_stop_where_the_client_did_not_write_compactly() -> None:
    items = [{"role": "user", "content": f"m{n}"} for n in range(12)]
    compact = orjson.dumps({"messages": items})
    end = len(compact) - 2
    ends = chain_ends(compact, end, items, 12, LEARN_BACK)
    assert len(ends) == LEARN_BACK
    assert all(orjson.loads(compact[12:at] + b"]") == items[: len(items) - len(ends) + n] for n, at in enumerate(ends))
    spaced = compact.replace(b'"m8"}', b'"m8"} ')  # one message followed by a space
    assert len(chain_ends(spaced, len(spaced) - 2, items, 12, LEARN_BACK)) == 2
    # A first key that may follow a closing quote: the compact encoding could start inside a
    # string of a longer encoding, so the chain does not trust it.
    odd = [*items[:-1], {":": 1, "role": "user", "content": "x"}]
    odd_body = orjson.dumps({"messages": odd})
    assert chain_ends(odd_body, len(odd_body) - 2, odd, 12, LEARN_BACK) == []


def test_shared_end_finds_the_last_common_boundary() -> None:
    prefix = b"0123456789" * 10
    ends = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
    assert shared_end(prefix + b"x", prefix, ends) == 9
    for diverge in (0, 5, 10, 35, 79, 80, 99):
        body = prefix[:diverge] + b"!" + prefix[diverge + 1 :]
        expected = max((i for i, end in enumerate(ends) if end <= diverge), default=-1)
        assert shared_end(body, prefix, ends) == expected, diverge


def test_compact_ends_agree_with_tokenising_and_refuse_other_writing() -> None:
    items = [{"a": '}]{[\\"', "b": [1, {"c": "]"}]}, {"d": "\\"}, {"e": "é 🙂 \u2028"}]
    compact = b" ," + b",".join(orjson.dumps(item) for item in items) + b"]}"
    assert compact_ends(compact, 0, items) == item_ends(compact, 0, len(compact) - 2)
    spaced = b"," + b", ".join(orjson.dumps(item) for item in items) + b"]}"
    assert compact_ends(spaced, 0, items) is None
    assert compact_ends(b"," + json.dumps(items[0]).encode() + b"]}", 0, items[:1]) is None


def test_the_encoding_kept_in_chunks_reads_as_the_bytes_it_stands_for() -> None:
    rng = random.Random(1)
    for _ in range(200):
        encoded, whole = Encoded(), b""
        for _ in range(rng.randint(0, 150)):  # past MAX_CHUNKS: the chunks are joined
            chunk = bytes(rng.choice(b"ab{}") for _ in range(rng.randint(0, 5))) + b","
            encoded, whole = encoded.plus(chunk), whole + chunk
            if rng.random() < 0.2 and whole:
                cut = rng.randint(0, len(whole))
                encoded, whole = encoded.upto(cut), whole[:cut]
        assert encoded.size == len(whole)
        for skip in {0, rng.randint(0, len(whole)), len(whole)}:
            assert b"".join(encoded.array(skip)) == (whole[skip:-1] if skip < len(whole) else b"")

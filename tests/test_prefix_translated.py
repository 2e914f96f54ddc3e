"""A `/v1/messages` body parsed from the last one equals the whole path's translation.

`TranslatedParser` (router/protocol/prefix_translated.py) parses, checks, translates and
encodes only the turns a body adds to one seen before, reusing the chat messages made of the
old turns. Every body of random growing Anthropic histories (Claude Code's shapes: tool_use and
tool_result blocks, thinking, a system turn inside the messages, `cache_control` moved onto the
newest turns at every step) is parsed both ways and compared: the chat body, every field of the
chat request and its bytes; a bad body gets the whole path's error.
"""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from router.protocol.prefix import PrefixParser
from router.surfaces.messages.handler import SPEC
from tests.test_prefix_parse import ENCODINGS, SYSTEM, _text
from tests.translated_check import check

MARK = {"type": "ephemeral"}
TOOLS = [{"name": "Bash", "description": "Run a command", "input_schema": {"type": "object", "properties": {}}}]


def _check(parser: PrefixParser, body: bytes) -> None:
    check(parser, SPEC, body)


def _turns(rng: random.Random, step: int) -> list[dict[str, Any]]:
    call = f"toolu_{step}"
    assistant: list[dict[str, Any]] = [{"type": "thinking", "thinking": "hmm", "signature": "s"}]
    if rng.random() < 0.5:
        assistant.append({"type": "text", "text": _text(rng)})
    assistant.append({"type": "tool_use", "id": call, "name": "Bash", "input": {"command": _text(rng)}})
    user: list[dict[str, Any]] = [{"type": "tool_result", "tool_use_id": call, "content": _text(rng)}]
    if rng.random() < 0.3:
        user.append({"type": "text", "text": _text(rng)})
    turns = [{"role": "assistant", "content": assistant}, {"role": "user", "content": user}]
    if rng.random() < 0.1:
        turns.append({"role": "system", "content": "a reminder"})
    if rng.random() < 0.1:
        turns.append({"role": "user", "content": _text(rng)})
    return turns


def _marked(turns: list[dict[str, Any]], newest: int) -> list[dict[str, Any]]:
    """`cache_control` on the last block of the newest `newest` turns only (as Claude Code)."""
    out = []
    for index, turn in enumerate(turns):
        content = turn["content"]
        if isinstance(content, list):
            blocks = [{k: v for k, v in block.items() if k != "cache_control"} for block in content]
            if index >= len(turns) - newest:
                blocks[-1] = {**blocks[-1], "cache_control": MARK}
            turn = {**turn, "content": blocks}
        out.append(turn)
    return out


def _body(turns: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "model": "edge",
        "messages": turns,
        "system": [{"type": "text", "text": SYSTEM}, {"type": "text", "text": "env", "cache_control": MARK}],
        "tools": TOOLS,
        "metadata": {"user_id": "u"},
        "max_tokens": 512,
        "stream": True,
        **extra,
    }


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
@pytest.mark.parametrize("newest", [0, 1, 2])
def test_a_growing_claude_code_history_translates_as_the_whole_path_does(encoding: str, newest: int) -> None:
    rng = random.Random(f"{encoding}-{newest}")
    encode = ENCODINGS[encoding]
    parser = PrefixParser(64 * 1024 * 1024, 128, min_bytes=0)
    # Longer than KEY_BYTES: the bodies share their first bytes (their bucket), as real ones do.
    turns: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": SYSTEM}]}]
    steps = 30
    for step in range(steps):
        _check(parser, encode(_body(_marked(turns, newest))))
        turns += _turns(rng, step)
    translated = parser.translated(SPEC)
    if newest == 0:
        assert (translated.whole, translated.reused) == (1, steps - 1)
    elif encoding in ("orjson", "json-compact-utf8"):
        # The second body rewrote the first's only turn; every later one shares all but its newest.
        assert (translated.whole, translated.reused) == (2, steps - 2)
    else:
        # A body parsed whole knows only its last end; once a body is reused (a step that
        # ended on a turn without blocks to mark), the ends of its new turns are known.
        assert translated.whole >= 2
    assert parser.reused == 0  # the chat parser's counts are its own


@pytest.mark.parametrize("encoding", ["orjson", "json-default"])
def test_random_edits_and_retries_translate_as_the_whole_path_does(encoding: str) -> None:
    rng = random.Random(encoding)
    encode = ENCODINGS[encoding]
    parser = PrefixParser(64 * 1024 * 1024, 128, min_bytes=0)
    turns: list[dict[str, Any]] = [{"role": "user", "content": SYSTEM}]
    for step in range(50):
        turns += _turns(rng, step)
        if rng.random() < 0.3:
            turns[-1] = {"role": "user", "content": [{"type": "text", "text": _text(rng)}]}
        if rng.random() < 0.1:
            turns = turns[: max(1, len(turns) - rng.randint(1, 5))]
        extra = rng.choice([{}, {"temperature": 0.5}, {"system": "short"}, {"stop_sequences": ["x"]}])
        _check(parser, encode(_body(_marked(turns, rng.randint(0, 2)), **extra)))
    assert parser.translated(SPEC).reused > 0


BAD_ENDINGS = [
    b"",
    b",]}",
    b',{"role":"user","content":"x"}]',
    b',{"role":"robot","content":"x"}],"max_tokens":5}',
    b',{"role":"user","content":7}],"max_tokens":5}',
    b',{"role":"user","content":[]}],"max_tokens":5}',
    b',{"role":"user","content":"x"}]}',  # no max_tokens
    b',{"role":"user","content":"x"}],"max_tokens":"many"}',
    b',{"role":"user","content":"x"}],"max_tokens":5,"model":""}',
    b',{"role":"user","content":"x"}],"max_tokens":5,"messages":[]}',
    b',{"role":"user","content":"x","deep":' + b"[" * 200 + b"]" * 200 + b'}],"max_tokens":5}',
    b',{"role":"user","content":"x"}],"max_tokens":5,"tools":' + b"[" * 130 + b"]" * 130 + b"}",
    b',{"role":"user","content":"\xff"}],"max_tokens":5}',
    b',{"role":"user","content":"x"}],"max_tokens":5,"stream":"yes"}',
]


@pytest.mark.parametrize("ending", BAD_ENDINGS, ids=range(len(BAD_ENDINGS)))
def test_a_bad_body_after_known_turns_gets_the_whole_path_s_error(ending: bytes) -> None:
    parser = PrefixParser(64 * 1024 * 1024, 128, min_bytes=0)
    turns = [{"role": "user", "content": SYSTEM}, {"role": "assistant", "content": "ok"}]
    first = orjson.dumps({"model": "edge", "messages": turns, "max_tokens": 5})
    _check(parser, first)
    _check(parser, first)  # its first reuse proves where its turns end
    _check(parser, first[: first.rindex(b"]")] + ending)
    _check(parser, first[: first.rindex(b"]")] + b',{"role":"user","content":"next"}],"max_tokens":5}')
    assert parser.translated(SPEC).reused >= 2

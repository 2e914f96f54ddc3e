"""A `/v1/responses` body parsed from the last one equals the whole path's translation.

Codex sends its whole conversation in `input` at every step (`store: false`): instructions, two
developer messages, the user's request, then reasoning, function calls (joining the assistant
message before them) and their outputs. `TranslatedParser` translates only the items a body
adds, splitting only where no later item can change the chat messages made before; every body
of random growing Codex histories is parsed both ways and compared (the chat body, every field
of the chat request and its bytes), and a bad body gets the whole path's error.
"""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from router.protocol.prefix import PrefixParser
from router.surfaces.responses.handler import SPEC
from router.surfaces.responses.request import usable
from tests.test_prefix_parse import ENCODINGS, SYSTEM, _text
from tests.translated_check import check

TOOLS = [
    {"type": "function", "name": "shell", "description": "run", "parameters": {"type": "object"}, "strict": False},
    {"type": "web_search"},
]


def _check(parser: PrefixParser, body: bytes) -> None:
    check(parser, SPEC, body)


def _items(rng: random.Random, step: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [{"type": "reasoning", "summary": [], "encrypted_content": "x"}]
    if rng.random() < 0.4:
        text = [{"type": "output_text", "text": _text(rng)}]
        items.append({"type": "message", "role": "assistant", "content": text})
    for call in range(rng.choice([1, 1, 2])):
        call_id = f"call_{step}_{call}"
        arguments = orjson.dumps({"command": ["bash", "-lc", _text(rng)]}).decode()
        items.append({"type": "function_call", "name": "shell", "arguments": arguments, "call_id": call_id})
        items.append({"type": "function_call_output", "call_id": call_id, "output": _text(rng)})
    if rng.random() < 0.15:
        items.append({"type": "message", "role": "user", "content": [{"type": "input_text", "text": _text(rng)}]})
    if rng.random() < 0.1:
        items.append({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]})
    return items


def _start() -> list[dict[str, Any]]:
    developer = [{"type": "input_text", "text": "<permissions instructions>"}]
    return [
        {"type": "message", "role": "developer", "content": developer},
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": SYSTEM}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix the test."}]},
    ]


def _body(items: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "model": "edge",
        "instructions": "You are Codex.",
        "input": items,
        "tools": TOOLS,
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "reasoning": {"effort": "medium"},
        "store": False,
        "stream": True,
        "prompt_cache_key": "s1",
        **extra,
    }


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_a_growing_codex_history_translates_as_the_whole_path_does(encoding: str) -> None:
    rng = random.Random(encoding)
    encode = ENCODINGS[encoding]
    parser = PrefixParser(64 * 1024 * 1024, 128, min_bytes=0)
    items = _start()
    steps = 30
    for step in range(steps):
        _check(parser, encode(_body(items)))
        items += _items(rng, step)
    translated = parser.translated(SPEC)
    assert (translated.whole, translated.reused) == (1, steps - 1)


@pytest.mark.parametrize("encoding", ["orjson", "json-default"])
def test_edits_retries_and_changed_instructions_translate_as_the_whole_path_does(encoding: str) -> None:
    rng = random.Random(encoding)
    encode = ENCODINGS[encoding]
    parser = PrefixParser(64 * 1024 * 1024, 128, min_bytes=0)
    items = _start()
    for step in range(50):
        items += _items(rng, step)
        if rng.random() < 0.2:  # a function call after the last end: it joins an assistant message
            items.append({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "x"}]})
        if rng.random() < 0.1:
            items = items[: max(3, len(items) - rng.randint(1, 6))]
        extra = rng.choice([{}, {"instructions": _text(rng)}, {"instructions": None}, {"max_output_tokens": 9}])
        _check(parser, encode(_body(items, **extra)))
    assert parser.translated(SPEC).reused > 10


def test_a_body_is_not_split_where_a_function_call_would_join_the_message_before() -> None:
    system = {"role": "system", "content": "s"}
    user = {"role": "user", "content": "u"}
    assistant = {"role": "assistant", "content": "a"}
    tool = {"role": "tool", "tool_call_id": "c", "content": "t"}
    messages = [system, system, user, assistant, tool]
    assert [usable(messages, count) for count in range(6)] == [False, False, False, True, False, True]
    parser = PrefixParser(64 * 1024 * 1024, 128, min_bytes=0)
    items = [*_start(), {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "x"}]}]
    _check(parser, orjson.dumps(_body(items)))
    call = {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"}
    _check(parser, orjson.dumps(_body([*items, call])))  # joins the assistant message: split before it
    assert parser.translated(SPEC).reused == 1


BAD_ENDINGS = [
    b"",
    b",]}",
    b',{"type":"message","role":"robot","content":"x"}]}',
    b",5]}",
    b',{"type":"message","role":"user","content":"x"}],"previous_response_id":"r1"}',
    b',{"type":"message","role":"user","content":"x"}],"model":5}',
    b',{"type":"message","role":"user","content":"x"}],"stream":"yes"}',
    b',{"type":"message","role":"user","content":"x"}],"input":"again"}',
    b',{"type":"function_call_output","call_id":"c","output":' + b"[" * 200 + b"]" * 200 + b"}]}",
    b',{"type":"message","role":"user","content":"\xff"}]}',
]


@pytest.mark.parametrize("ending", BAD_ENDINGS, ids=range(len(BAD_ENDINGS)))
def test_a_bad_body_after_known_items_gets_the_whole_path_s_error(ending: bytes) -> None:
    parser = PrefixParser(64 * 1024 * 1024, 128, min_bytes=0)
    first = orjson.dumps({"model": "edge", "input": _start()})
    _check(parser, first)
    _check(parser, first)
    _check(parser, first[: first.rindex(b"]")] + ending)
    _check(parser, first[: first.rindex(b"]")] + b',{"type":"message","role":"user","content":"next"}]}')
    assert parser.translated(SPEC).reused >= 2

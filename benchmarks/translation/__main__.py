"""What the translated surfaces (/v1/messages, /v1/responses) add over the chat path for one
step with a 50 KB history: the request translated to a chat body (and serialised, as the
pipeline receives bytes), the answer translated back, plain and streamed (60 chunks).

    python -m benchmarks.translation [--history-kb 50] [--runs 2000]

Everything else a translated step goes through is the chat path itself, so this is the whole
difference. Prints p50 and p99 in milliseconds as one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson

from router.surfaces.messages import answer as messages_answer
from router.surfaces.messages import translate as messages
from router.surfaces.responses import answer as responses
from router.surfaces.responses import request as responses_request


def _history(kb: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The same agent history (tool calls and their outputs) in the Messages and Responses shapes."""
    anthropic: list[dict[str, Any]] = [{"role": "user", "content": "fix the failing test"}]
    openai: list[dict[str, Any]] = [{"role": "user", "content": "fix the failing test"}]
    output = "x" * 900 + "\n"
    step = 0
    while len(orjson.dumps(anthropic)) < kb * 1024:
        call = f"call_{step}"
        anthropic += [
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Running the tests."},
                    {"type": "tool_use", "id": call, "name": "bash", "input": {"command": "pytest -q"}},
                ],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": output}]},
        ]
        openai += [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Running the tests."}],
            },
            {"type": "function_call", "call_id": call, "name": "bash", "arguments": '{"command":"pytest -q"}'},
            {"type": "function_call_output", "call_id": call, "output": output},
        ]
        step += 1
    return anthropic, openai


ANSWER = {
    "id": "chatcmpl-1",
    "model": "m",
    "usage": {"prompt_tokens": 12000, "completion_tokens": 40},
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": "Running the tests again.",
                "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "bash", "arguments": '{"command":"ls"}'}}
                ],
            },
        }
    ],
}


def _stream() -> list[bytes]:
    chunk = {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"content": " word"}, "finish_reason": None}]}
    events = [b"data: " + orjson.dumps(chunk) + b"\n\n" for _ in range(60)]
    usage = {"id": "c", "model": "m", "choices": [], "usage": ANSWER["usage"]}
    return [*events, b"data: " + orjson.dumps(usage) + b"\n\n", b"data: [DONE]\n\n"]


async def _drain(translate: Callable[[AsyncIterator[bytes]], AsyncIterator[bytes]], chunks: list[bytes]) -> None:
    async def source() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    async for _ in translate(source()):
        pass


def _time(work: Callable[[], Any], runs: int) -> dict[str, float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return {"p50_ms": round(statistics.median(samples), 4), "p99_ms": round(samples[int(runs * 0.99) - 1], 4)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--history-kb", type=int, default=50)
    parser.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args()
    anthropic, openai = _history(args.history_kb)
    msg_body = orjson.dumps(
        {"model": "tandem", "max_tokens": 4096, "system": "You are an agent.", "messages": anthropic}
    )
    resp_body = orjson.dumps({"model": "tandem", "instructions": "You are an agent.", "input": openai})
    answer = orjson.dumps(ANSWER)
    chunks = _stream()
    loop = asyncio.new_event_loop()
    report = {
        "history_kb": round(len(msg_body) / 1024, 1),
        "messages_plain": _time(
            lambda: (
                orjson.dumps(messages.to_chat(orjson.loads(msg_body))),
                orjson.dumps(messages_answer.from_chat(orjson.loads(answer))),
            ),
            args.runs,
        ),
        "responses_plain": _time(
            lambda: (
                orjson.dumps(responses_request.to_chat(orjson.loads(resp_body))),
                orjson.dumps(responses.from_chat(orjson.loads(answer))),
            ),
            args.runs,
        ),
        "messages_stream_60_chunks": _time(
            lambda: loop.run_until_complete(_drain(messages_answer.StreamTranslator(100).translate, chunks)), args.runs
        ),
        "responses_stream_60_chunks": _time(
            lambda: loop.run_until_complete(_drain(responses.StreamTranslator().translate, chunks)), args.runs
        ),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

"""A fake OpenAI-compatible upstream cheap enough not to be what a benchmark measures.

A raw asyncio protocol on uvloop, no web framework: it shares a core with the load generator,
so every microsecond it spends is taken from the load. It answers any model name (the gateway's
upstream model and whatever LiteLLM sends) after a fixed delay (or one drawn uniformly between
`--delay-ms` and `--delay-max-ms`, a scripted model's spread); a streamed answer is a role
chunk, `chunks` content chunks `chunk_interval` apart, a finish chunk, a usage chunk when the
request asks for one, and `data: [DONE]`.

Run as `python -m benchmarks.overhead.fakeupstream --port P --delay-ms D [--delay-max-ms M]`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import signal
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import orjson

PROMPT_TOKENS = 400
COMPLETION_TEXT = "The quick brown fox jumps over the lazy dog."
MAX_HEAD_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class Behaviour:
    delay_s: float  # before the answer (non-streamed) or the first chunk (streamed)
    chunks: int  # content chunks of a streamed answer
    chunk_interval_s: float  # between streamed chunks; 0 sends the rest in one write
    delay_max_s: float = 0.0  # above delay_s: each answer's delay drawn uniformly between the two

    def delay(self) -> float:
        if self.delay_max_s <= self.delay_s:
            return self.delay_s
        return random.uniform(self.delay_s, self.delay_max_s)


def _chunk(model: str, delta: dict[str, object], finish: str | None) -> bytes:
    event = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }
    return b"data: " + orjson.dumps(event) + b"\n\n"


def _usage(completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": PROMPT_TOKENS,
        "completion_tokens": completion_tokens,
        "total_tokens": PROMPT_TOKENS + completion_tokens,
    }


def _http_chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


class _Answers:
    """Answers pre-serialised per model name: the fake must not spend time building JSON."""

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self._plain: dict[str, bytes] = {}
        self._stream: dict[tuple[str, bool], list[bytes]] = {}

    def plain(self, model: str) -> bytes:
        answer = self._plain.get(model)
        if answer is None:
            body = orjson.dumps(
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "created": 1700000000,
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": COMPLETION_TEXT},
                            "logprobs": None,
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": _usage(self.behaviour.chunks),
                }
            )
            answer = self._plain[model] = (
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
            )
        return answer

    def stream(self, model: str, usage: bool) -> list[bytes]:
        """The HTTP-framed pieces of a streamed answer, the header on the first."""
        pieces = self._stream.get((model, usage))
        if pieces is None:
            events = [_chunk(model, {"role": "assistant", "content": ""}, None)]
            words = (COMPLETION_TEXT + " ") * (1 + self.behaviour.chunks // 9)
            tokens = words.split()[: self.behaviour.chunks]
            events += [_chunk(model, {"content": token + " "}, None) for token in tokens]
            events.append(_chunk(model, {}, "stop"))
            last = b""
            if usage:
                usage_event = {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion.chunk",
                    "created": 1700000000,
                    "model": model,
                    "choices": [],
                    "usage": _usage(self.behaviour.chunks),
                }
                last = b"data: " + orjson.dumps(usage_event) + b"\n\n"
            # The finish, usage and [DONE] events go out together, as servers send them.
            events[-1] = events[-1] + last + b"data: [DONE]\n\n"
            pieces = [_http_chunk(e) for e in events]
            pieces[0] = (
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
                b"transfer-encoding: chunked\r\n\r\n" + pieces[0]
            )
            pieces[-1] += b"0\r\n\r\n"
            self._stream[(model, usage)] = pieces
        return pieces


NOT_FOUND = b"HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"
MODELS = b'{"object":"list","data":[{"id":"fake-model","object":"model","owned_by":"bench"}]}'
MODELS_ANSWER = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (
    len(MODELS),
    MODELS,
)


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 keep-alive connection; requests carry Content-Length (every client here)."""

    def __init__(self, answers: _Answers) -> None:
        self._answers = answers
        self._buffer = bytearray()
        self._transport: asyncio.Transport | None = None
        self._loop = asyncio.get_running_loop()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports do not subclass asyncio.Transport; they have its methods.
        self._transport = cast(asyncio.Transport, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self._transport = None

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        while True:
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buffer) > MAX_HEAD_BYTES:
                    self._close()
                return
            head = bytes(self._buffer[:end]).lower()
            length = 0
            start = head.find(b"\r\ncontent-length:")
            if start >= 0:
                stop = head.find(b"\r\n", start + 2)
                length = int(head[start + 17 : stop if stop >= 0 else None])
            elif b"\r\ntransfer-encoding:" in head:
                self._close()  # no client of this benchmark sends chunked requests
                return
            if len(self._buffer) < end + 4 + length:
                return
            body = bytes(self._buffer[end + 4 : end + 4 + length])
            del self._buffer[: end + 4 + length]
            self._handle(head, body)

    def _handle(self, head: bytes, body: bytes) -> None:
        line = head[: head.find(b"\r\n")]
        if line.startswith(b"post ") and b"/chat/completions" in line:
            request = orjson.loads(body)
            model = str(request.get("model", "fake-model"))
            delay = self._answers.behaviour.delay()
            if request.get("stream"):
                options = request.get("stream_options") or {}
                pieces = self._answers.stream(model, bool(options.get("include_usage")))
                self._later(delay, self._stream, pieces, 0)
            else:
                self._later(delay, self._write, self._answers.plain(model))
        elif line.startswith(b"get ") and b"/models" in line:
            self._write(MODELS_ANSWER)
        else:
            self._write(NOT_FOUND)

    def _later(self, delay: float, callback: Callable[..., None], *args: object) -> None:
        if delay > 0:
            self._loop.call_later(delay, callback, *args)
        else:
            callback(*args)

    def _stream(self, pieces: list[bytes], index: int) -> None:
        interval = self._answers.behaviour.chunk_interval_s
        if interval <= 0 and index > 0:
            self._write(b"".join(pieces[index:]))
            return
        self._write(pieces[index])
        if index + 1 < len(pieces) and self._transport is not None:
            self._loop.call_later(interval, self._stream, pieces, index + 1)

    def _write(self, data: bytes) -> None:
        if self._transport is not None:
            self._transport.write(data)

    def _close(self) -> None:
        if self._transport is not None:
            self._transport.close()


async def serve(port: int, behaviour: Behaviour) -> None:
    loop = asyncio.get_running_loop()
    answers = _Answers(behaviour)
    server = await loop.create_server(lambda: _Connection(answers), "127.0.0.1", port, backlog=1024, reuse_address=True)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--delay-ms", type=float, default=0.0)
    parser.add_argument("--delay-max-ms", type=float, default=0.0)
    parser.add_argument("--chunks", type=int, default=20)
    parser.add_argument("--chunk-interval-ms", type=float, default=0.0)
    args = parser.parse_args(argv)
    behaviour = Behaviour(args.delay_ms / 1000, args.chunks, args.chunk_interval_ms / 1000, args.delay_max_ms / 1000)
    try:
        import uvloop
    except ImportError:  # plain asyncio still works, only slower
        runner = asyncio.run
    else:
        runner = uvloop.run
    with contextlib.suppress(KeyboardInterrupt):
        runner(serve(args.port, behaviour))


if __name__ == "__main__":
    main()

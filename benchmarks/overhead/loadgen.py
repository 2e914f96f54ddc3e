"""A closed-loop HTTP/1.1 load generator on raw asyncio protocols.

Not aiohttp or httpx: the generator shares a core with the fake upstream, and a client library
costs more per request than the gateway we measure would, which would cap throughput at the
generator and blur latencies by its own queueing. Here a request is one prebuilt bytes object;
the answer is parsed only as far as framing needs (Content-Length or chunked), and the time its
first body bytes arrive is the time to first token of a streamed answer.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import cast

import orjson

# An agent step: a system prompt, a task, a tool result; about 1.6 KB of JSON.
_TOOL_OUTPUT = "def parse(text):\n    return [row.split(',') for row in text.splitlines()]\n"
_MESSAGES = [
    {"role": "system", "content": "You are a careful software engineer working in a repository. " * 8},
    {"role": "user", "content": "Fix the failing test in tests/test_parser.py and explain the cause. " * 6},
    {"role": "assistant", "content": "I will look at the test first."},
    {"role": "user", "content": _TOOL_OUTPUT * 6},
]
REQUEST_TIMEOUT_S = 30.0


def chat_body(model: str, stream: bool) -> bytes:
    body: dict[str, object] = {"model": model, "messages": _MESSAGES, "max_tokens": 64, "temperature": 0}
    if stream:
        # Every path (direct, Tandem, LiteLLM) then carries the same usage chunk.
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return orjson.dumps(body)


def http_request(port: int, path: str, body: bytes | None = None) -> bytes:
    method = b"GET" if body is None else b"POST"
    head = b"%s %s HTTP/1.1\r\nhost: 127.0.0.1:%d\r\nauthorization: Bearer sk-bench\r\n" % (
        method,
        path.encode(),
        port,
    )
    if body is None:
        return head + b"\r\n"
    return head + b"content-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)


@dataclass(slots=True)
class Answer:
    status: int
    body: bytes
    first_body_s: float  # perf_counter when the first body bytes arrived


class _Connection(asyncio.Protocol):
    """One keep-alive connection with one request in flight at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self._waiter: asyncio.Future[Answer] | None = None
        self._reset()

    def _reset(self) -> None:
        self._buffer = bytearray()
        self._head_done = False
        self._status = 0
        self._length = -1  # Content-Length, or -1 when chunked
        self._body = bytearray()
        self._first_body = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports do not subclass asyncio.Transport; they have its methods.
        self.transport = cast(asyncio.Transport, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(ConnectionError("the server closed the connection"))

    def send(self, request: bytes) -> asyncio.Future[Answer]:
        if self.transport is None:
            raise ConnectionError("not connected")
        self._reset()
        self._waiter = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return self._waiter

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        self._buffer += data
        if not self._head_done:
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self._buffer[:end]).lower()
            del self._buffer[: end + 4]
            self._head_done = True
            self._status = int(head[9:12])
            start = head.find(b"\r\ncontent-length:")
            if start >= 0:
                stop = head.find(b"\r\n", start + 2)
                self._length = int(head[start + 17 : stop if stop >= 0 else None])
            elif b"chunked" not in head:
                self._fail("an answer with neither Content-Length nor chunked framing")
                return
        if self._buffer and not self._first_body:
            self._first_body = now
        if self._length >= 0:
            if len(self._buffer) >= self._length:
                self._finish(bytes(self._buffer[: self._length]))
        else:
            self._read_chunks()

    def _read_chunks(self) -> None:
        buffer = self._buffer
        while True:
            line_end = buffer.find(b"\r\n")
            if line_end < 0:
                return
            size = int(bytes(buffer[:line_end]).split(b";", 1)[0], 16)
            if size == 0:
                # Last chunk; no trailers from any server here, so the blank line ends it.
                if len(buffer) >= line_end + 4:
                    self._finish(bytes(self._body))
                return
            if len(buffer) < line_end + 2 + size + 2:
                return
            self._body += buffer[line_end + 2 : line_end + 2 + size]
            del buffer[: line_end + 2 + size + 2]

    def _finish(self, body: bytes) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(Answer(self._status, body, self._first_body))

    def _fail(self, why: str) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(ConnectionError(why))
        if self.transport is not None:
            self.transport.close()


async def connect(port: int) -> _Connection:
    loop = asyncio.get_running_loop()
    _, protocol = await loop.create_connection(_Connection, "127.0.0.1", port)
    return protocol


async def fetch(port: int, request: bytes, timeout_s: float = 10.0) -> Answer:
    """One request on a fresh connection (readiness checks, smoke checks)."""
    async with asyncio.timeout(timeout_s):
        connection = await connect(port)
        try:
            return await connection.send(request)
        finally:
            if connection.transport is not None:
                connection.transport.close()


@dataclass(slots=True)
class LoadResult:
    duration_s: float
    latencies_s: list[float] = field(default_factory=list)
    ttfts_s: list[float] = field(default_factory=list)
    errors: int = 0
    first_error: str | None = None
    answered: int = 0  # every answer, warm-up included: what the gateway's memory has seen

    @property
    def completed(self) -> int:
        return len(self.latencies_s)

    @property
    def rps(self) -> float:
        return self.completed / self.duration_s if self.duration_s > 0 else 0.0

    def error(self, why: str) -> None:
        self.errors += 1
        if self.first_error is None:
            self.first_error = why


def _valid(answer: Answer, streamed: bool) -> str | None:
    """Why the answer is not a complete success, or None."""
    if answer.status != 200:
        return f"HTTP {answer.status}: {answer.body[:200]!r}"
    if streamed:
        if not answer.body.endswith(b"data: [DONE]\n\n") or b'"error"' in answer.body:
            return f"incomplete or failed stream: ...{answer.body[-200:]!r}"
    elif b'"choices"' not in answer.body:
        return f"no choices in the answer: {answer.body[:200]!r}"
    return None


async def run_load(
    port: int,
    request: bytes,
    *,
    streamed: bool,
    concurrency: int,
    warmup_s: float,
    duration_s: float,
    stagger_s: float = 0.0,
) -> LoadResult:
    """`concurrency` connections, each sending the next request as soon as its answer is in.

    Requests that start during the warm-up are not counted; nor are those that start after the
    window. The workers start `stagger_s / concurrency` apart, so that against an upstream with
    a fixed delay they do not all move in lock-step (a fleet of agents does not).
    """
    result = LoadResult(duration_s=duration_s)
    loop_start = time.perf_counter()
    window_start = loop_start + warmup_s
    window_end = window_start + duration_s

    async def worker(index: int) -> None:
        await asyncio.sleep(stagger_s * index / concurrency)
        connection: _Connection | None = None
        while True:
            start = time.perf_counter()
            if start >= window_end:
                break
            try:
                if connection is None or connection.transport is None:
                    connection = await connect(port)
                    start = time.perf_counter()
                async with asyncio.timeout(REQUEST_TIMEOUT_S):
                    answer = await connection.send(request)
            except (OSError, TimeoutError) as exc:
                if start >= window_start:
                    result.error(f"{type(exc).__name__}: {exc}")
                if connection is not None and connection.transport is not None:
                    connection.transport.close()
                connection = None
                await asyncio.sleep(0.01)  # a refused connection must not spin
                continue
            end = time.perf_counter()
            result.answered += 1
            if start < window_start:
                continue
            problem = _valid(answer, streamed)
            if problem is not None:
                result.error(problem)
                continue
            result.latencies_s.append(end - start)
            if streamed:
                result.ttfts_s.append(answer.first_body_s - start)
        if connection is not None and connection.transport is not None:
            connection.transport.close()

    await asyncio.gather(*(worker(i) for i in range(concurrency)))
    return result

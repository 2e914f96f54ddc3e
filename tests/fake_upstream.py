"""A scripted OpenAI-compatible upstream: a real HTTP server on 127.0.0.1.

Each request's behaviour is chosen by the request itself (a `fake` key in the body, which the
gateway passes through as it passes every unknown key) or, failing that, by the next entry of a
queue the test filled, or else by the test's `respond` function of the request's body (answers
that follow each run's own history, for runs in parallel), or else a plain text answer. Every request is recorded, so a test can
assert what an upstream received.

Behaviours (`kind`): text, tool_call, error, hang, drop (stream some chunks then cut the
connection), stall (stream some chunks then go quiet), eof (stream some chunks then end the
answer cleanly; with drop, stall and eof, `partial` sends half of the next event first: a line
left unfinished), no_done (end the stream without [DONE]),
raw (`body` as it is, with `status` and `content_type`: an answer that is not a completion).
Common options: `text`, `delay` (seconds before the first byte), `chunk_delay`, `chunks`,
`usage` (false to leave the usage chunk out, or a plain answer's usage; None: a plain answer's
`usage: null`), `status`, `body`, `retry_after`, `name`,
`arguments`, `call_id` (the tool call's id), `prompt_tokens`, `cached_tokens`, `completion_tokens`,
`until` (a function of nothing: the answer waits, at most `delay` seconds, until it is true).
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    disconnected: bool = False  # the client went away before the answer was complete
    raw: bytes = b""  # the body exactly as it arrived
    peer: Any = None  # the client's address and port: one per connection
    at: float = field(default_factory=time.monotonic)  # when it arrived (this process's clock)


@dataclass
class FakeUpstream:
    name: str = "fake"
    model: str = "fake-model"
    received: list[Received] = field(default_factory=list)
    script: deque[dict[str, Any]] = field(default_factory=deque)
    # Used when a request has no `fake` key and the queue is empty.
    default: dict[str, Any] = field(default_factory=lambda: {"kind": "text"})
    # Used when a request has no `fake` key and the queue is empty, before `default`: the
    # behaviour for this request's body (called on the server's thread, one request at a time).
    respond: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    # What GET /metrics answers: a vLLM server's Prometheus text, as a test scripts it.
    metrics_text: str = ""
    port: int = 0
    # Served over TLS with this context (tests/raw_upstream.py's `tls_certificate` makes one).
    ssl_context: ssl.SSLContext | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _runner: web.AppRunner | None = None
    _stopped: bool = False
    _sockets: set[Any] = field(default_factory=set)

    @property
    def base_url(self) -> str:
        scheme = "http" if self.ssl_context is None else "https"
        return f"{scheme}://127.0.0.1:{self.port}/v1"

    def push(self, *behaviours: dict[str, Any]) -> None:
        """Script the next requests that carry no `fake` key of their own."""
        self.script.extend(behaviours)

    def reset(self) -> None:
        self.received.clear()
        self.script.clear()
        self.default = {"kind": "text"}
        self.respond = None
        self.metrics_text = ""

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> FakeUpstream:
        ready = threading.Event()
        sock = socket.socket()
        sock.bind(("127.0.0.1", self.port))
        self.port = sock.getsockname()[1]
        self._listen_sock = sock

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self._loop)
            self._loop.run_until_complete(self._serve(sock))
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name=f"fake-{self.name}", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("fake upstream did not start")
        return self

    async def _serve(self, sock: socket.socket) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/metrics", self._metrics)
        # handler_cancellation: a client that goes away cancels the handler, which is how the
        # fake notices (and records) that the gateway cancelled an upstream request.
        self._runner = web.AppRunner(
            app, access_log=None, handle_signals=False, handler_cancellation=True, shutdown_timeout=1
        )
        await self._runner.setup()
        await web.SockSite(self._runner, sock, ssl_context=self.ssl_context).start()

    def stop(self) -> None:
        """Stop listening: later connections are refused, as from a dead server."""
        if self._loop is None or self._stopped:
            return
        self._stopped = True
        runner = self._runner
        assert runner is not None

        async def shutdown() -> None:
            await runner.cleanup()

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    # -- handlers ----------------------------------------------------------------------------

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": self.model, "object": "model"}]})

    async def _metrics(self, request: web.Request) -> web.Response:
        return web.Response(text=self.metrics_text, content_type="text/plain")

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        body = orjson.loads(raw)
        record = Received(request.path, dict(request.headers), body)
        record.raw = raw
        record.peer = request.transport.get_extra_info("peername") if request.transport is not None else None
        self.received.append(record)
        behaviour = body.get("fake")
        if behaviour is None:
            if self.script:
                behaviour = self.script.popleft()
            elif self.respond is not None:
                behaviour = self.respond(body)
            else:
                behaviour = self.default
        elif isinstance(behaviour, str):
            behaviour = {"kind": behaviour}
        try:
            return await self._answer(request, body, behaviour)
        except (asyncio.CancelledError, ConnectionResetError):
            record.disconnected = True
            raise

    async def _answer(self, request: web.Request, body: dict[str, Any], how: dict[str, Any]) -> web.StreamResponse:
        if how.get("kind") == "agent":
            # An agent's next step: the n-th scripted command, n = assistant turns so far.
            turns = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
            commands = how["commands"]
            command = commands[min(turns, len(commands) - 1)]
            how = {
                **how,
                "kind": "tool_call",
                "name": "bash",
                "arguments": orjson.dumps({"command": command}).decode(),
            }
        kind = how.get("kind", "text")
        if how.get("until") is not None:
            # Wait (up to `delay` seconds) for something else to happen first, such as another
            # request arriving: the order a test needs when a client runs requests at once.
            for _ in range(int(float(how.get("delay", 10)) * 100)):
                if how["until"]():
                    break
                await asyncio.sleep(0.01)
        elif how.get("delay"):
            await asyncio.sleep(float(how["delay"]))
        if kind == "hang":
            await asyncio.sleep(3600)
        if kind == "error":
            status = int(how.get("status", 500))
            payload = how.get("body") or {
                "error": {"message": f"scripted error {status}", "type": "server_error", "code": status}
            }
            headers = {"Retry-After": str(how["retry_after"])} if "retry_after" in how else None
            return web.json_response(payload, status=status, headers=headers)
        if kind == "raw":
            return web.Response(
                body=str(how.get("body", "")).encode(),
                status=int(how.get("status", 200)),
                content_type=how.get("content_type", "text/plain"),
            )
        if body.get("stream"):
            return await self._stream(request, body, how)
        return web.json_response(self._completion(body, how))

    def _usage(self, how: dict[str, Any]) -> dict[str, Any]:
        prompt = int(how.get("prompt_tokens", 20))
        completion = int(how.get("completion_tokens", 5))
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": int(how.get("cached_tokens", 0))},
        }

    def _completion(self, body: dict[str, Any], how: dict[str, Any]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": how.get("text", f"hello from {self.name}")}
        finish = "stop"
        if how.get("kind") == "tool_call":
            message = {
                "role": "assistant",
                "content": how.get("text"),  # text before the call, when scripted
                "tool_calls": [
                    {
                        "id": how.get("call_id", "call_1"),
                        "type": "function",
                        "function": {
                            "name": how.get("name", "bash"),
                            "arguments": how.get("arguments", '{"command": "ls"}'),
                        },
                    }
                ],
            }
            finish = "tool_calls"
        choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish}
        if "top_logprobs" in how:
            tops = [{"token": f"t{i}", "logprob": lp, "bytes": None} for i, lp in enumerate(how["top_logprobs"])]
            first = tops[0] if tops else {"token": "t0", "logprob": 0.0}
            choice["logprobs"] = {"content": [{**first, "top_logprobs": tops}]}
        completion = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [choice],
            "usage": self._usage(how),
        }
        if how.get("usage", True) is False:  # as some servers answer: no usage, or `usage: null`
            del completion["usage"]
        elif how.get("usage") is None and "usage" in how:
            completion["usage"] = None
        return completion

    def _chunk(self, body: dict[str, Any], delta: dict[str, Any], finish: str | None = None) -> bytes:
        chunk = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return b"data: " + orjson.dumps(chunk) + b"\n\n"

    async def _stream(self, request: web.Request, body: dict[str, Any], how: dict[str, Any]) -> web.StreamResponse:
        kind = how.get("kind", "text")
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        chunk_delay = float(how.get("chunk_delay", 0))
        events: list[bytes] = [self._chunk(body, {"role": "assistant", "content": ""})]
        if kind == "tool_call":
            name = how.get("name", "bash")
            arguments = how.get("arguments", '{"command": "ls"}')
            half = len(arguments) // 2
            if how.get("text"):
                events.append(self._chunk(body, {"content": how["text"]}))
            events.append(
                self._chunk(
                    body,
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": how.get("call_id", "call_1"),
                                "type": "function",
                                "function": {"name": name, "arguments": ""},
                            }
                        ]
                    },
                )
            )
            for part in (arguments[:half], arguments[half:]):
                events.append(self._chunk(body, {"tool_calls": [{"index": 0, "function": {"arguments": part}}]}))
            finish = "tool_calls"
        else:
            words = how.get("text", f"hello from {self.name}").split(" ")
            count = int(how.get("chunks", len(words)))
            for i in range(count):
                word = words[i % len(words)]
                events.append(self._chunk(body, {"content": word if i == 0 else " " + word}))
            finish = "stop"
        cut_after = int(how.get("after", 2))
        for i, event in enumerate(events):
            if kind in ("drop", "stall", "eof") and i == cut_after:
                if how.get("partial"):
                    await response.write(event[: len(event) // 2])
                break
            await response.write(event)
            if chunk_delay:
                await asyncio.sleep(chunk_delay)
        if kind == "drop":
            # Cut the connection mid-stream, as a crashed server would.
            assert request.transport is not None
            request.transport.abort()
            return response
        if kind == "stall":
            await asyncio.sleep(3600)
        if kind == "eof":
            await response.write_eof()
            return response
        await response.write(self._chunk(body, {}, finish))
        if how.get("usage", True) and (body.get("stream_options") or {}).get("include_usage"):
            usage_chunk = {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": body.get("model", self.model),
                "choices": [],
                "usage": self._usage(how),
            }
            await response.write(b"data: " + orjson.dumps(usage_chunk) + b"\n\n")
        if kind != "no_done":
            await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port

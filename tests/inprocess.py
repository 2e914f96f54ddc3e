"""The engine in process, without sockets: each upstream is a scripted transport.

`ScriptedTransport` stands where an upstream's pooled transport stands (the seam `Engine`
offers for it, router/transport/mock.py, like httpx's `MockTransport`): every POST is recorded
and answered by the next scripted behaviour (else `default`), so a test drives the whole engine (tracker, store,
privacy, strategies, relay, ledger) and asserts what each upstream received and what the
step's result and record are. The socket suite (tests/fake_upstream.py, tests/gateway_server.py)
keeps what only a real server shows: drop-in clients, limits on the wire, real Redis and vLLM.
The shapes are the socket fake's.

Behaviours (`kind`): text (a plain answer, or streamed when the request asks), tool_call (one
call of `name` with `arguments`; streamed as the name, then the arguments in two halves),
status (an error status with an OpenAI error body, `retry_after` optional), raw (`body` as
given, with `status`), connect (the connection fails), hang (no answer until cancelled), drop
(a stream cut after `after` events), stall (a stream gone quiet after `after` events).
Options: `text`, `chunks`, `usage` (False: none reported), `prompt_tokens`, `cached_tokens`,
`completion_tokens`, `top_logprobs` (the first token's, as a plain answer carries them),
`delay` (seconds before the first byte).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import orjson

from router.engine import Engine
from router.ledger import StepRecord
from router.protocol.chat import chat_request
from router.result import Answer, Failure, StepMeta, StepResult, Stream
from router.settings import Settings
from router.transport import ConnectFailed, Request
from router.transport.mock import End, MockResponse, MockTransport
from tests.gateway_server import settings_for


@dataclass
class Received:
    body: dict[str, Any]
    headers: dict[str, str]
    response: MockResponse | None = None


def _sse(payload: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(payload) + b"\n\n"


@dataclass
class ScriptedTransport(MockTransport):
    model: str = "model"
    script: deque[dict[str, Any]] = field(default_factory=deque)
    received: list[Received] = field(default_factory=list)
    # Used when the script is empty.
    default: dict[str, Any] = field(default_factory=lambda: {"kind": "text"})

    def __post_init__(self) -> None:
        super().__init__(self._respond)

    def push(self, *behaviours: dict[str, Any]) -> None:
        self.script.extend(behaviours)

    async def _respond(self, request: Request) -> MockResponse:
        if request.method == "GET":  # the readiness probe
            return MockResponse(200)
        body = orjson.loads(request.body)
        received = Received(body, dict(request.headers))
        self.received.append(received)
        how = self.script.popleft() if self.script else self.default
        kind = how.get("kind", "text")
        if request.sent is not None and kind != "connect":  # as a transport does once the request is written
            await request.sent()
        if how.get("delay"):
            await asyncio.sleep(float(how["delay"]))
        if kind == "connect":
            raise ConnectFailed(f"cannot connect to {request.url.split('/')[2]}: [Errno 111] Connection refused")
        json = {"Content-Type": "application/json"}
        if kind == "hang":
            response = MockResponse(200, json, hang=True)
        elif kind == "status":
            status = how.get("status", 503)
            error = {"error": {"message": how.get("text", f"scripted {status}"), "type": "server_error"}}
            extra = {"Retry-After": str(how["retry_after"])} if "retry_after" in how else {}
            response = MockResponse(status, {**json, **extra}, [orjson.dumps(error)])
        elif kind == "raw":
            response = MockResponse(how.get("status", 200), {}, [how["body"]])
        elif kind == "keepalives":  # an event stream of comments alone, then nothing
            comments = [b": keep-alive\n\n"] * int(how.get("count", 3))
            response = MockResponse(200, {"Content-Type": "text/event-stream"}, comments, end="stall")
        elif body.get("stream"):
            events = self._events(how)
            end: End = "cut" if kind == "drop" else "stall" if kind == "stall" else ""
            if end:
                events = events[: int(how.get("after", 2))]
            response = MockResponse(200, {"Content-Type": "text/event-stream"}, events, end=end)
        else:
            response = MockResponse(200, json, [self._answer(how)])
        received.response = response
        return response

    def _usage(self, how: dict[str, Any]) -> dict[str, Any]:
        prompt, completion = int(how.get("prompt_tokens", 100)), int(how.get("completion_tokens", 10))
        usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion}
        usage["total_tokens"] = prompt + completion
        if "cached_tokens" in how:
            usage["prompt_tokens_details"] = {"cached_tokens": int(how["cached_tokens"])}
        return usage

    def _tool_call(self, how: dict[str, Any]) -> tuple[str, str]:
        return how.get("name", "bash"), how.get("arguments", '{"command": "ls"}')

    def _answer(self, how: dict[str, Any]) -> bytes:
        message: dict[str, Any] = {"role": "assistant", "content": how.get("text", f"{self.model} says hi")}
        finish = "stop"
        if how.get("kind") == "tool_call":
            name, arguments = self._tool_call(how)
            function = {"name": name, "arguments": arguments}
            message = {"role": "assistant", "content": None}
            message["tool_calls"] = [{"id": "call_1", "type": "function", "function": function}]
            finish = "tool_calls"
        choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish}
        if "top_logprobs" in how:
            tops = [{"token": f"t{i}", "logprob": lp, "bytes": None} for i, lp in enumerate(how["top_logprobs"])]
            first = tops[0] if tops else {"token": "t0", "logprob": 0.0}
            choice["logprobs"] = {"content": [{**first, "top_logprobs": tops}]}
        answer: dict[str, Any] = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": self.model,
            "choices": [choice],
        }
        if how.get("usage", True):
            answer["usage"] = self._usage(how)
        return orjson.dumps(answer)

    def _events(self, how: dict[str, Any]) -> list[bytes]:
        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            return _sse({"id": "c", "object": "chat.completion.chunk", "model": self.model, "choices": [choice]})

        events = [chunk({"role": "assistant", "content": ""})]
        if how.get("kind") == "tool_call":
            name, arguments = self._tool_call(how)
            start = {"index": 0, "id": "call_1", "type": "function", "function": {"name": name, "arguments": ""}}
            events.append(chunk({"tool_calls": [start]}))
            half = len(arguments) // 2
            for part in (arguments[:half], arguments[half:]):
                events.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": part}}]}))
            finish = "tool_calls"
        else:
            words = how.get("text", f"{self.model} says hi").split(" ")
            for i in range(int(how.get("chunks", len(words)))):
                word = words[i % len(words)]
                events.append(chunk({"content": word if i == 0 else " " + word}))
            finish = "stop"
        events.append(chunk({}, finish))
        if how.get("usage", True):
            events.append(
                _sse({"id": "c", "object": "chat.completion.chunk", "choices": [], "usage": self._usage(how)})
            )
        events.append(b"data: [DONE]\n\n")
        return events


def engine_settings(**overrides: Any) -> Settings:
    """Settings whose upstream URLs are never dialled (the transports are scripted)."""
    overrides.setdefault("routes", {"tandem": {"strategy": "edge"}})
    return settings_for("http://edge.invalid/v1", "http://cloud.invalid/v1", **overrides)


@dataclass
class InProcess:
    engine: Engine
    transports: dict[str, ScriptedTransport]  # one per configured upstream

    @property
    def edge(self) -> ScriptedTransport:
        return self.transports["edge"]

    @property
    def cloud(self) -> ScriptedTransport:
        return self.transports["cloud"]

    async def run(
        self, session: str | None = "s1", headers: dict[str, str] | None = None, after: bool = True, **body: Any
    ) -> StepResult:
        """One step; a plain answer's `after` is run as the HTTP layer runs it once the answer
        is sent (`after=False` leaves it to the test)."""
        body.setdefault("model", "tandem")
        body.setdefault("messages", [{"role": "user", "content": "hi"}])
        request = chat_request(body, len(orjson.dumps(body)))
        meta_headers = {**({"x-session-id": session} if session else {}), **(headers or {})}
        # The steps before are written first, as they are between an agent's requests over
        # HTTP (records leave the request path through a queue; constraints read their counts).
        await self.engine.tracker.recorder.flush()
        result = await self.engine.run(request, StepMeta(meta_headers, ""))
        if after and isinstance(result, Answer) and result.after is not None:
            await result.after()
        return result

    def metric(self, name: str, **labels: str) -> float:
        """A sample of the engine's metrics (0 when it has none yet)."""
        return self.engine.metrics.registry.get_sample_value(name, labels) or 0.0

    def metric_sum(self, name: str, **labels: str) -> dict[str, float]:
        """A counter's samples with `labels`, summed by their target."""
        sums: dict[str, float] = {}
        for family in self.engine.metrics.registry.collect():
            for sample in family.samples:
                if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                    target = sample.labels.get("target", "")
                    sums[target] = sums.get(target, 0.0) + sample.value
        return sums

    async def records(self, trajectory_id: str) -> list[StepRecord]:
        await self.engine.tracker.recorder.flush()
        return await self.engine.tracker.store.records(trajectory_id)


@asynccontextmanager
async def in_process(settings: Settings | None = None) -> AsyncIterator[InProcess]:
    settings = settings or engine_settings()
    transports = {name: ScriptedTransport(f"{name}-model") for name in settings.upstreams}
    engine = Engine(settings, transports=transports)
    await engine.start()
    try:
        yield InProcess(engine, transports)
    finally:
        await engine.close()


async def drain(stream: Stream) -> bytes:
    """The whole stream, as a client reads it; then closed, as the HTTP layer closes it."""
    parts = [chunk async for chunk in stream.chunks]
    await stream.close()
    return b"".join(parts)


def events(data: bytes) -> list[Any]:
    """The `data:` payloads of a server-sent event stream, parsed ("[DONE]" as it is)."""
    found: list[Any] = []
    for line in data.decode().splitlines():
        if line.startswith("data: "):
            payload = line[len("data: ") :]
            found.append(payload if payload == "[DONE]" else orjson.loads(payload))
    return found


__all__ = [
    "Answer",
    "Failure",
    "InProcess",
    "ScriptedTransport",
    "Stream",
    "drain",
    "engine_settings",
    "events",
    "in_process",
]

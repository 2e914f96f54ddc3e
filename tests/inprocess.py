"""The engine in process, without sockets: each upstream is a scripted HTTP client session.

`ScriptedSession` stands where the engine's aiohttp session stands (the one seam `Engine`
offers for it, like httpx's `MockTransport`): every POST is recorded and answered by the next
scripted behaviour, so a test drives the whole engine (tracker, store, privacy, strategies,
relay, ledger) and asserts what each upstream received and what the step's result and record
are. The socket suite (tests/fake_upstream.py, tests/gateway_server.py) keeps what only a real
server shows: drop-in clients, limits on the wire, real Redis and vLLM.

Behaviours (`kind`): text (a plain answer, or streamed when the request asks), status (an
error status with an OpenAI error body), raw (`body` as given, with `status`), connect (the
connection fails), hang (no answer until cancelled). Options: `text`, `chunks`, `usage`.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson

from router.engine import Engine
from router.ledger import StepRecord
from router.protocol.chat import chat_request
from router.result import Answer, Failure, StepMeta, StepResult, Stream
from router.settings import Settings
from tests.gateway_server import settings_for


class _Content:
    def __init__(self, parts: list[bytes], hang: bool = False) -> None:
        self._parts = deque(parts)
        self._hang = hang

    async def readany(self) -> bytes:
        if self._hang:
            await asyncio.Event().wait()
        await asyncio.sleep(0)  # a chunk arrives later: let the loop run, as a socket would
        return self._parts.popleft() if self._parts else b""

    async def iter_any(self) -> AsyncIterator[bytes]:
        while part := await self.readany():
            yield part


@dataclass
class ScriptedResponse:
    status: int
    headers: dict[str, str]
    content: _Content
    closed: bool = False

    @property
    def content_length(self) -> int | None:
        return None

    def release(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


@dataclass
class Received:
    body: dict[str, Any]
    response: ScriptedResponse | None = None


@dataclass
class ScriptedSession:
    model: str = "model"
    script: deque[dict[str, Any]] = field(default_factory=deque)
    received: list[Received] = field(default_factory=list)

    def push(self, *behaviours: dict[str, Any]) -> None:
        self.script.extend(behaviours)

    async def post(self, url: str, data: bytes, headers: dict[str, str]) -> ScriptedResponse:
        body = orjson.loads(data)
        received = Received(body)
        self.received.append(received)
        how = self.script.popleft() if self.script else {"kind": "text"}
        kind = how.get("kind", "text")
        if kind == "connect":
            raise aiohttp.ClientConnectionError("connection refused (scripted)")
        if kind == "hang":
            response = ScriptedResponse(200, {"Content-Type": "application/json"}, _Content([], hang=True))
        elif kind == "status":
            status = how.get("status", 503)
            error = {"error": {"message": how.get("text", f"scripted {status}"), "type": "server_error"}}
            response = ScriptedResponse(status, {"Content-Type": "application/json"}, _Content([orjson.dumps(error)]))
        elif kind == "raw":
            response = ScriptedResponse(how.get("status", 200), {}, _Content([how["body"]]))
        elif body.get("stream"):
            response = ScriptedResponse(200, {"Content-Type": "text/event-stream"}, _Content(self._events(how)))
        else:
            response = ScriptedResponse(200, {"Content-Type": "application/json"}, _Content([self._answer(how)]))
        received.response = response
        return response

    def get(self, url: str, headers: dict[str, str]) -> Any:
        @asynccontextmanager
        async def probe() -> AsyncIterator[Any]:
            yield ScriptedResponse(200, {}, _Content([]))

        return probe()

    async def close(self) -> None:
        pass

    def _usage(self, how: dict[str, Any]) -> dict[str, int]:
        return {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}

    def _answer(self, how: dict[str, Any]) -> bytes:
        message = {"role": "assistant", "content": how.get("text", f"{self.model} says hi")}
        return orjson.dumps(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": self.model,
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": self._usage(how),
            }
        )

    def _events(self, how: dict[str, Any]) -> list[bytes]:
        words = how.get("text", f"{self.model} says hi").split(" ")
        events = []
        for i, word in enumerate(words):
            delta = {"role": "assistant", "content": word if i == 0 else " " + word}
            chunk = {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}
            events.append(b"data: " + orjson.dumps(chunk) + b"\n\n")
        end = {
            "id": "c",
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        }
        events.append(b"data: " + orjson.dumps(end) + b"\n\n")
        if how.get("usage", True):
            usage = {"id": "c", "object": "chat.completion.chunk", "choices": [], "usage": self._usage(how)}
            events.append(b"data: " + orjson.dumps(usage) + b"\n\n")
        events.append(b"data: [DONE]\n\n")
        return events


def engine_settings(**overrides: Any) -> Settings:
    """Settings whose upstream URLs are never dialled (the sessions are scripted)."""
    overrides.setdefault("routes", {"tandem": {"strategy": "edge"}})
    return settings_for("http://edge.invalid/v1", "http://cloud.invalid/v1", **overrides)


@dataclass
class InProcess:
    engine: Engine
    edge: ScriptedSession
    cloud: ScriptedSession

    async def run(self, session: str | None = "s1", headers: dict[str, str] | None = None, **body: Any) -> StepResult:
        body.setdefault("model", "tandem")
        body.setdefault("messages", [{"role": "user", "content": "hi"}])
        request = chat_request(body, len(orjson.dumps(body)))
        meta_headers = {**({"x-session-id": session} if session else {}), **(headers or {})}
        return await self.engine.run(request, StepMeta(meta_headers, ""))

    async def records(self, trajectory_id: str) -> list[StepRecord]:
        await self.engine.tracker.recorder.flush()
        return await self.engine.tracker.store.records(trajectory_id)


@asynccontextmanager
async def in_process(settings: Settings | None = None) -> AsyncIterator[InProcess]:
    edge, cloud = ScriptedSession("edge-model"), ScriptedSession("cloud-model")
    engine = Engine(settings or engine_settings(), sessions={"edge": edge, "cloud": cloud})  # type: ignore[dict-item]
    await engine.start()
    try:
        yield InProcess(engine, edge, cloud)
    finally:
        await engine.close()


async def drain(stream: Stream) -> bytes:
    """The whole stream, as a client reads it; then closed, as the HTTP layer closes it."""
    parts = [chunk async for chunk in stream.chunks]
    await stream.close()
    return b"".join(parts)


__all__ = ["Answer", "Failure", "InProcess", "ScriptedSession", "Stream", "drain", "engine_settings", "in_process"]

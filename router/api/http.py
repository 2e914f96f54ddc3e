"""The HTTP side of the engine's results and errors: responses built with orjson, the error
body in OpenAI's shape, and streams that close their step however the response ends."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
from starlette.background import BackgroundTask
from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from router.api.disconnect import ClientWatch
from router.errors import GatewayError, error_body
from router.protocol.upstream_error import is_openai_error, openai_error_body
from router.result import After, Answer, Failure, StepResult, Stream
from router.server import JoinedCycle

STREAM_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def json_response(content: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(orjson.dumps(content), status_code=status, headers=headers, media_type="application/json")


def error_response(error: GatewayError) -> Response:
    return Response(error.body(), status_code=error.status, headers=error.headers, media_type="application/json")


def background(after: After | None) -> BackgroundTask | None:
    return BackgroundTask(after) if after is not None else None


class StepStream(StreamingResponse):
    """A step's stream (as relayed, or translated into another surface's events) whose step is
    closed however the response ends, even when the client left before the body began (then
    Starlette never iterates it at all)."""

    def __init__(self, stream: Stream, chunks: AsyncIterator[bytes] | None = None, **kwargs: Any) -> None:
        super().__init__(
            chunks if chunks is not None else stream.chunks,
            headers={**STREAM_HEADERS, **kwargs.pop("headers", {})},
            media_type="text/event-stream",
            background=background(stream.after),
            **kwargs,
        )
        self._stream = stream

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            if scope["type"] != "http":
                await super().__call__(scope, receive, send)
                return
            # Relayed in this task, the client watched as the step was (a callback from the
            # connection on Tandem's server): Starlette's way for servers before ASGI 2.4, a
            # task group with a second task that waits for the disconnect, cost streamed steps
            # about a tenth of the gateway's CPU in anyio's cancel scopes.
            watch = ClientWatch(receive)
            watch.start()
            await watch.answer(self.stream_response(send))
            if self.background is not None:  # also when the client left, as Starlette does
                await self.background()
        finally:
            await self._stream.close()


class PlainAnswer:
    """A chat completion's answer as ASGI messages: what `chat_response` would make of it (the
    step's headers, then Content-Length and Content-Type, as Starlette's `Response` orders them),
    sent without a `Response` and its header rebuilding; then the answer's `after` work."""

    __slots__ = ("_after", "_body", "_head")

    def __init__(self, answer: Answer) -> None:
        body = answer.body
        head = answer.facts.raw_headers()
        head.append((b"content-length", b"%d" % len(body)))
        head.append((b"content-type", b"application/json"))
        self._head = head
        self._body = body
        self._after = answer.after

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # On Tandem's server `send` is its request cycle's: the head and body go out as one
        # response there, without the two messages (router/server.py `JoinedCycle.send_whole`).
        cycle = getattr(send, "__self__", None)
        if isinstance(cycle, JoinedCycle):
            await cycle.send_whole(200, self._head, self._body)
        else:
            await send({"type": "http.response.start", "status": 200, "headers": self._head})
            await send({"type": "http.response.body", "body": self._body})
        if self._after is not None:
            await self._after()


def chat_response(result: StepResult) -> Response:
    """A result as `/v1/chat/completions` answers it: bytes as the upstream sent them."""
    if isinstance(result, Answer):
        headers = result.facts.headers()
        return Response(
            result.body, headers=headers, media_type="application/json", background=background(result.after)
        )
    if isinstance(result, Stream):
        return StepStream(result, headers=result.facts.headers())
    return failure_response(result)


def failure_response(failure: Failure) -> Response:
    """An error in OpenAI's shape: the upstream's own body relayed where it is in that shape,
    else what it said re-shaped (a plain-text 500, vLLM's top-level error), else the gateway's."""
    media_type = "application/json"
    if failure.body is not None and is_openai_error(failure.body):
        body, media_type = failure.body, failure.content_type
    elif failure.body is not None:
        body = openai_error_body(failure.status, failure.error)
    else:
        error = failure.error
        body = error_body(error["message"], error["type"], error["code"], error.get("param"))
    return Response(body, status_code=failure.status, headers=failure.all_headers(), media_type=media_type)

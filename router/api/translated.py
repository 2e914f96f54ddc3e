"""Serving another API surface through the chat step: translate the request in, the engine's
result out, and errors into the surface's own shape with their type, code and param kept."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import orjson
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from router.api.auth import client_namespace
from router.api.chat import read_body, step_headers
from router.api.disconnect import ClientWatch
from router.api.http import StepStream, background
from router.engine import Engine
from router.errors import GatewayError, internal_error
from router.protocol.chat import ChatRequest
from router.protocol.prefix_translated import SurfaceSpec
from router.result import Answer, Failure, StepMeta, StepResult, Stream

log = logging.getLogger("tandem")

Translate = Callable[[AsyncIterator[bytes]], AsyncIterator[bytes]]


class Kept(Protocol):
    """What a surface keeps of a request's answer (Responses' kept responses): `resume` may give
    another body to read in the place of the one read (Engine.translated); the others get the
    surface's body as read (None when it could not be read)."""

    async def resume(self, body: dict[str, Any]) -> bytes | None: ...

    async def answered(self, body: dict[str, Any] | None, response: dict[str, Any]) -> None: ...

    def streamed(self, body: dict[str, Any] | None, events: AsyncIterator[bytes]) -> AsyncIterator[bytes]: ...


# What a surface keeps of a request (its client key's namespace given), made per request.
Keeping = Callable[[Request, Engine, str], Kept]


@dataclass(frozen=True, slots=True)
class Surface:
    """What a surface supplies: how its request becomes a chat body (whole, or from the
    trajectory's last body; a client's mistake raises a 400), a chat answer in its shape, a
    stream translator for a chat body and its step, its error body for a status
    and an OpenAI error object, and, where its clients expect a streamed request's error inside
    the stream rather than as an HTTP status, the events for it (None: an HTTP error)."""

    spec: SurfaceSpec  # how its request becomes a chat step (router/protocol/prefix_translated.py)
    from_chat: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]  # (answer, the chat body)
    stream: Callable[[dict[str, Any], ChatRequest], Translate]
    error: Callable[[int, dict[str, Any]], bytes]
    stream_error: Callable[[int, dict[str, Any]], bytes | None] = lambda status, error: None


async def _answer(
    result: StepResult,
    surface: Surface,
    chat: dict[str, Any],
    step: ChatRequest,
    kept: Kept | None,
    body: dict[str, Any] | None,
) -> Response:
    if isinstance(result, Failure):
        return _error(result.status, result.error, surface, chat, result.all_headers())
    headers = result.facts.headers()
    if isinstance(result, Stream):
        # What runs once the answer is sent (a shadow call) runs after the translated one.
        events = surface.stream(chat, step)(result.chunks)
        return StepStream(result, events if kept is None else kept.streamed(body, events), headers=headers)
    assert isinstance(result, Answer)
    answer = surface.from_chat(_with_usage(result), chat)
    if kept is not None:
        await kept.answered(body, answer)
    return Response(
        orjson.dumps(answer), headers=headers, media_type="application/json", background=background(result.after)
    )


def _with_usage(result: Answer) -> dict[str, Any]:
    """The completion with the usage the ledger charged: an estimate where the upstream reported
    none usable, not zero tokens (a client that sizes its context by the usage it reads would
    never compact)."""
    if result.estimated is None:
        return result.completion
    return {**result.completion, "usage": result.estimated.to_openai()}


def _error(
    status: int, error: dict[str, Any], surface: Surface, chat: dict[str, Any] | None, headers: dict[str, str]
) -> Response:
    if chat is not None and chat.get("stream"):
        events = surface.stream_error(status, error)
        if events is not None:
            return Response(events, headers=headers, media_type="text/event-stream")
    return Response(surface.error(status, error), status_code=status, headers=headers, media_type="application/json")


async def serve(request: Request, surface: Surface, keeping: Keeping | None = None) -> Response:
    engine: Engine = request.app.state.engine
    chat: dict[str, Any] | None = None
    kept: Kept | None = None
    try:
        namespace = client_namespace(request)
        headers = step_headers(request)
        raw = await read_body(request, engine.max_body_bytes, headers)
        kept = None if keeping is None else keeping(request, engine, namespace)
        watch = ClientWatch(request.receive, engine.open_steps)
        meta = StepMeta(headers, namespace, request.path_params.get("session"), watch.start)
        translated = await watch.answer(
            engine.translated(surface.spec, raw, meta, None if kept is None else kept.resume)
        )
    except GatewayError as exc:
        return _error(exc.status, exc.error(), surface, chat, exc.headers)
    except ClientDisconnect:
        raise  # nobody to answer (the app's handler)
    except Exception as exc:
        # Answered here, in the surface's own shape, rather than by the app's last handler
        # (OpenAI's shape, and the connection dropped after it).
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return _error(500, internal_error(exc).error(), surface, chat, {})
    if isinstance(translated, Response):
        return translated  # the client left
    chat, step, result = translated.chat, translated.request, translated.result
    if chat is None or step is None:
        # Refused before it became a step.
        assert isinstance(result, Failure)
        return _error(result.status, result.error, surface, None, result.headers)
    return await _answer(result, surface, chat, step, kept, translated.body)

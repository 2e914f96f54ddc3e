"""`POST /v1/chat/completions`.

The chat path is served without a Starlette `Request` (router/app.py `TandemApp`): its
handler reads the ASGI scope and `receive` itself (`scope_step`); the `Request` form is kept
for the app's declared route and the other surfaces, which share the body's limit."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import Receive, Scope

from router.api.auth import scope_namespace
from router.api.auth_throttle import AuthThrottle
from router.api.disconnect import ClientWatch
from router.api.encoding import decoded_off_loop, needs_decoding
from router.api.http import chat_response
from router.chain.identify import TARGET_HEADER
from router.engine import Engine
from router.errors import GatewayError
from router.protocol.numbers import whole_number
from router.result import StepMeta, StepResult


async def read_body(
    request: Request, limit: int, headers: Mapping[str, str] | None = None, setting: str = "max_body_bytes"
) -> bytes:
    """The request body, refused with 413 as soon as it passes `limit` bytes (`headers`: the
    request's, already read into a dict, else read here; `setting`: what sets the limit)."""
    if headers is None:
        headers = step_headers(request)  # a repeated Content-Encoding line counts, as on the chat path
    declared = whole_number(headers.get("content-length"))
    if declared is not None and declared > limit:
        raise _too_large(declared, limit, setting)
    parts: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(size, limit, setting)
        parts.append(chunk)
    return await decoded_off_loop(b"".join(parts), headers, limit)


async def receive_body(receive: Receive, limit: int, headers: Mapping[str, str]) -> bytes:
    """`read_body` from `receive` itself, as Starlette's `Request.stream` reads it (a client
    that leaves mid-body raises `ClientDisconnect`), without the request and its generator."""
    declared = whole_number(headers.get("content-length"))
    if declared is not None and declared > limit:
        raise _too_large(declared, limit)
    message = await receive()
    if message["type"] == "http.request" and not message.get("more_body", False):
        body: bytes = message.get("body", b"")  # the whole body in one message: nearly always
        if len(body) > limit:
            raise _too_large(len(body), limit)
        if not needs_decoding(headers):
            return body
        return await decoded_off_loop(body, headers, limit)
    parts: list[bytes] = []
    size = 0
    while True:
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        if message["type"] == "http.request":
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise _too_large(size, limit)
            parts.append(chunk)
            if not message.get("more_body", False):
                return await decoded_off_loop(b"".join(parts), headers, limit)
        message = await receive()


# Headers whose repeats must agree: each different value is kept, joined with ", " (as HTTP
# joins a repeated field), for the engine to refuse rather than follow the first one silently.
SINGLE_VALUED = frozenset((TARGET_HEADER,))
# Headers that are lists (RFC 9110 5.3: repeated lines are one list, in order): every repeat is
# joined, equal ones too (`Content-Encoding: gzip` twice is a body gzipped twice). Kept first
# only, a second coding line was ignored: a body read still compressed, or `br` let through.
LIST_VALUED = frozenset(("content-encoding", "transfer-encoding"))


def headers_of(raw: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """A request's headers as the engine reads them: lower-case names (as the server gives
    them), the first of a repeated name (as Starlette's `Headers.get` gives it), decoded once;
    a `SINGLE_VALUED` name repeated with another value has its values joined, a `LIST_VALUED`
    one all its values. The engine looks up seven names a step; a lookup in Starlette's
    headers decodes and compares them all, one by one."""
    headers: dict[str, str] = {}
    for name, value in raw:
        key = name.decode("latin-1")
        if key not in headers:
            headers[key] = value.decode("latin-1")
        elif key in LIST_VALUED:
            headers[key] = f"{headers[key]}, {value.decode('latin-1')}"
        elif key in SINGLE_VALUED:
            given, seen = value.decode("latin-1"), headers[key]
            if given not in seen.split(", "):
                headers[key] = f"{seen}, {given}"
    return headers


def step_headers(request: Request) -> dict[str, str]:
    """`headers_of` a Starlette request."""
    return headers_of(request.headers.raw)


def _too_large(size: int, limit: int, setting: str = "max_body_bytes") -> GatewayError:
    # Refused before the rest of the body was read: the connection cannot carry another request
    # (what follows is that body), so it is closed after the answer, and the client told so.
    return GatewayError(
        413,
        f"request body of {size} bytes or more is over the limit of {limit} bytes ({setting})",
        code="request_too_large",
        headers={"Connection": "close"},
    )


async def chat_completions(request: Request) -> Response:
    result = await chat_step(request)
    return result if isinstance(result, Response) else chat_response(result)


async def chat_step(request: Request) -> StepResult | Response:
    """The step of a chat completions request: its result, or the 499 of a client that left."""
    state = request.app.state
    return await scope_step(state.engine, state.client_keys, state.auth_throttle, request.scope, request.receive)


async def scope_step(
    engine: Engine,
    client_keys: frozenset[str],
    throttle: AuthThrottle,
    scope: Scope,
    receive: Receive,
) -> StepResult | Response:
    """`chat_step` of an ASGI request: its result, or the 499 of a client that left."""
    headers = headers_of(scope["headers"])
    namespace = scope_namespace(scope, receive, headers, client_keys, throttle)
    body = await receive_body(receive, engine.max_body_bytes, headers)
    watch = ClientWatch(receive, engine.open_steps)
    path_params = scope.get("path_params")
    session = path_params.get("session") if path_params else None
    meta = StepMeta(headers, namespace, session, watch.start)
    return await watch.answer(engine.chat(body, meta))

"""The ASGI application: a FastAPI app whose management endpoints (trajectories, outcome,
models, health) are declared with pydantic models (`router/api/schema.py`: `/openapi.json`,
`/docs`), while the chat, messages and responses paths stay raw routes (no per-request
dependency solving), the chat path even outside the middlewares; one place turns errors into
HTTP answers."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from router import __version__
from router.api.auth_throttle import AuthThrottle, SharedFailures
from router.api.chat import chat_completions, scope_step
from router.api.http import PlainAnswer, chat_response, error_response
from router.api.models import get_model, list_models, model_info, reachable
from router.api.ops import log_upstreams, metrics
from router.api.schema import management_routes
from router.api.ui_sessions import UISessions
from router.api.view import ui_home, ui_login, ui_login_form, ui_logout, ui_trajectory
from router.engine import Engine
from router.errors import GatewayError, bad_request, error_body, internal_error
from router.privacy import backends as privacy_backends
from router.result import Answer
from router.settings import Settings, admin_keys
from router.surfaces import surface_error_bodies, surface_routes
from router.surfaces.responses.kept import KeptResponses
from router.trajectory.resilient import ResilientStore

log = logging.getLogger("tandem")

# Every API path is served with the /v1 prefix, without it, and under /s/{session}/v1, where
# the path names the trajectory (works with every client that takes a base URL).
API_PREFIXES = ("/v1", "", "/s/{session}/v1", "/s/{session}")


def _routes() -> list[BaseRoute]:
    routes: list[BaseRoute] = []
    surfaces = surface_routes()
    for prefix in API_PREFIXES:
        routes.append(Route(f"{prefix}/chat/completions", chat_completions, methods=["POST"]))
        if prefix != "/v1":  # /v1/models and /v1/model/info are in the schema (management_routes)
            routes.append(Route(f"{prefix}/models", list_models, methods=["GET"]))
            routes.append(Route(f"{prefix}/model/info", model_info, methods=["GET"]))
            routes.append(Route(f"{prefix}/models/{{model_id:path}}", get_model, methods=["GET"]))
        # Each folder of router/surfaces/ (a surface by feature) under the same prefixes.
        routes += [Route(f"{prefix}{path}", endpoint, methods=methods) for path, endpoint, methods in surfaces]
    routes += [
        # Claude Code checks that its base URL answers (HEAD / and HEAD /api/hello).
        Route("/", reachable, methods=["GET", "HEAD"]),
        Route("/api/hello", reachable, methods=["GET", "HEAD"]),
        Route("/metrics", metrics, methods=["GET"]),
        # The operator's view (off unless ui.enabled): router/api/view.py.
        Route("/ui", ui_home, methods=["GET"]),
        Route("/ui/t/{trajectory_id}", ui_trajectory, methods=["GET"]),
        Route("/ui/login", ui_login_form, methods=["GET"]),
        Route("/ui/login", ui_login, methods=["POST"]),
        Route("/ui/logout", ui_logout, methods=["POST"]),
    ]
    # Declared routes last: a FastAPI route's match costs more, and the drop-in API paths come first.
    return [*routes, *management_routes()]


# What a 404 names: every API path a client may have meant (the surfaces included).
_ENDPOINTS = ", ".join(["chat/completions", *(path.lstrip("/") for path, _, _ in surface_routes()), "models"])


async def _gateway_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, GatewayError)
    return error_response(exc)


_SHOWN_PATH = 200
# Endpoints of a surface whose errors have its own shape (Anthropic's, on /v1/messages).
_SURFACE_ERRORS = surface_error_bodies()


# Endpoints of OpenAI's API that the gateway does not serve, and what to send instead.
_NOT_SERVED = {
    "completions": "the legacy completions API is not served: send chat/completions",
    "embeddings": "embeddings are not served: call the embedding model directly",
}


def _hint(path: str) -> str:
    """What a client that reached no endpoint most likely did wrong, or ""."""
    if "/v1/v1/" in path:
        # Anthropic's SDK (and others) add /v1 themselves: a base URL ending in /v1 doubles it.
        return "; the client added /v1 to a base URL that already ends in /v1: drop /v1 from its base URL"
    tail = path.rstrip("/").rsplit("/v1/", 1)[-1]
    return f"; {_NOT_SERVED[tail]}" if tail in _NOT_SERVED else ""


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    path = request.url.path
    if len(path) > _SHOWN_PATH:  # a path up to the head's bound (64 KB) is not said back whole
        path = f"{path[:_SHOWN_PATH]}… ({len(path)} characters)"
    if exc.status_code == 405:
        message = f"method {request.method} is not allowed on {path}"
    elif exc.status_code == 404:
        message = f"no endpoint at {path}; the API is under /v1 ({_ENDPOINTS}){_hint(request.url.path)}"
    else:
        message = str(exc.detail)
    code = "not_found" if exc.status_code == 404 else "bad_method"
    # A 405 comes from a route whose path matched (Starlette put its endpoint in the scope).
    shape = _SURFACE_ERRORS.get(request.scope.get("endpoint"))  # type: ignore[arg-type]
    if shape is not None:
        body = shape(exc.status_code, {"message": message, "type": "invalid_request_error", "code": code})
    else:
        body = error_body(message, "invalid_request_error", code)
    return Response(
        body,
        status_code=exc.status_code,
        media_type="application/json",
        headers=exc.headers,  # a 405's `Allow` (RFC 9110: the methods the path takes)
    )


async def _client_left(request: Request, exc: Exception) -> Response:
    # The client left mid-body, or the server dropped it for limits.body_timeout_s (and sent
    # the 408 itself): there is nobody to answer and nothing unexpected.
    return Response(status_code=499)


async def _invalid(request: Request, exc: Exception) -> Response:
    # No declared route validates its input through FastAPI (the handlers parse and answer in
    # OpenAI's shape); should one ever, its 422 is answered in the same shape.
    assert isinstance(exc, RequestValidationError)
    first = exc.errors()[0] if exc.errors() else {}
    where = ".".join(str(part) for part in first.get("loc", ())) or None
    return error_response(bad_request(f"invalid request at {where}: {first.get('msg', 'invalid')}", param=where))


async def _unexpected(request: Request, exc: Exception) -> Response:
    if isinstance(exc, ClientDisconnect):
        return await _client_left(request, exc)
    log.exception("unexpected error on %s %s", request.method, request.url.path)
    # Off the chat path, Starlette raises the error again once this answer is out, and the
    # server then drops the connection: say so, or a client reusing it meets a reset.
    chat_path = chat_path_session(request.url.path) is not False
    return Response(
        internal_error(exc).body(),
        status_code=500,
        media_type="application/json",
        headers=None if chat_path else {"connection": "close"},
    )


def create_app(settings: Settings, on_started: Callable[[], None] | None = None) -> Starlette:
    """The app for these settings. `on_started` runs once the gateway has started: what its
    process makes of itself then (`tandem serve` tunes the garbage collector: router/runtime.py)."""
    privacy_backends.enable(list(settings.privacy_backends))
    engine = Engine(settings)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await engine.start()
        # Whether each upstream answers and takes our key, logged once at start (in the
        # background: a slow upstream must not hold the start up).
        report = asyncio.create_task(log_upstreams(engine))
        if on_started is not None:
            on_started()
        try:
            yield
        finally:
            report.cancel()
            await engine.close()

    app = TandemApp(
        title="Tandem",
        version=__version__,
        summary="The gateway's management API (chat, messages and responses are OpenAI's and Anthropic's APIs)",
        routes=_routes(),
        lifespan=lifespan,
        exception_handlers={
            GatewayError: _gateway_error,
            ClientDisconnect: _client_left,
            HTTPException: _http_error,
            RequestValidationError: _invalid,
            Exception: _unexpected,
        },
        # debug=True would answer an unexpected error with a traceback instead of `_unexpected`.
        debug=False,
        redoc_url=None,
        # FastAPI's OpenTelemetry hooks: off (the gateway's metrics are Prometheus').
        telemetry={"tracing": False, "metrics": False, "logs": False, "operation_spans": False},
    )
    # A trailing slash is taken off before routing (`TandemApp.__call__`): never a redirect,
    # whose Location would be built from the client's Host header.
    app.router.redirect_slashes = False
    app.state.engine = engine
    app.state.client_keys = settings.client_keys()
    app.state.admin_keys = admin_keys(settings)
    # Failed key checks, the view's sign-in sessions and kept responses: in Redis beside the
    # trajectories when they are shared, so that every replica and worker counts and reads the
    # same; each reads Redis only while the store is not known to be out.
    store = engine.tracker.store
    client = store.primary.client if isinstance(store, ResilientStore) else None

    def available() -> bool:
        return not (isinstance(store, ResilientStore) and store.degraded)

    shared = None if client is None else SharedFailures(client, settings.redis_prefix, available)
    app.state.auth_throttle = AuthThrottle(
        settings.auth_throttle, settings.server.trusted_proxies, engine.metrics, shared=shared
    )
    app.state.ui_sessions = UISessions(client, settings.redis_prefix, settings.ui.max_sessions)
    kept = settings.kept_responses
    app.state.kept_responses = (
        KeptResponses(client, settings.redis_prefix, kept.ttl_s, kept.memory_bytes, available, engine.metrics)
        if kept.enabled
        else None
    )
    return app


def chat_path_session(path: str) -> str | bool | None:
    """For a chat-completions path: the session it names, or None; False for any other path."""
    if path in ("/v1/chat/completions", "/chat/completions"):
        return None
    if path.startswith("/s/"):
        session, _, rest = path[3:].partition("/")
        if session and rest in ("v1/chat/completions", "chat/completions"):
            return session
    return False


class TandemApp(FastAPI):
    """FastAPI, with the chat-completions path served without the generic routing and
    exception middlewares and without a Starlette `Request` (most of a step's work outside
    the engine in the overhead profile); every other path, and every error there, goes the
    usual way. What the chat path answers is what its route (`chat_completions`) and the
    exception handlers would: the same statuses, bodies and headers (tests/test_chat_path.py)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if len(path) > 1 and path.endswith("/"):
            # `/v1/chat/completions/` is the endpoint without its slash (a client that joins its
            # base URL and the path with one too many): answered, not redirected (a 307's empty
            # body is no answer to an API client, whose POST may not follow it).
            scope = {**scope, "path": path.rstrip("/") or "/"}
        if scope["type"] == "http" and scope["method"] == "POST":
            session = chat_path_session(scope["path"])
            if session is not False:
                scope["app"] = self
                if isinstance(session, str):
                    scope["path_params"] = {"session": session}
                await self._chat(scope, receive, send)
                return
        await super().__call__(scope, receive, send)

    async def _chat(self, scope: Scope, receive: Receive, send: Send) -> None:
        response: Response | PlainAnswer
        state = self.state
        try:
            result = await scope_step(state.engine, state.client_keys, state.auth_throttle, scope, receive)
            # A whole answer, the common case, is sent without building a Starlette `Response`.
            if isinstance(result, Answer):
                response = PlainAnswer(result)
            else:
                response = result if isinstance(result, Response) else chat_response(result)
        except GatewayError as exc:
            response = error_response(exc)
        except Exception as exc:
            response = await _unexpected(Request(scope, receive), exc)
        await response(scope, receive, send)

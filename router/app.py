"""The ASGI application: routes on plain Starlette routing (no per-request dependency
injection, no generic middleware) and one place that turns errors into HTTP answers."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from router.api.chat import chat_completions
from router.api.messages import count_tokens, messages
from router.api.models import list_models, model_info, reachable
from router.api.ops import healthz, log_upstreams, metrics, readyz
from router.api.responses import responses
from router.api.trajectories import get_trajectory, list_trajectories, post_outcome
from router.api.view import ui_home, ui_login, ui_login_form, ui_logout, ui_trajectory
from router.errors import GatewayError, error_body
from router.pipeline import Gateway
from router.privacy import backends as privacy_backends
from router.settings import Settings, admin_keys, load_settings

log = logging.getLogger("tandem")

# Every API path is served with the /v1 prefix, without it, and under /s/{session}/v1, where
# the path names the trajectory (works with every client that takes a base URL).
API_PREFIXES = ("/v1", "", "/s/{session}/v1", "/s/{session}")


def _routes() -> list[BaseRoute]:
    routes: list[BaseRoute] = []
    for prefix in API_PREFIXES:
        routes.append(Route(f"{prefix}/chat/completions", chat_completions, methods=["POST"]))
        routes.append(Route(f"{prefix}/models", list_models, methods=["GET"]))
        routes.append(Route(f"{prefix}/model/info", model_info, methods=["GET"]))
        routes.append(Route(f"{prefix}/messages", messages, methods=["POST"]))
        routes.append(Route(f"{prefix}/responses", responses, methods=["POST"]))
        routes.append(Route(f"{prefix}/messages/count_tokens", count_tokens, methods=["POST"]))
    routes += [
        Route("/v1/trajectories", list_trajectories, methods=["GET"]),
        Route("/v1/trajectories/{trajectory_id}", get_trajectory, methods=["GET"]),
        Route("/v1/trajectories/{trajectory_id}/outcome", post_outcome, methods=["POST"]),
        Route("/healthz", healthz, methods=["GET"]),
        # Claude Code checks that its base URL answers (HEAD / and HEAD /api/hello).
        Route("/", reachable, methods=["GET", "HEAD"]),
        Route("/api/hello", reachable, methods=["GET", "HEAD"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
        # The operator's view (off unless ui.enabled): router/api/view.py.
        Route("/ui", ui_home, methods=["GET"]),
        Route("/ui/t/{trajectory_id}", ui_trajectory, methods=["GET"]),
        Route("/ui/login", ui_login_form, methods=["GET"]),
        Route("/ui/login", ui_login, methods=["POST"]),
        Route("/ui/logout", ui_logout, methods=["POST"]),
    ]
    return routes


async def _gateway_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, GatewayError)
    return exc.to_response()


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 405:
        message = f"method {request.method} is not allowed on {request.url.path}"
    elif exc.status_code == 404:
        message = f"no endpoint at {request.url.path}; the API is under /v1 (chat/completions, models)"
    else:
        message = str(exc.detail)
    return Response(
        error_body(message, "invalid_request_error", "not_found" if exc.status_code == 404 else "bad_method"),
        status_code=exc.status_code,
        media_type="application/json",
    )


async def _unexpected(request: Request, exc: Exception) -> Response:
    if isinstance(exc, ClientDisconnect):
        # The client left mid-body (or the server dropped it for limits.body_timeout_s): there
        # is nobody to answer and nothing unexpected.
        return Response(status_code=499)
    log.exception("unexpected error on %s %s", request.method, request.url.path)
    return Response(
        error_body(f"internal error in the gateway: {type(exc).__name__}", "server_error", "internal_error"),
        status_code=500,
        media_type="application/json",
    )


def create_app(settings: Settings) -> Starlette:
    privacy_backends.enable(list(settings.privacy_backends))
    gateway = Gateway(settings)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await gateway.start()
        # Whether each upstream answers and takes our key, logged once at start (in the
        # background: a slow upstream must not hold the start up).
        report = asyncio.create_task(log_upstreams(gateway))
        # The start-up heap never becomes garbage: keep the collector from walking it again
        # and again (full collections of it cost tens of milliseconds under load).
        gc.collect()
        gc.freeze()
        # Fewer young-generation collections: a step allocates many short-lived objects, and
        # the default threshold (700) made collections a visible share of the time at load.
        gc.set_threshold(20_000, 20, 100)
        try:
            yield
        finally:
            report.cancel()
            await gateway.close()

    # Plain Starlette: FastAPI's own middlewares ran on every request although no route uses its
    # parameter solving (the overhead benchmark's profile); the gateway needs none of them.
    app = TandemApp(
        routes=_routes(),
        lifespan=lifespan,
        exception_handlers={
            GatewayError: _gateway_error,
            HTTPException: _http_error,
            Exception: _unexpected,
        },
    )
    app.state.gateway = gateway
    app.state.client_keys = settings.client_keys()
    app.state.admin_keys = admin_keys(settings)
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


class TandemApp(Starlette):
    """Starlette, with the chat-completions path served without the generic routing and
    exception middlewares (a tenth of a step's CPU in the overhead profile); every other path,
    and every error there, goes the usual way."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
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
        request = Request(scope, receive)
        try:
            response = await chat_completions(request)
        except GatewayError as exc:
            response = exc.to_response()
        except Exception as exc:
            response = await _unexpected(request, exc)
        await response(scope, receive, send)


CONFIG_ENV = "TANDEM_CONFIG"


def app_from_environment() -> Starlette:
    """Factory for uvicorn workers: each worker process reads the config file named in
    TANDEM_CONFIG (set by `tandem serve`) and the environment."""
    path = os.environ.get(CONFIG_ENV)
    return create_app(load_settings(Path(path) if path else None))

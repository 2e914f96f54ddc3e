"""API surfaces by feature: each folder `surfaces/<name>/` is one surface, holding its wire
types, its translation to and from a chat step, and its handler, and names what it serves in
`ROUTES` (path under the API prefix, endpoint, methods). router/app.py serves every surface
found here under each API prefix (`/v1`, none, `/s/{session}/v1`…), so a new surface is its
folder alone: `messages/` (Anthropic Messages, Claude Code) and `responses/` (OpenAI Responses,
Codex CLI) are two. What surfaces share stays out of their folders: a translated surface's
handler is `router.api.translated.serve` with its `Surface`, and the wire pieces under it are in
router/protocol/ (SSE chunk translation, typed fields, usage, upstream errors, a body's turns
parsed from the last one).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

Endpoint = Callable[[Request], Awaitable[Response]]
# (path under the API prefix, endpoint, HTTP methods)
SurfaceRoute = tuple[str, Endpoint, list[str]]
# A surface's error body for a status and an OpenAI error object (`ERROR_BODY` in its folder's
# `__init__`; a surface without one answers errors in OpenAI's shape).
ErrorBody = Callable[[int, dict[str, Any]], bytes]


def surface_routes() -> list[SurfaceRoute]:
    """Every surface folder's `ROUTES`, in the folders' name order (a path served twice is an error)."""
    found: list[SurfaceRoute] = []
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name):
        if not module_info.ispkg:
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        found.extend(getattr(module, "ROUTES", ()))
    paths = [path for path, _, _ in found]
    twice = sorted({path for path in paths if paths.count(path) > 1})
    if twice:
        raise ValueError(f"surfaces serve a path twice: {', '.join(twice)}")
    return found


def surface_error_bodies() -> dict[Endpoint, ErrorBody]:
    """Each endpoint of a surface that answers errors in its own shape (its folder's
    `ERROR_BODY`), with that shape: for errors its handler does not make itself (a 405)."""
    found: dict[Endpoint, ErrorBody] = {}
    for module_info in pkgutil.iter_modules(__path__):
        if not module_info.ispkg:
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        shape = getattr(module, "ERROR_BODY", None)
        if shape is not None:
            found.update((endpoint, shape) for _, endpoint, _ in getattr(module, "ROUTES", ()))
    return found

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

from starlette.requests import Request
from starlette.responses import Response

Endpoint = Callable[[Request], Awaitable[Response]]
# (path under the API prefix, endpoint, HTTP methods)
SurfaceRoute = tuple[str, Endpoint, list[str]]


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

"""Find the session id a request carries, in the order clients are known to send one."""

from __future__ import annotations

import uuid
from typing import Any

from starlette.datastructures import Headers

# Headers first (they survive every SDK), then body fields; see docs in the README.
SESSION_HEADERS = ("x-session-id", "x-claude-code-session-id", "session-id", "x-litellm-session-id")
SESSION_BODY_KEYS = ("session_id", "litellm_session_id")


def session_id(path_session: str | None, headers: Headers, body: dict[str, Any]) -> str | None:
    if path_session:
        return path_session
    for name in SESSION_HEADERS:
        value = headers.get(name)
        if value:
            return value
    for key in SESSION_BODY_KEYS:
        value = body.get(key)
        if isinstance(value, str) and value:
            return value
    metadata = body.get("metadata")
    if isinstance(metadata, dict):
        value = metadata.get("session_id")
        if isinstance(value, str) and value:
            return value
    value = body.get("prompt_cache_key")
    if isinstance(value, str) and value:
        return value
    return None


def new_trajectory_id() -> str:
    return f"traj-{uuid.uuid4().hex[:20]}"

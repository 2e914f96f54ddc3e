"""Sign-in sessions of the operator's view, kept on the server so that signing out ends them.

The login form's cookie names a session (a random id) and is signed with the admin key it was
made with; the session itself lives here until it expires or its user signs out. A cookie
copied before sign-out, or signed with a key since removed, opens nothing.

With Redis the sessions are shared by every worker and replica (`<prefix>ui:s:<hash>`, expiring
with the session), so a sign-out anywhere ends the session everywhere. Without Redis each
process keeps its own, bounded (`ui.max_sessions`, the oldest dropped first): run one worker, or
sign in with HTTP Basic auth. Only a hash of each id is stored: a dump of the store opens nothing.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import time
from collections import OrderedDict
from typing import Any

import redis.exceptions

from router.errors import GatewayError

log = logging.getLogger("tandem.ui")


def _digest(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()


class UISessions:
    def __init__(self, redis_client: Any | None, prefix: str = "tandem:", max_sessions: int = 10_000) -> None:
        self._redis = redis_client
        self._prefix = f"{prefix}ui:s:"
        self._max = max_sessions
        self._local: OrderedDict[str, float] = OrderedDict()  # digest -> unix expiry, oldest first

    async def create(self, lifetime_s: float) -> str:
        """A new session's id, valid for `lifetime_s`."""
        session_id = secrets.token_urlsafe(32)
        digest = _digest(session_id)
        if self._redis is None:
            now = time.time()
            for old, expires in list(self._local.items()):
                if expires > now and len(self._local) < self._max:
                    break
                del self._local[old]  # expired, or the oldest of a full table
            self._local[digest] = now + lifetime_s
            return session_id
        try:
            await self._redis.set(self._prefix + digest, "1", ex=max(int(lifetime_s), 1))
        except redis.exceptions.RedisError as exc:
            log.warning("ui: could not keep a sign-in session in Redis: %s", exc)
            raise GatewayError(
                503,
                "the session store (Redis) is unreachable; sign in with HTTP Basic auth and the admin key",
                type="server_error",
                code="ui_sessions_unavailable",
            ) from exc
        return session_id

    async def valid(self, session_id: str) -> bool:
        """Whether the session exists and has not expired (fails closed when Redis is out)."""
        digest = _digest(session_id)
        if self._redis is None:
            expires = self._local.get(digest)
            return expires is not None and expires > time.time()
        try:
            return bool(await self._redis.exists(self._prefix + digest))
        except redis.exceptions.RedisError as exc:
            log.warning("ui: could not check a sign-in session in Redis: %s", exc)
            return False

    async def revoke(self, session_id: str) -> None:
        """End the session: its cookie opens nothing from now on, wherever it is sent."""
        digest = _digest(session_id)
        self._local.pop(digest, None)
        if self._redis is not None:
            try:
                await self._redis.delete(self._prefix + digest)
            except redis.exceptions.RedisError as exc:
                log.warning("ui: could not end a sign-in session in Redis: %s", exc)
                raise GatewayError(
                    503,
                    "the session store (Redis) is unreachable: the sign-out did not take effect; try again",
                    type="server_error",
                    code="ui_sessions_unavailable",
                ) from exc

"""Client and admin API keys.

When client keys are configured, every API request must carry one, and the trajectories it
creates live in that key's namespace. When admin keys are configured, the trajectory API
needs one; without admin keys, a client key reads only its own namespace. A run's outcome is
the exception: its client may always post it (`outcome_scope`). Every failed check counts
against the client's address (`auth_throttle.py`), which is refused with 429 past a bound.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Mapping

from starlette.requests import Request
from starlette.types import Receive, Scope

from router.api.auth_throttle import AuthThrottle
from router.errors import GatewayError
from router.trajectory.identify import namespace_of


def _bearer(headers: Mapping[str, str]) -> str | None:
    """The client's key: `Authorization: Bearer …`, or Anthropic clients' `x-api-key`
    (`headers`: a request's, looked up by lower-case name)."""
    scheme, _, token = headers.get("authorization", "").partition(" ")
    token = token.strip()
    if scheme.lower() == "bearer" and token:
        return token
    return headers.get("x-api-key") or None


def _matches(token: str, keys: frozenset[str]) -> bool:
    # Compare against every key in constant time so that timing says nothing about a key.
    matched = False
    for key in keys:
        matched |= hmac.compare_digest(token.encode(), key.encode())
    return matched


def _throttle(request: Request) -> AuthThrottle:
    throttle: AuthThrottle = request.app.state.auth_throttle
    return throttle


def admin_key_matches(request: Request, token: str | None, keys: frozenset[str]) -> bool:
    """Whether `token` is one of the admin `keys`; a wrong or missing one counts against the
    request's address, and an address that failed too often gets 429 before its key is read."""
    _throttle(request).check(request, "admin")
    if token is not None and _matches(token, keys):
        return True
    _throttle(request).failed(request, "admin")
    return False


def check_client_key(request: Request, keys: frozenset[str], headers: Mapping[str, str] | None = None) -> str | None:
    """The client's key when keys are configured (401 without a valid one), else None.
    `headers`: the request's, already read into a dict (the chat path's), else read here."""
    if not keys:
        return None
    return _client_key(lambda: request, _throttle(request), keys, request.headers if headers is None else headers)


def _client_key(
    request_of: Callable[[], Request], throttle: AuthThrottle, keys: frozenset[str], headers: Mapping[str, str]
) -> str:
    """`check_client_key` with keys configured; `request_of` makes the request only where an
    address is needed: a failure to count, or an address to check while some are counted."""
    if throttle.counting:
        throttle.check(request_of(), "client")
    token = _bearer(headers)
    if token is None or not _matches(token, keys):
        throttle.failed(request_of(), "client")
        message = "missing API key: send 'Authorization: Bearer <key>'" if token is None else "invalid API key"
        raise GatewayError(401, message, code="invalid_api_key")
    return token


def client_namespace(request: Request, headers: Mapping[str, str] | None = None) -> str:
    key = check_client_key(request, request.app.state.client_keys, headers)
    return namespace_of(key)


def scope_namespace(
    scope: Scope, receive: Receive, headers: Mapping[str, str], keys: frozenset[str], throttle: AuthThrottle
) -> str:
    """`client_namespace` for the chat path, served without a Starlette `Request` (router/app.py):
    `headers`, the request's read into a dict; a `Request` is made only where the throttle
    needs the client's address."""
    if not keys:
        return namespace_of(None)
    return namespace_of(_client_key(lambda: Request(scope, receive), throttle, keys, headers))


def trajectory_scope(request: Request) -> str | None:
    """The namespace a caller of the trajectory API may read; None means every namespace."""
    admin_keys: frozenset[str] = request.app.state.admin_keys
    client_keys: frozenset[str] = request.app.state.client_keys
    if admin_keys:
        if admin_key_matches(request, _bearer(request.headers), admin_keys):
            return None
        message = "the trajectory API needs an admin key: send 'Authorization: Bearer <admin key>'"
        raise GatewayError(401, message, code="invalid_api_key")
    if client_keys:
        return namespace_of(check_client_key(request, client_keys))
    return None


def outcome_scope(request: Request) -> str | None:
    """The namespace whose trajectories a caller may post the outcome of; None means any.

    An admin key may close any trajectory. A client closes its own runs (an agent reports how
    its run ended, and the judge learns from it), admin keys or not: a client key, the
    trajectories of its namespace; another client's trajectory is not found (404). Without
    client keys every caller is the same anonymous client, as on the chat API."""
    admin_keys: frozenset[str] = request.app.state.admin_keys
    client_keys: frozenset[str] = request.app.state.client_keys
    if admin_keys:
        _throttle(request).check(request, "admin")
    token = _bearer(request.headers)
    if admin_keys and token is not None and _matches(token, admin_keys):
        return None
    if client_keys:
        return namespace_of(check_client_key(request, client_keys))
    return namespace_of(None) if admin_keys else None

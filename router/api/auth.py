"""Client API keys: when any are configured, every API request must carry one."""

from __future__ import annotations

import hmac

from starlette.requests import Request

from router.errors import GatewayError


def check_client_key(request: Request, keys: frozenset[str]) -> None:
    if not keys:
        return
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise GatewayError(401, "missing API key: send 'Authorization: Bearer <key>'", code="invalid_api_key")
    token = token.strip()
    # Compare against every key in constant time so that timing says nothing about a key.
    matched = False
    for key in keys:
        matched |= hmac.compare_digest(token.encode(), key.encode())
    if not matched:
        raise GatewayError(401, "invalid API key", code="invalid_api_key")

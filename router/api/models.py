"""`GET /v1/models`: the route names a client may ask for."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from router.api.auth import check_client_key
from router.pipeline import Gateway
from router.wire import json_response


async def list_models(request: Request) -> Response:
    gateway: Gateway = request.app.state.gateway
    check_client_key(request, request.app.state.client_keys)
    data = [{"id": name, "object": "model", "created": 0, "owned_by": "tandem"} for name in gateway.routes]
    return json_response({"object": "list", "data": data})

"""`GET /v1/models`: the route names a client may ask for, and `GET /v1/trajectories/{id}`."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from router.api.auth import check_client_key
from router.errors import GatewayError
from router.pipeline import Gateway
from router.wire import json_response


async def list_models(request: Request) -> Response:
    gateway: Gateway = request.app.state.gateway
    check_client_key(request, request.app.state.client_keys)
    data = [{"id": name, "object": "model", "created": 0, "owned_by": "tandem"} for name in gateway.routes]
    return json_response({"object": "list", "data": data})


async def get_trajectory(request: Request) -> Response:
    gateway: Gateway = request.app.state.gateway
    check_client_key(request, request.app.state.client_keys)
    trajectory_id = request.path_params["trajectory_id"]
    state = gateway.store.get(trajectory_id)
    if state is None:
        raise GatewayError(404, f"no trajectory {trajectory_id!r} is known", code="trajectory_not_found")
    records = [r.as_dict() for r in state.records]
    return json_response(
        {
            "id": trajectory_id,
            "steps": state.steps,
            "cloud_steps": sum(1 for r in state.records if r.target == "cloud"),
            "cost_usd": sum(r.cost_usd for r in state.records),
            "cloud_cost_usd": sum(r.cloud_cost_usd for r in state.records),
            "records": records,
        }
    )

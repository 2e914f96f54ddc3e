"""`GET /v1/models` and `GET /v1/models/{id}`: the route names a client may ask for."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from router.aliases import listed_models
from router.api.auth import check_client_key
from router.api.http import json_response
from router.engine import Engine


def _card(name: str) -> dict[str, object]:
    return {
        "id": name,
        "object": "model",
        "created": 0,
        "owned_by": "tandem",
        "type": "model",
        "display_name": name,
        "created_at": "1970-01-01T00:00:00Z",
    }


async def get_model(request: Request) -> Response:
    """`GET /v1/models/{id}`: the model object of a name a client may ask for (a route, or a
    name an alias matches, or any name when unknown names have a route); an unknown name is the
    same OpenAI-shaped 404 (`model_not_found`) a chat request for it gets."""
    engine: Engine = request.app.state.engine
    check_client_key(request, request.app.state.client_keys)
    name = request.path_params["model_id"]
    engine.route_for(name)  # raises the 404
    return json_response(_card(name))


async def list_models(request: Request) -> Response:
    """One answer both the OpenAI and the Anthropic SDKs read (Claude Code asks with
    `?limit=1000` and reads `data[].id`, `has_more`); there is one page, whatever the limit."""
    engine: Engine = request.app.state.engine
    check_client_key(request, request.app.state.client_keys)
    data = [_card(name) for name in listed_models(engine.routes, engine.settings.model_aliases)]
    first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
    return json_response({"object": "list", "data": data, "has_more": False, "first_id": first, "last_id": last})


async def reachable(request: Request) -> Response:
    return Response(b"", status_code=200)


async def model_info(request: Request) -> Response:
    """`GET /v1/model/info` in LiteLLM proxy's shape: OpenHands asks it for `litellm_proxy/`
    models. Each route is a chat model; its prices are the cloud's (the most a step can cost)."""
    engine: Engine = request.app.state.engine
    check_client_key(request, request.app.state.client_keys)
    prices = engine.settings.upstreams["cloud"].prices
    data = [
        {
            "model_name": name,
            "litellm_params": {"model": f"openai/{name}"},
            "model_info": {
                "id": name,
                "mode": "chat",
                "litellm_provider": "openai",
                "input_cost_per_token": prices.input / 1e6,
                "output_cost_per_token": prices.output / 1e6,
                "supports_function_calling": True,
                "supports_tool_choice": True,
            },
        }
        for name in listed_models(engine.routes, engine.settings.model_aliases)
    ]
    return json_response({"data": data})

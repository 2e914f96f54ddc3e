"""The management API as `/openapi.json` and `/docs` describe it: pydantic models of what the
trajectory, outcome, models and health endpoints answer and take, and the FastAPI routes that
declare them.

The handlers stay as they are (`(request) -> Response`, their own parsing and OpenAI-shaped
errors): FastAPI passes a returned Response through untouched, so these models document the
answers without validating them again, and the outcome's body is described here but read by the
handler (a 422 in FastAPI's own shape would break the OpenAI-shaped errors clients parse).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from router.api.models import get_model, list_models, model_info
from router.api.ops import healthz, readyz
from router.api.trajectories import MAX_LIMIT, MAX_ROUTE_CHARS, get_trajectory, list_trajectories, post_outcome
from router.trajectory.identify import MAX_ID_CHARS

Handler = Callable[[Request], Awaitable[Response]]


class ErrorDetail(BaseModel):
    message: str
    type: str
    code: str | None
    param: str | None


class ErrorBody(BaseModel):
    """Every error, OpenAI-shaped."""

    error: ErrorDetail


class Health(BaseModel):
    status: Literal["ok"]


class ReplicaReadiness(BaseModel):
    reachable: bool
    authorised: bool | None = Field(description="whether it took the gateway's key (null when unreachable)")
    detail: str
    base_url: str = Field(description="without user:password@ and query")
    model: str
    available: bool = Field(description="its breaker lets steps through")


class UpstreamReadiness(BaseModel):
    reachable: bool = Field(description="for an edge pool: any of its replicas")
    authorised: bool | None = Field(description="whether it took the gateway's key (null when unreachable)")
    detail: str
    base_url: str = Field(description="without user:password@ and query (an edge pool's first replica)")
    model: str
    replicas: list[ReplicaReadiness] | None = Field(
        None, description="an edge pool's replicas (upstreams.edge.endpoints), each as probed"
    )


class StoreReadiness(BaseModel):
    shared: bool = Field(description="the trajectory store is Redis (redis_url), shared by the replicas")
    available: bool = Field(description="the shared store answers (false during an outage)")


class Readiness(BaseModel):
    ready: bool = Field(
        description="any upstream reachable and, with redis_failure: refuse, the shared store available (503 otherwise)"
    )
    reason: str | None = Field(None, description="why the process is not ready (only then)")
    upstreams: dict[str, UpstreamReadiness]
    store: StoreReadiness
    audit: Literal["off", "ok", "failing"]


class ModelCard(BaseModel):
    id: str
    object: Literal["model"]
    created: int
    owned_by: str
    type: Literal["model"]
    display_name: str
    created_at: str


class ModelList(BaseModel):
    object: Literal["list"]
    data: list[ModelCard]
    has_more: bool
    first_id: str | None
    last_id: str | None


class LiteLLMParams(BaseModel):
    model: str


class LiteLLMModelInfo(BaseModel):
    id: str
    mode: Literal["chat"]
    litellm_provider: str
    input_cost_per_token: float
    output_cost_per_token: float
    supports_function_calling: bool
    supports_tool_choice: bool


class ModelInfoEntry(BaseModel):
    model_name: str
    litellm_params: LiteLLMParams
    model_info: LiteLLMModelInfo


class ModelInfoList(BaseModel):
    """LiteLLM proxy's shape (OpenHands reads it)."""

    data: list[ModelInfoEntry]


class Outcome(BaseModel):
    success: bool | None
    score: float | None
    labels: dict[str, str]
    at: float


class TrajectorySummary(BaseModel):
    """A trajectory's totals; the step counters and token sums are described in docs/concepts.md."""

    model_config = ConfigDict(extra="allow")

    id: str
    route: str
    task: str | None
    created_at: float
    updated_at: float
    steps: int
    cost_usd: float
    counterfactual_usd: float
    savings_usd: float
    cloud_share: float
    closed_at: float | None
    close_reason: str | None
    outcome: Outcome | None
    notes: dict[str, Any]


class TrajectoryList(BaseModel):
    object: Literal["list"]
    data: list[TrajectorySummary]
    next_before: float | None = Field(description="pass as `before` for the next page; null on the last")


class FailedCallView(BaseModel):
    """An upstream call of the step that failed: the target, how it failed (connect, timeout,
    disconnected, status, invalid_answer) and the upstream's status, when it gave one."""

    target: str
    kind: str
    http_status: int | None


class StepRecordView(BaseModel):
    """One step of the ledger (more fields than listed: usage, cost, latency, inner calls…)."""

    model_config = ConfigDict(extra="allow")

    trajectory_id: str
    step: int
    attempt: int
    at: float
    route: str
    target: str = Field(description="the upstream called last (or the decision's, when none was): where the money went")
    decided: str = Field(description="the target the decision chose (the first called)")
    answered_by: str = Field(
        description="the target that answered, after any failover; none for a step refused, failed or cancelled. "
        "The trajectory's cloud share, the metrics' step counts and the operator's view count steps by it"
    )
    fallback: bool = Field(description="the other target was called after a failure")
    failures: list[FailedCallView] = Field(description="the step's failed upstream calls, in order")
    reason: str
    score: float | None
    model: str


class TrajectoryDetail(TrajectorySummary):
    privacy: dict[str, Any]
    records: list[StepRecordView]


class OutcomeRequest(BaseModel):
    """At least one of `success` and `score`; the first outcome posted stands (409 after)."""

    model_config = ConfigDict(extra="forbid")

    success: bool | None = None
    score: float | None = Field(None, ge=0, le=1)
    labels: dict[str, str] = Field(default_factory=dict)


def _errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return {status: {"model": ErrorBody} for status in statuses}


def _query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": description}


TIME = {"type": "string", "description": "unix seconds or an ISO 8601 time"}
TRAJECTORY_ID = {
    "name": "trajectory_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "minLength": 1, "maxLength": MAX_ID_CHARS},
}
MODEL_ID = {
    "name": "model_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "minLength": 1, "maxLength": 200},
}
LIST_PARAMETERS = [
    _query("limit", {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": 50}, "page size"),
    _query("before", TIME, "runs last updated before this time (the previous page's next_before)"),
    _query("since", TIME, "runs last updated at or after this time"),
    _query("until", TIME, "runs last updated at or before this time"),
    _query("route", {"type": "string", "minLength": 1, "maxLength": MAX_ROUTE_CHARS}, "only this route's runs"),
]
OUTCOME_BODY = {
    "required": True,
    "content": {"application/json": {"schema": OutcomeRequest.model_json_schema()}},
}


def _get(path: str, endpoint: Handler, model: type[BaseModel], tag: str, **extra: Any) -> list[BaseRoute]:
    """A documented GET, and HEAD on the same handler (Starlette's `Route` answered HEAD for GET)."""
    return [
        APIRoute(path, endpoint, methods=["GET"], response_model=model, tags=[tag], **extra),
        Route(path, endpoint, methods=["HEAD"], include_in_schema=False),
    ]


def management_routes() -> list[BaseRoute]:
    """The trajectory API, the model listings and the health checks, declared for the schema."""
    keyed = _errors(401)
    return [
        *_get("/v1/models", list_models, ModelList, "models", responses=keyed, summary="Route names to ask for"),
        *_get(
            "/v1/models/{model_id:path}",
            get_model,
            ModelCard,
            "models",
            responses=_errors(401, 404),
            openapi_extra={"parameters": [MODEL_ID]},
            summary="One model a client may ask for (404 model_not_found otherwise)",
        ),
        *_get("/v1/model/info", model_info, ModelInfoList, "models", responses=keyed, summary="Routes, LiteLLM-style"),
        *_get(
            "/v1/trajectories",
            list_trajectories,
            TrajectoryList,
            "trajectories",
            responses=_errors(400, 401),
            openapi_extra={"parameters": LIST_PARAMETERS},
            summary="Recent trajectories, newest first",
        ),
        *_get(
            "/v1/trajectories/{trajectory_id}",
            get_trajectory,
            TrajectoryDetail,
            "trajectories",
            responses=_errors(400, 401, 404),
            openapi_extra={"parameters": [TRAJECTORY_ID]},
            summary="One trajectory with its steps",
        ),
        APIRoute(
            "/v1/trajectories/{trajectory_id}/outcome",
            post_outcome,
            methods=["POST"],
            response_model=TrajectorySummary,
            tags=["trajectories"],
            responses=_errors(400, 401, 404, 409, 413, 415),
            openapi_extra={"parameters": [TRAJECTORY_ID], "requestBody": OUTCOME_BODY},
            summary="Post a run's outcome (once)",
            description="An admin key may close any run. A client key closes the runs it made, admin keys or not "
            "(another client's run is not found); without client keys, any caller may.",
        ),
        *_get("/healthz", healthz, Health, "health", summary="The process answers"),
        *_get(
            "/readyz",
            readyz,
            Readiness,
            "health",
            responses={
                503: {
                    "model": Readiness,
                    "description": "no upstream reachable, or the shared store out with redis_failure: refuse",
                }
            },
            summary="The gateway can serve",
        ),
    ]

"""The trajectory API: list recent runs, read one run's steps, post a run's outcome."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

from router.api.auth import trajectory_scope
from router.api.chat import read_body
from router.errors import GatewayError, bad_request
from router.pipeline import Gateway
from router.privacy.guard import exposure_summary
from router.trajectory.identify import is_valid_id
from router.trajectory.state import ListQuery, Outcome, Trajectory
from router.wire import json_response

MAX_LIMIT = 500


def parse_time(value: str, name: str) -> float:
    """Unix seconds or an ISO 8601 time (UTC when no zone is given)."""
    try:
        return float(value)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise bad_request(f"'{name}' must be unix seconds or an ISO 8601 time, got {value!r}", param=name) from exc
    if moment.tzinfo is None:
        return moment.replace(tzinfo=datetime.now().astimezone().tzinfo).timestamp()
    return moment.timestamp()


def _query(request: Request, namespace: str | None) -> ListQuery:
    params = request.query_params
    limit_text = params.get("limit", "50")
    if not limit_text.isdigit() or not 1 <= int(limit_text) <= MAX_LIMIT:
        raise bad_request(f"'limit' must be a whole number from 1 to {MAX_LIMIT}, got {limit_text!r}", param="limit")
    times = {name: parse_time(params[name], name) for name in ("before", "since", "until") if name in params}
    return ListQuery(limit=int(limit_text), route=params.get("route"), namespace=namespace, **times)


async def _visible(gateway: Gateway, request: Request) -> Trajectory:
    scope = trajectory_scope(request)
    trajectory_id = request.path_params["trajectory_id"]
    if not is_valid_id(trajectory_id):
        raise bad_request("a trajectory id is 1 to 200 characters of letters, digits and . _ : @ + = ~ -", param="id")
    await gateway.tracker.recorder.flush()
    trajectory = await gateway.tracker.store.get(trajectory_id)
    if trajectory is None or (scope is not None and trajectory.namespace != scope):
        raise GatewayError(404, f"no trajectory {trajectory_id!r} is known", code="trajectory_not_found")
    return trajectory


async def list_trajectories(request: Request) -> Response:
    gateway: Gateway = request.app.state.gateway
    query = _query(request, trajectory_scope(request))
    await gateway.tracker.recorder.flush()
    found = await gateway.tracker.store.recent(query)
    next_before = found[-1].updated_at if len(found) == query.limit else None
    return json_response({"object": "list", "data": [t.as_dict() for t in found], "next_before": next_before})


async def get_trajectory(request: Request) -> Response:
    gateway: Gateway = request.app.state.gateway
    trajectory = await _visible(gateway, request)
    records = await gateway.tracker.store.records(trajectory.id)
    privacy = exposure_summary(trajectory.notes, gateway.settings.privacy_weights)
    return json_response({**trajectory.as_dict(), "privacy": privacy, "records": [r.as_dict() for r in records]})


def _outcome(body: bytes) -> Outcome:
    try:
        data: Any = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise bad_request(f"request body is not valid JSON: {exc}", code="invalid_json") from exc
    if not isinstance(data, dict):
        raise bad_request("the outcome must be a JSON object with 'success' and/or 'score'")
    unknown = set(data) - {"success", "score", "labels"}
    if unknown:
        raise bad_request(f"unknown outcome field(s): {', '.join(sorted(unknown))}")
    success, score, labels = data.get("success"), data.get("score"), data.get("labels") or {}
    if success is None and score is None:
        raise bad_request("the outcome needs 'success' (true/false) and/or 'score' (0 to 1)")
    if success is not None and not isinstance(success, bool):
        raise bad_request("'success' must be true or false", param="success")
    if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1):
        raise bad_request("'score' must be a number from 0 to 1", param="score")
    if not isinstance(labels, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
        raise bad_request("'labels' must be an object of string values", param="labels")
    return Outcome(success, None if score is None else float(score), labels, time.time())


async def post_outcome(request: Request) -> Response:
    gateway: Gateway = request.app.state.gateway
    trajectory = await _visible(gateway, request)
    outcome = _outcome(await read_body(request, 64 * 1024))
    if not await gateway.tracker.store.set_outcome(trajectory.id, outcome):
        raise GatewayError(
            409,
            f"trajectory {trajectory.id!r} already has an outcome; the first one stands",
            code="outcome_exists",
        )
    await gateway.tracker.close(trajectory.id, "outcome")
    updated = await gateway.tracker.store.get(trajectory.id)
    assert updated is not None
    return json_response(updated.as_dict())

"""The trajectory API: list recent runs, read one run's steps, post a run's outcome."""

from __future__ import annotations

import math
import time
from datetime import datetime
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

from router.api.auth import outcome_scope, trajectory_scope
from router.api.chat import read_body
from router.api.http import json_response
from router.api.query import decimal_number, known_only, single, whole_param
from router.engine import Engine
from router.errors import GatewayError, bad_request
from router.privacy.guard import exposure_summary, vault_of
from router.protocol.chat import not_json
from router.protocol.fields import shown
from router.protocol.numbers import whole_number
from router.trajectory.children import CHILD_NOTE, PARENT_NOTE
from router.trajectory.identify import MAX_ID_CHARS, is_valid_id
from router.trajectory.state import ListQuery, Outcome, Trajectory

MAX_LIMIT = 500
# Times are unix seconds from 1970 to the end of year 9999: anything else (nan, inf, a negative or
# astronomic number) is a mistake to report, and must never reach the store as a query.
MAX_TIME = 253_402_300_799.0
MAX_ROUTE_CHARS = 200
LIST_PARAMS = ("limit", "before", "since", "until", "route")


def parse_time(value: str, name: str) -> float:
    """Unix seconds (ASCII digits, a decimal point, an exponent) or an ISO 8601 time (UTC
    when no zone is given), from 1970 to 9999."""
    seconds = decimal_number(value)
    if seconds is None:
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=datetime.now().astimezone().tzinfo)
            seconds = moment.timestamp()
        except (ValueError, OverflowError, OSError) as exc:
            raise bad_request(
                f"'{name}' must be unix seconds or an ISO 8601 time, got {value[:80]!r}", param=name
            ) from exc
    if not math.isfinite(seconds) or not 0 <= seconds <= MAX_TIME:
        raise bad_request(
            f"'{name}' must be a time from 1970 to 9999 (unix seconds 0 to {MAX_TIME:.0f}), got {value[:80]!r}",
            param=name,
        )
    return seconds


def no_query(request: Request) -> None:
    """Endpoints that take no query parameters say so rather than ignore them."""
    if request.query_params:
        name = next(iter(request.query_params.keys()))
        raise bad_request(f"this endpoint takes no query parameters, got '{name[:80]}'", param=name[:80])


def _query(request: Request, namespace: str | None) -> ListQuery:
    known_only(request, LIST_PARAMS)
    limit = whole_param(single(request, "limit") or "50", "limit", 1, MAX_LIMIT)
    times: dict[str, float] = {}
    for name in ("before", "since", "until"):
        text = single(request, name)
        if text is not None:
            times[name] = parse_time(text, name)
    route = single(request, "route")
    if route is not None and (not route or len(route) > MAX_ROUTE_CHARS or not route.isprintable()):
        raise bad_request(f"'route' must be a route name of 1 to {MAX_ROUTE_CHARS} printable characters", param="route")
    return ListQuery(limit=limit, route=route, namespace=namespace, **times)


async def _visible(engine: Engine, request: Request, scope: str | None) -> Trajectory:
    no_query(request)
    trajectory_id = request.path_params["trajectory_id"]
    if not is_valid_id(trajectory_id):
        raise bad_request(
            f"a trajectory id is 1 to {MAX_ID_CHARS} characters of letters, digits and . _ : @ + = ~ -", param="id"
        )
    await engine.tracker.recorder.flush()
    trajectory = await engine.tracker.store.get(trajectory_id)
    if trajectory is None or (scope is not None and trajectory.namespace != scope):
        raise GatewayError(404, f"no trajectory {shown(trajectory_id)} is known", code="trajectory_not_found")
    return trajectory


async def list_trajectories(request: Request) -> Response:
    engine: Engine = request.app.state.engine
    query = _query(request, trajectory_scope(request))
    await engine.tracker.recorder.flush()
    found = await engine.tracker.store.recent(query)
    next_before = found[-1].updated_at if len(found) == query.limit else None
    return json_response({"object": "list", "data": [t.as_dict() for t in found], "next_before": next_before})


async def get_trajectory(request: Request) -> Response:
    engine: Engine = request.app.state.engine
    trajectory = await _visible(engine, request, trajectory_scope(request))
    records = await engine.tracker.store.records(trajectory.id)
    privacy = exposure_summary(await vault_of(engine.tracker.store, trajectory), engine.settings.privacy_weights)
    family = await family_of(engine, trajectory)
    return json_response(
        {**trajectory.as_dict(), **family, "privacy": privacy, "records": [r.as_dict() for r in records]}
    )


MAX_DESCENT = 8  # levels of sub-agents whose cost is added up (a sub-agent's sub-agent is 2)


async def family_of(engine: Engine, trajectory: Trajectory) -> dict[str, Any]:
    """A sub-agent's parent (id and step), and a run's children (router/trajectory/children.py)
    with their cost, shown apart and added to the run's own; a child's cost with its own
    children's, down to `MAX_DESCENT` levels."""
    out: dict[str, Any] = {}
    parent = trajectory.notes.get(PARENT_NOTE)
    if parent:
        parent_id, _, step = parent.partition(" ")
        out["parent"] = {"id": parent_id, "step": whole_number(step)}
    children = await _children(engine, trajectory, MAX_DESCENT, {trajectory.id})
    if children:
        spent = sum(float(child["cost_with_children_usd"]) for child in children)
        out["children"] = children
        out["children_cost_usd"] = spent
        out["cost_with_children_usd"] = trajectory.money["cost_usd"] + spent
    return out


async def _children(engine: Engine, trajectory: Trajectory, depth: int, seen: set[str]) -> list[dict[str, Any]]:
    """A trajectory's children, each with its own cost and its cost with its descendants'."""
    children: list[dict[str, Any]] = []
    for key, step in sorted(trajectory.notes.items()):
        child_id = key[len(CHILD_NOTE) :]
        if not key.startswith(CHILD_NOTE) or child_id in seen:
            continue
        seen.add(child_id)  # a link back up (two runs noting each other) is counted once
        child = await engine.tracker.store.get(child_id)
        if child is None:
            continue
        below = await _children(engine, child, depth - 1, seen) if depth > 1 else []
        own = child.money["cost_usd"]
        children.append(
            {
                "id": child.id,
                "parent_step": int(step),
                "steps": child.steps,
                "cost_usd": own,
                "children": len(below),
                "cost_with_children_usd": own + sum(float(c["cost_with_children_usd"]) for c in below),
            }
        )
    return children


def _outcome(body: bytes) -> Outcome:
    try:
        data: Any = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise not_json(body, exc) from exc
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
    engine: Engine = request.app.state.engine
    # The run's own client may post it, admin keys or not (router/api/auth.py).
    trajectory = await _visible(engine, request, outcome_scope(request))
    outcome = _outcome(await read_body(request, 64 * 1024, setting="an outcome's fixed limit"))
    if not await engine.tracker.store.set_outcome(trajectory.id, outcome):
        raise GatewayError(
            409,
            f"trajectory {trajectory.id!r} already has an outcome; the first one stands",
            code="outcome_exists",
        )
    await engine.tracker.close(trajectory.id, "outcome")
    updated = await engine.tracker.store.get(trajectory.id)
    assert updated is not None
    return json_response(updated.as_dict())

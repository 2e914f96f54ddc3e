"""`tandem trajectories export`: the step dataset the judge trains on, one JSON line a step.

Schema `tandem.step/1` (each line): `schema`, every field of a step record (see
`StepRecord.as_dict`: trajectory_id, step, attempt, at, route, target, reason, score, model,
fallback, status, http_status, usage, usage_estimated, cost_usd, counterfactual_usd,
savings_usd, latency_s, ttft_s, tools, error_signals, error), and of its trajectory: `task`,
`trajectory_steps`, `outcome` ({success, score, labels, at} or null). Read from a running
gateway's API, or straight from Redis.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import orjson

from router.ledger import StepRecord
from router.trajectory.redis_store import RedisStore
from router.trajectory.state import ListQuery, Trajectory

SCHEMA = "tandem.step/1"
PAGE = 200


JUDGE_ROW_SCHEMA = "tandem.judge-row/1"


def judge_row(trajectory: dict[str, Any], record: dict[str, Any]) -> bytes | None:
    """A judge training row (judge/README.md) for a step recorded with its features; the labels
    come later (`tandem judge label`, or outcome credit from the `outcome` field)."""
    if record.get("features") is None:
        return None
    from judge.features import FEATURE_VERSION

    row = {
        "schema": JUDGE_ROW_SCHEMA,
        "trajectory_id": record["trajectory_id"],
        "step": record["step"],
        "feature_version": FEATURE_VERSION,
        "features": record["features"],
        "target": record["target"],
        "edge_wrong": None,
        "teacher_label": None,
        "outcome": trajectory.get("outcome"),
    }
    return orjson.dumps(row) + b"\n"


def step_line(trajectory: dict[str, Any], record: dict[str, Any]) -> bytes:
    line = {
        "schema": SCHEMA,
        **record,
        "task": trajectory.get("task", ""),
        "trajectory_steps": trajectory.get("steps", 0),
        "outcome": trajectory.get("outcome"),
    }
    return orjson.dumps(line) + b"\n"


Line = Callable[[dict[str, Any], dict[str, Any]], bytes | None]


async def _from_api(url: str, since: float | None, api_key: str | None, line: Line) -> AsyncIterator[bytes]:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    async with httpx.AsyncClient(base_url=url.rstrip("/"), headers=headers, timeout=30) as client:
        params: dict[str, Any] = {"limit": PAGE}
        if since is not None:
            params["since"] = since
        while True:
            page = await client.get("/v1/trajectories", params=params)
            page.raise_for_status()
            listing = page.json()
            for summary in listing["data"]:
                detail = await client.get(f"/v1/trajectories/{summary['id']}")
                detail.raise_for_status()
                trajectory = detail.json()
                for record in trajectory["records"]:
                    written = line(trajectory, record)
                    if written is not None:
                        yield written
            if listing.get("next_before") is None:
                return
            params["before"] = listing["next_before"]


async def _from_redis(redis_url: str, prefix: str, since: float | None, line: Line) -> AsyncIterator[bytes]:
    store = RedisStore(redis_url, prefix)
    try:
        before: float | None = None
        while True:
            found: list[Trajectory] = await store.recent(ListQuery(limit=PAGE, before=before, since=since))
            for trajectory in found:
                summary = trajectory.as_dict()
                records: list[StepRecord] = await store.records(trajectory.id)
                for record in records:
                    written = line(summary, record.as_dict())
                    if written is not None:
                        yield written
            if len(found) < PAGE:
                return
            before = found[-1].updated_at
    finally:
        await store.aclose()


async def export(
    out: Path,
    *,
    url: str | None,
    redis_url: str | None,
    prefix: str,
    since: float | None,
    api_key: str | None,
    judge_rows: bool = False,
) -> int:
    make: Line = judge_row if judge_rows else step_line
    lines = _from_api(url, since, api_key, make) if url else _from_redis(redis_url or "", prefix, since, make)
    count = 0
    with out.open("wb") as handle:
        async for line in lines:
            handle.write(line)
            count += 1
    return count


def run_export(out: Path, **options: Any) -> int:
    """`export` from synchronous code (the CLI); the same keyword arguments."""
    return asyncio.run(export(out, **options))

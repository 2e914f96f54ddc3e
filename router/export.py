"""`tandem trajectories export`: the step dataset the judge trains on, one JSON line a step.

Schema `tandem.step/1` (each line): `schema`, every field of a step record (see
`StepRecord.as_dict`: trajectory_id, step, attempt, at, route, target, reason, score, model,
fallback, decided, answered_by, failures, status, http_status, usage, usage_estimated, cost_usd, counterfactual_usd,
savings_usd, latency_s, ttft_s, tools, error_signals, error), and of its trajectory: `task`,
`trajectory_steps`, `outcome` ({success, score, labels, at} or null), and `shadow` (the shadow
label of the step, router/shadow.py, or null). Read from a running gateway's API, or straight
from Redis.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import orjson

from judge.progress import Progress
from judge.written import replaced_on_success
from router import notes
from router.interruptible import run_interruptible
from router.ledger import StepRecord
from router.trajectory.redis_store import RedisStore
from router.trajectory.state import ListQuery, Trajectory

SCHEMA = "tandem.step/1"
PAGE = 200


JUDGE_ROW_SCHEMA = "tandem.judge-row/1"


def shadow_of(trajectory: dict[str, Any], step: int) -> dict[str, Any] | None:
    """The step's shadow label, kept as a trajectory note by the gateway; None without one."""
    raw = (trajectory.get("notes") or {}).get(notes.shadow(step))
    if not raw:
        return None
    try:
        entry = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return entry if isinstance(entry, dict) else None


def judge_row(
    trajectory: dict[str, Any], record: dict[str, Any], following: dict[str, Any] | None = None
) -> bytes | None:
    """A judge training row (judge/README.md) for a step recorded with its features.

    `following` is the record of the next step: the error signals in the tool results it was
    given are what this step's action produced, so they label whether the action failed
    (`action_failed`; null for a run's last step). Other labels come later (`tandem judge label`,
    outcome credit from the `outcome` field). A shadowed step carries `shadow` ({target, action,
    agree, cost_usd}) and `edge_wrong` (1 when the edge's action and the cloud's differ); one of a
    route that records no features takes them from its shadow label."""
    shadow = shadow_of(trajectory, int(record["step"]))
    if record.get("features") is None and shadow is not None and shadow.get("features") is not None:
        record = {**record, "features": shadow["features"], "action": record.get("action") or shadow.get("own_action")}
    if record.get("features") is None:
        return None
    from judge.draft import DRAFT_FEATURE_NAMES
    from judge.features import FEATURE_VERSION, N_FEATURES

    recorded = record["features"]
    # A `sees: draft` route records the state's features followed by the draft's.
    fits = len(recorded) in (N_FEATURES, N_FEATURES + len(DRAFT_FEATURE_NAMES))
    next_signals = following.get("error_signals") if following is not None else None
    # The harness-status label (judge/status.py) where the next record has it; an older record:
    # its error signals.
    failed = following.get("failed_before") if following is not None else None
    if failed is None and next_signals is not None:
        failed = int(bool(next_signals))
    row = {
        "schema": JUDGE_ROW_SCHEMA,
        "trajectory_id": record["trajectory_id"],
        "step": record["step"],
        # A record of other features (an older gateway) keeps no version: training refuses it.
        "feature_version": FEATURE_VERSION if fits else None,
        "features": recorded[:N_FEATURES] if fits else recorded,
        "draft_features": recorded[N_FEATURES:] if fits and len(recorded) > N_FEATURES else None,
        "target": record["target"],
        "task": trajectory.get("task", ""),
        "tools": record.get("tools", []),
        "error_signals": record.get("error_signals", []),
        "next_signals": next_signals,
        "action_failed": failed,
        "edge_wrong": None if shadow is None else int(not shadow.get("agree")),
        "teacher_label": None,
        "outcome": trajectory.get("outcome"),
    }
    # How a step without a client session id found its run: retraining leaves such runs out.
    for key in ("action", "excerpt", "stitch"):  # when the gateway records them
        if record.get(key) is not None:
            row[key] = record[key]
    if shadow is not None:
        row["shadow"] = {key: shadow.get(key) for key in ("target", "action", "agree", "cost_usd")}
    return orjson.dumps(row) + b"\n"


def with_following(records: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Each record with the last record of the next step (a client's retry repeats a step)."""
    last_of: dict[int, dict[str, Any]] = {}
    for record in records:
        last_of[int(record["step"])] = record
    return [(record, last_of.get(int(record["step"]) + 1)) for record in records]


def step_line(trajectory: dict[str, Any], record: dict[str, Any], following: dict[str, Any] | None = None) -> bytes:
    line = {
        "schema": SCHEMA,
        **record,
        "task": trajectory.get("task", ""),
        "trajectory_steps": trajectory.get("steps", 0),
        "outcome": trajectory.get("outcome"),
    }
    shadow = shadow_of(trajectory, int(record["step"]))
    # The shadow's features belong in a judge row; a step line keeps the label only.
    line["shadow"] = {k: v for k, v in shadow.items() if k != "features"} if shadow is not None else None
    return orjson.dumps(line) + b"\n"


Line = Callable[[dict[str, Any], dict[str, Any], dict[str, Any] | None], bytes | None]


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
                for record, following in with_following(trajectory["records"]):
                    written = line(trajectory, record, following)
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
                for record, following in with_following([r.as_dict() for r in records]):
                    written = line(summary, record, following)
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
    show_progress: bool = False,
) -> int:
    make: Line = judge_row if judge_rows else step_line
    lines = _from_api(url, since, api_key, make) if url else _from_redis(redis_url or "", prefix, since, make)
    count = 0
    bar = Progress(f"exporting to {out.name}", None, enabled=show_progress)
    # Whole or not at all: a gateway that stops answering halfway, or Ctrl-C, leaves no cut
    # file that looks like a finished export, nor truncates the export already there.
    with replaced_on_success(out) as handle:
        async for line in lines:
            handle.write(line)
            count += 1
            bar.advance()
    bar.close()
    return count


def run_export(out: Path, **options: Any) -> int:
    """`export` from synchronous code (the CLI); the same keyword arguments."""
    return run_interruptible(export(out, **options))

"""Step records in the memory store: packed, exact on the way back, bounded in bytes."""

from __future__ import annotations

import dataclasses
import gc
import tracemalloc
from collections.abc import Callable

import orjson

from router.audit.delta import DeltaEncoder
from router.ledger import InnerCall, StepRecord, Usage
from router.protocol.fields import kept_json
from router.trajectory.state import StepStart
from router.trajectory.store import MemoryStore


def _record(trajectory_id: str, step: int, **fields: object) -> StepRecord:
    values: dict[str, object] = {
        "trajectory_id": trajectory_id,
        "step": step,
        "route": "judge",
        "target": "edge",
        "reason": "judge_below_threshold",
        "score": 0.123456789,
        "model": "edge-model",
        "at": 1764500000.123456 + step,
        "usage": Usage(40_000 + step, 38_912, 120),
        "cost_usd": 0.00412,
        "counterfactual_usd": 0.0321,
        "counterfactual_cached_tokens": 38_912,
        "cache_prefix": (39_000, 1764499999.5),
        "latency_s": 0.123,
        "ttft_s": 0.051,
        "tools": ["bash"],
    }
    values.update(fields)
    return StepRecord(**values)  # type: ignore[arg-type]


def test_a_packed_record_comes_back_equal() -> None:
    records = [
        _record("ns:t", 1),
        _record(
            "ns:t",
            2,
            attempt=2,
            fallback=True,
            status="error",
            http_status=502,
            usage=Usage(10, 0, 1, source="estimated"),
            score=None,
            cache_prefix=None,
            error_signals=["traceback", "exit_code"],
            inner=[
                InnerCall("judge", "cloud", Usage(5, 1, 2), 0.5, "ok"),
                InnerCall("probe", "edge", None, 0.0, "error"),
            ],
            features=[0.1, -2.5, 1e-9, 3.0],
            exposed=["EMAIL"],
            redacted=4,
            error='upstream said "no" — ünïcode',
        ),
    ]
    for record in records:
        assert StepRecord.unpack(record.trajectory_id, record.pack()) == record


def test_every_field_survives_packing() -> None:
    """A field added to StepRecord is packed too: each field set to a value unlike its default."""
    record = _record("ns:t", 3)
    for item in dataclasses.fields(StepRecord):
        if item.name in ("trajectory_id", "step"):
            continue
        current = getattr(record, item.name)
        if isinstance(current, bool):
            changed: object = not current
        elif isinstance(current, (int, float)):
            changed = current + 7
        elif item.name == "usage":
            changed = Usage(3, 2, 1)
        elif item.name == "inner":
            changed = [InnerCall("verify", "cloud", Usage(1, 0, 1), 0.25, "ok")]
        elif item.name == "cache_prefix":
            changed = (120, 1700000000.5)
        elif item.name == "features":
            changed = [0.5, 1.5]
        elif item.name == "failures":
            changed = [("edge", "status", 503)]
        elif isinstance(current, list) or (current is None and item.name in ("tools", "exposed", "error_signals")):
            changed = ["x"]
        else:
            changed = f"{item.name}-value"
        record = dataclasses.replace(record, **{item.name: changed})
    back = StepRecord.unpack(record.trajectory_id, record.pack())
    assert back == record
    assert back.action == "action-value" and back.excerpt == "excerpt-value"


async def _fill(store: MemoryStore, trajectories: int, steps: int) -> None:
    for t in range(trajectories):
        trajectory_id = f"ns:traj-{t:05d}"
        for step in range(1, steps + 1):
            await store.begin_step(StepStart(trajectory_id, f"f{step}", False, "task", "judge", "ns", float(step)))
            await store.record_many([_record(trajectory_id, step)])


async def test_a_record_takes_under_a_kilobyte_in_memory() -> None:
    store = MemoryStore()
    await _fill(store, 1, 1)  # the trajectory itself is not what is measured
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    trajectory_id = "ns:traj-00000"
    for step in range(2, 2002):
        await store.begin_step(StepStart(trajectory_id, f"f{step}", False, "task", "judge", "ns", float(step)))
        await store.record_many([_record(trajectory_id, step)])
    gc.collect()
    per_record = (tracemalloc.get_traced_memory()[0] - before) / 2000
    tracemalloc.stop()
    assert per_record <= 1024, per_record
    # What the store counts is what it holds, within the allocator's rounding.
    assert store.records_bytes / 2001 <= per_record * 1.2
    assert [r.step for r in await store.records(trajectory_id)] == list(range(1, 2002))


async def test_records_are_bounded_in_bytes_per_trajectory_and_overall() -> None:
    store = MemoryStore(record_bytes=60_000, trajectory_record_bytes=20_000)
    await _fill(store, 6, 100)
    kept = [len(await store.records(f"ns:traj-{t:05d}")) for t in range(6)]
    # Each trajectory kept its first records up to its bound; the least recently recorded
    # trajectories lost theirs when all together went over the overall bound.
    assert 0 < kept[-1] < 100 and kept[0] == 0
    assert store.records_bytes <= 60_000
    assert sum(kept) * 250 <= 60_000
    # Totals count every step whatever the records kept.
    trajectory = await store.get("ns:traj-00000")
    assert trajectory is not None and trajectory.counts["edge_steps"] == 100


def _held(make: Callable[[], object], count: int) -> float:
    """Bytes each of `count` objects made by `make` holds, as tracemalloc sees them kept."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = [make() for _ in range(count)]
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(kept) == count
    return held / count


def test_an_encoding_kept_from_step_to_step_costs_its_length() -> None:
    # orjson's output keeps its ~8x write buffer: what the privacy memory keeps is a copy.
    message = {"role": "tool", "tool_call_id": "call_1", "content": "line of a log\n" * 150}
    length = len(orjson.dumps(message))
    assert _held(lambda: orjson.dumps(message), 50) > 4 * length  # the waste kept_json avoids
    assert _held(lambda: kept_json(message), 50) < length + 200


def test_the_audit_delta_keeps_each_trajectory_input_at_its_length() -> None:
    encoder = DeltaEncoder(64 * 1024 * 1024, 3600)
    history = [{"role": "user", "content": "do the task " * 20}]
    history += [{"role": "tool", "tool_call_id": f"c{n}", "content": f"output {n}\n" * 200} for n in range(40)]
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for step in range(2, len(history) + 1):
            encoder.encode({"trajectory_id": "t1", "step": step, "input": history[:step]})
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    encoded = sum(len(orjson.dumps(message)) for message in history)
    assert held < 2 * encoded, (held, encoded)  # one copy of the last input, not 8

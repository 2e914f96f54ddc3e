"""The outage journal's entries as plain data, so that they can be written to a file and read back.

An entry (router/trajectory/journal.py) is a step start, step records, a note, or an idempotent
write. The idempotent writes are kept as a `StoreCall` (a store method's name and arguments)
rather than a closure, so that they too can be written down and replayed by another process.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import orjson

from router.ledger import StepRecord
from router.trajectory.journal import CountedStep, Entry, Note, Records, Write
from router.trajectory.state import Outcome, StepStart

if TYPE_CHECKING:
    from router.trajectory.redis_store import RedisStore

Method = Literal["set_outcome", "close", "stitch_remember"]


@dataclass(frozen=True, slots=True)
class StoreCall:
    """An idempotent write of the shared store by name and arguments (replaying it twice changes
    nothing more than once: an outcome and a close are kept once, a stitching key is set)."""

    method: Method
    args: tuple[Any, ...]

    async def __call__(self, store: RedisStore) -> object:
        if self.method == "set_outcome":
            return await store.set_outcome(*self.args)
        if self.method == "close":
            return await store.close(*self.args)
        await store.stitch_remember(*self.args)
        return None


def encode(entry: Entry) -> bytes:
    """One entry as compact JSON; TypeError for a write that is not a `StoreCall` (a closure
    cannot be written down)."""
    if isinstance(entry, CountedStep):
        data: dict[str, Any] = {"e": "step", "start": dataclasses.asdict(entry.start), "local": entry.local_step}
    elif isinstance(entry, Records):
        data = {
            "e": "records",
            "records": [r.as_dict() for r in entry.records],
            "tokens": entry.tokens,
            "apart": [r.counted_apart for r in entry.records],
        }
    elif isinstance(entry, Note):
        data = {"e": "note", **dataclasses.asdict(entry)}
    elif isinstance(entry.call, StoreCall):
        call = entry.call
        args = list(call.args)
        if call.method == "set_outcome":
            args[1] = args[1].as_dict()
        data = {"e": "write", "kind": entry.kind, "method": call.method, "args": args}
    else:
        raise TypeError(f"a {entry.kind} write kept as a {type(entry.call).__name__} cannot be written to a file")
    return orjson.dumps(data)


def decode(raw: bytes) -> Entry:
    """The entry `encode` wrote; ValueError or KeyError when `raw` is not one."""
    data = orjson.loads(raw)
    kind = data["e"]
    if kind == "step":
        return CountedStep(StepStart(**data["start"]), int(data["local"]))
    if kind == "records":
        records = [StepRecord.from_dict(r) for r in data["records"]]
        # Which were counted apart (renumbered at the write-back); a file without it: all of them.
        for record, apart in zip(records, data.get("apart") or [True] * len(records), strict=True):
            record.counted_apart = bool(apart)
        return Records(records, list(data["tokens"]))
    if kind == "note":
        return Note(data["trajectory_id"], data["key"], data["value"], bool(data["keep_first"]), bool(data["vault"]))
    if kind == "write":
        method: Method = data["method"]
        args = list(data["args"])
        if method == "set_outcome":
            args[1] = Outcome.from_dict(args[1])
        elif method not in ("close", "stitch_remember"):
            raise ValueError(f"unknown store write {method!r}")
        return Write(str(data["kind"]), StoreCall(method, tuple(args)))
    raise ValueError(f"unknown journal entry {kind!r}")

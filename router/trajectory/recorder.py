"""Step records leave the request path here: queued, then written to the store in batches.

The answer never waits for the store, nor for what only the record needs: the error signals of
the step's new tool results and whether the previous action failed by the harness's status
(scans of kilobytes of new output each step, tens of microseconds) are read here, just before
the record is written. Reads that must see every step (the trajectory API, closing a
trajectory) call `flush()` first. On shutdown, `aclose()` writes what is queued.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from judge.actions import message_action
from judge.signals import quick_error_signals
from judge.status import command_of, failure_reason
from router.ledger import StepRecord
from router.trajectory.store import TrajectoryStore

log = logging.getLogger("tandem.recorder")
BATCH = 256


def error_signals_of(results: list[str]) -> list[str]:
    """The error signals in a step's new tool results (`StepRecord.error_signals`)."""
    return sorted({signal for text in results for signal in quick_error_signals(text)})


# Told, after a batch is written, each record and whether it repeats an answer its step had
# counted already (the store's word: `TrajectoryStore.record_many`).
Written = Callable[[list[StepRecord], list[bool]], None]


class Recorder:
    def __init__(self, store: TrajectoryStore, written: Written | None = None) -> None:
        self._store = store
        self._written = written
        # A record, the tool results its error signals are still to be read from (None: read) and
        # the action that produced them.
        self._queue: asyncio.Queue[tuple[StepRecord, list[str] | None, dict[str, Any] | None]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        # Records submitted, and of them (the first ones: one writer, in order) handed to the store.
        self._submitted = 0
        self._handed = 0
        self._progress = asyncio.Event()

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="tandem-recorder")

    def submit(self, record: StepRecord, results: list[str] | None = None, action: dict[str, Any] | None = None) -> int:
        """Queue a record; its ticket, for `handed`."""
        self._queue.put_nowait((record, results, action))
        self._submitted += 1
        return self._submitted

    async def handed(self, ticket: int) -> None:
        """Wait until the record of `ticket` was handed to the store (written, or kept by its outage journal)."""
        while self._handed < ticket and self._task is not None and not self._task.done():
            await self._progress.wait()

    async def flush(self) -> None:
        await self._queue.join()

    async def _run(self) -> None:
        while True:
            batch = [await self._queue.get()]
            while len(batch) < BATCH and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            records = [settle(*queued) for queued in batch]
            repeats = [False] * len(records)
            try:
                repeats = await self._store.record_many(records)
            except Exception:
                # The resilient store already degrades to memory; anything else is a bug to
                # log, never a reason to stop recording the steps that follow.
                log.exception("could not record %d step(s)", len(batch))
            finally:
                if self._written is not None:
                    try:
                        self._written(records, repeats)
                    except Exception:
                        log.exception("could not count %d step record(s) in the metrics", len(records))
                for _ in batch:
                    self._queue.task_done()
                self._handed += len(batch)
                progress, self._progress = self._progress, asyncio.Event()
                progress.set()

    async def aclose(self) -> None:
        if self._task is None:
            return
        try:
            await asyncio.wait_for(self.flush(), timeout=10)
        except TimeoutError:
            log.error("%d step record(s) not written at shutdown", self._queue.qsize())
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        self._task = None


def settle(record: StepRecord, results: list[str] | None, action: dict[str, Any] | None = None) -> StepRecord:
    """The record with what its new tool results say: their error signals and, when the action
    that produced them is known, whether it failed by the harness's status (`failed_before`) and
    that action's type (`failed_before_action`: the trajectory's own record, judge/record.py)."""
    if results:
        try:
            record.error_signals = error_signals_of(results)
            if action is not None:
                command, shell = command_of(action)
                record.failed_before = int(failure_reason(command, shell, results) is not None)
                record.failed_before_action = message_action(action).value
        except Exception:  # a signal is a hint for the record: never a reason to lose the record
            log.exception("could not read the error signals of %s step %d", record.trajectory_id, record.step)
    return record

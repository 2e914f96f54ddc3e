"""The audit log: one JSON line per step, written by a thread off the request path.

Modes: `off`; `metadata` (decision, tokens, cost, latency, tools called); `content` (also, for
cloud steps, the messages the cloud received and its answer: the fields EC2-Bench's privacy
and cost analysis read; written as deltas, see `delta.py`). Files rotate by size; `close()`
writes every queued line first, so a SIGTERM loses nothing that was answered.

A write that fails (a full disk, a vanished volume) is retried with backoff, the file reopened
each time, until it succeeds: the writer never dies. Meanwhile lines wait in a queue bounded by
the memory they hold (`audit.max_queue_bytes`): a line is serialised when it is submitted and
waits as bytes, counted as it is held until it is written (the batch a failing disk keeps the
writer retrying included); beyond the bound new lines are dropped and counted. The state (`ok`,
`failing`) is in `/readyz` and in the metrics.
"""

from __future__ import annotations

import logging
import queue
import sys
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from router.audit.delta import DeltaEncoder
from router.audit.sink import AuditFile
from router.ledger import StepRecord
from router.metrics.core import Metrics
from router.protocol.fields import kept_json

if TYPE_CHECKING:
    from router.config.stores import AuditSettings

log = logging.getLogger("tandem.audit")
AuditMode = Literal["off", "metadata", "content"]
AuditState = Literal["off", "ok", "failing"]
# What a queued line holds besides its bytes: its `_Queued` and the queue's own reference.
_ENTRY_BYTES = 160
_BATCH = 256
_BACKOFF_S = (0.05, 5.0)  # first and longest wait between retries of a failed write
_GIVE_UP_S = 5.0  # once closing, how long a failing disk is still retried before lines are dropped
_REPEAT_LOG_S = 60.0


@dataclass(slots=True)
class _Queued:
    """A line waiting for the writer, serialised: `head` is its JSON object without its input,
    `parts` the JSON of each message of its input (a content line), `weight` what it holds."""

    head: bytes
    trajectory_id: str
    parts: list[bytes] | None
    weight: int = 0

    def __post_init__(self) -> None:
        held = sys.getsizeof(self.head) + sys.getsizeof(self.trajectory_id)
        if self.parts is not None:
            held += sys.getsizeof(self.parts) + sum(map(sys.getsizeof, self.parts))
        self.weight = _ENTRY_BYTES + held


class AuditLog:
    def __init__(self, settings: AuditSettings, metrics: Metrics | None = None, idle_s: float = 1800.0) -> None:
        self.mode: AuditMode = settings.mode
        self._file = AuditFile(settings.path, settings.max_bytes, settings.backups)
        # The snapshots that open a rotated file hold at most what is remembered: at most half a
        # file, so that a file always has room for lines and rotations cannot follow each other.
        self._encoder = DeltaEncoder(min(settings.delta_memory_bytes, settings.max_bytes // 2), idle_s)
        self._max_queue_bytes = settings.max_queue_bytes
        self._metrics = metrics
        self._queue: queue.SimpleQueue[_Queued] = queue.SimpleQueue()
        self._queued_bytes = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._give_up_at = 0.0  # once closing: after this, a failing disk is not waited for
        self._gave_up = False
        self._thread: threading.Thread | None = None
        self.failing_since: float | None = None
        self._logged_at = 0.0
        self.lines_written = 0
        self.lines_dropped = 0

    @property
    def wants_content(self) -> bool:
        return self.mode == "content"

    @property
    def enabled(self) -> bool:
        """Whether records are written here (they are then read whole as they are submitted)."""
        return self.mode != "off"

    @property
    def state(self) -> AuditState:
        if self.mode == "off":
            return "off"
        return "failing" if self.failing_since is not None else "ok"

    def start(self) -> None:
        if self.mode == "off":
            return
        self._thread = threading.Thread(target=self._run, name="tandem-audit", daemon=True)
        self._thread.start()

    def submit(self, record: StepRecord, content: dict[str, Any] | None = None) -> None:
        """Queue the step's line, serialised here: what waits in the queue is its bytes, and
        the queue's bound counts them as they are held (a record's Python objects weigh two to
        three times their JSON). A line that would pass the bound is dropped and counted."""
        if self._thread is None:
            return
        if self._queued_bytes >= self._max_queue_bytes:  # full: not worth serialising
            self._dropped(1)
            return
        line = record.as_dict()
        parts: list[bytes] | None = None
        if content is not None and self.mode == "content" and record.target == "cloud":
            messages = content.get("input")
            line.update((key, value) for key, value in content.items() if key != "input")
            if isinstance(messages, list):
                parts = [kept_json(message) for message in messages]
            elif messages is not None:
                line["input"] = messages
        queued = _Queued(kept_json(line), record.trajectory_id, parts)
        with self._lock:
            if self._queued_bytes + queued.weight > self._max_queue_bytes:
                self._dropped(1)
                return
            self._queued_bytes += queued.weight
        self._queue.put(queued)

    def _dropped(self, count: int) -> None:
        self.lines_dropped += count
        if self._metrics is not None:
            self._metrics.audit_lines.labels("dropped").inc(count)

    # -- the writer thread ---------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            try:
                first = self._queue.get(timeout=0.2)
            except queue.Empty:
                if self._stopping.is_set():
                    break
                continue
            batch = [first]
            while len(batch) < _BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            count, weight = len(batch), sum(queued.weight for queued in batch)
            data = b"".join(self._encoder.encode_parts(q.head, q.trajectory_id, q.parts) for q in batch)
            del batch, first  # in `data` now (what the delta remembers is bounded on its own)
            # The batch stays counted in the queue's bytes until it is written: a failing disk
            # holds it here, retried, and the bound must see it.
            written = self._write(data)
            del data
            with self._lock:
                self._queued_bytes -= weight
            if written:
                self.lines_written += count
                if self._metrics is not None:
                    self._metrics.audit_lines.labels("written").inc(count)
                self._rotate_when_full()
            else:
                self._dropped(count)
        self._file.close()

    def _write(self, data: bytes) -> bool:
        """Write all of `data`, retrying with backoff; False only when closing gave up."""
        view = memoryview(data)
        wait = _BACKOFF_S[0]
        while view:
            try:
                view = view[self._file.write(view) :]
                continue
            except OSError as error:
                self._failed(error)
            if self._stopping.is_set() and time.monotonic() > self._give_up_at:
                if not self._gave_up:
                    self._gave_up = True
                    log.error("the audit log is still failing at shutdown; dropping the lines left")
                return False
            if self._stopping.is_set():
                time.sleep(min(wait, max(self._give_up_at - time.monotonic(), 0.0) + 0.01))
            else:
                self._stopping.wait(wait)  # close() cuts the wait short
            wait = min(wait * 2, _BACKOFF_S[1])
        self._recovered()
        return True

    def _rotate_when_full(self) -> None:
        if not self._file.full:
            return
        try:
            self._file.rotate()
        except OSError as error:
            self._failed(error)  # the next write retries on the same file; it rotates later
            return
        # The new file opens with the open trajectories' inputs, so no line refers outside it.
        snapshots = self._encoder.snapshots()
        if snapshots:
            self._write(snapshots)

    def _failed(self, error: OSError) -> None:
        self._file.close()  # reopened on the next try: the path may point somewhere new
        if self._metrics is not None:
            self._metrics.audit_write_errors.inc()
            self._metrics.audit_failing.set(1)
        now = time.monotonic()
        if self.failing_since is None:
            self.failing_since = now
            self._logged_at = now
            log.error("audit log %s cannot be written (%s); retrying, lines queue meanwhile", self._file.path, error)
        elif now - self._logged_at > _REPEAT_LOG_S:
            self._logged_at = now
            dropped = self.lines_dropped
            log.error("audit log %s still failing (%s); %d line(s) dropped so far", self._file.path, error, dropped)

    def _recovered(self) -> None:
        if self.failing_since is None:
            return
        down_s = time.monotonic() - self.failing_since
        log.warning("audit log %s is written again after %.1f s", self._file.path, down_s)
        self.failing_since = None
        if self._metrics is not None:
            self._metrics.audit_failing.set(0)

    def close(self) -> None:
        if self._thread is None:
            return
        self._give_up_at = time.monotonic() + _GIVE_UP_S
        self._stopping.set()
        self._thread.join(timeout=30)
        self._thread = None

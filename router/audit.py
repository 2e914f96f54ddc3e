"""The audit log: one JSON line per step, written by a thread off the request path.

Modes: `off`; `metadata` (decision, tokens, cost, latency, tools called); `content` (also, for
cloud steps, the messages the cloud received and its answer: the fields EC2-Bench's privacy
and cost analysis read). Files rotate by size; `close()` writes every queued line first, so a
SIGTERM loses nothing that was answered.
"""

from __future__ import annotations

import logging
import queue
import threading
from pathlib import Path
from typing import Any, Literal

import orjson

from router.ledger import StepRecord

log = logging.getLogger("tandem.audit")
AuditMode = Literal["off", "metadata", "content"]
_STOP = object()


class AuditLog:
    def __init__(self, mode: AuditMode, path: Path, max_bytes: int, backups: int) -> None:
        self.mode = mode
        self._path = path
        self._max_bytes = max_bytes
        self._backups = backups
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self.lines_written = 0

    @property
    def wants_content(self) -> bool:
        return self.mode == "content"

    def start(self) -> None:
        if self.mode == "off":
            return
        self._path.parent.mkdir(parents=True, exist_ok=True)
        self._thread = threading.Thread(target=self._run, name="tandem-audit", daemon=True)
        self._thread.start()

    def submit(self, record: StepRecord, content: dict[str, Any] | None = None) -> None:
        if self._thread is None:
            return
        line = record.as_dict()
        if content is not None and self.mode == "content" and record.target == "cloud":
            line.update(content)
        self._queue.put(line)

    def _run(self) -> None:
        handle = self._path.open("ab")
        try:
            while True:
                item = self._queue.get()
                if item is _STOP:
                    return
                handle.write(orjson.dumps(item) + b"\n")
                self.lines_written += 1
                if self._queue.empty():
                    handle.flush()
                if handle.tell() >= self._max_bytes:
                    handle.close()
                    self._rotate()
                    handle = self._path.open("ab")
        except OSError:
            log.exception("the audit log could not be written; audit lines are being lost")
        finally:
            handle.close()

    def _rotate(self) -> None:
        for index in range(self._backups - 1, 0, -1):
            older = self._path.with_name(f"{self._path.name}.{index}")
            if older.exists():
                older.replace(self._path.with_name(f"{self._path.name}.{index + 1}"))
        if self._backups > 0:
            self._path.replace(self._path.with_name(f"{self._path.name}.1"))
        else:
            self._path.unlink()

    def close(self) -> None:
        if self._thread is None:
            return
        self._queue.put(_STOP)
        self._thread.join(timeout=30)
        self._thread = None

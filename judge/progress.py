"""A plain progress bar on stderr for long runs (reading data, labelling, generating trajectories).

No dependency: a carriage-return line on a terminal, a line per 10% elsewhere (logs, CI).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator, Sized
from typing import IO, TypeVar

T = TypeVar("T")


class Progress:
    def __init__(self, label: str, total: int | None, *, stream: IO[str] | None = None, enabled: bool = True) -> None:
        self.label = label
        self.total = total
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._started = time.monotonic()
        self._last_draw = 0.0
        self._last_tenth = -1

    def advance(self, count: int = 1) -> None:
        self.done += count
        if not self.enabled:
            return
        now = time.monotonic()
        if self.tty:
            if now - self._last_draw >= 0.2:
                self._last_draw = now
                self.stream.write("\r" + self._line(now))
                self.stream.flush()
        elif self.total:
            tenth = 10 * self.done // self.total
            if tenth != self._last_tenth and tenth < 10:
                self._last_tenth = tenth
                self.stream.write(self._line(now) + "\n")

    def close(self) -> None:
        if self.enabled:
            self.stream.write(("\r" if self.tty else "") + self._line(time.monotonic()) + "\n")
            self.stream.flush()

    def _line(self, now: float) -> str:
        elapsed = now - self._started
        if self.total:
            width = 30
            filled = width * min(self.done, self.total) // self.total
            bar = "#" * filled + "-" * (width - filled)
            return f"{self.label} [{bar}] {self.done}/{self.total} {elapsed:.1f}s"
        return f"{self.label} {self.done} {elapsed:.1f}s"


def progress(items: Iterable[T], label: str, total: int | None = None, *, enabled: bool = True) -> Iterator[T]:
    """Iterate `items`, drawing a bar as it goes."""
    if total is None and isinstance(items, Sized):
        total = len(items)
    bar = Progress(label, total, enabled=enabled)
    for item in items:
        yield item
        bar.advance()
    bar.close()

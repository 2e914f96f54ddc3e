"""The audit file itself: appended through a raw descriptor, rotated by size.

A raw descriptor, not a buffered file: after a failed write (a full disk) the writer knows
exactly which bytes reached the file and retries only the rest, so a line is never lost or
doubled by a buffer that kept part of it. Every error is an `OSError` for the caller to retry.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def rotated(path: Path, index: int) -> Path:
    return path.with_name(f"{path.name}.{index}")


def kept_files(path: Path) -> list[Path]:
    """The audit files that exist, oldest first: `path.N` … `path.1`, `path`."""
    older = []
    index = 1
    while rotated(path, index).exists():
        older.append(rotated(path, index))
        index += 1
    files = list(reversed(older))
    if path.exists():
        files.append(path)
    return files


class AuditFile:
    def __init__(self, path: Path, max_bytes: int, backups: int) -> None:
        self.path = path
        self._max_bytes = max_bytes
        self._backups = backups
        self._fd: int | None = None
        self.size = 0

    def open(self) -> None:
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
            self.size = os.fstat(self._fd).st_size

    def write(self, data: memoryview) -> int:
        """Write as much of `data` as the file takes; how many bytes it took. Raises OSError
        (after taking none)."""
        self.open()
        assert self._fd is not None
        written = os.write(self._fd, data)
        self.size += written
        return written

    @property
    def full(self) -> bool:
        return self.size >= self._max_bytes

    def rotate(self) -> None:
        """`path` becomes `path.1`, `path.1` becomes `path.2`…, the oldest beyond `backups` goes."""
        self.close()
        for index in range(self._backups - 1, 0, -1):
            if rotated(self.path, index).exists():
                rotated(self.path, index).replace(rotated(self.path, index + 1))
        if self._backups > 0:
            self.path.replace(rotated(self.path, 1))
        else:
            self.path.unlink(missing_ok=True)
        self.size = 0

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            with contextlib.suppress(OSError):
                os.close(fd)

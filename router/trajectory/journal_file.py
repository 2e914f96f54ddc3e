"""The outage journal on disk: what a worker keeps while the shared store is out survives its stop.

Each worker claims one file of `outage_journal_dir` (`journal-<n>.tj`, the lowest `n` whose
exclusive lock is free) and holds its lock while it runs, so that two workers of one host never
write or replay the same file. At start a worker also takes over every other file whose lock is
free (left by a worker that is gone): their entries join its own, to be written back.

A file is a run of frames: 4 bytes of length, then a 12-byte nonce and the AES-256-GCM sealed
bytes of one item, with a key derived from the privacy vault's key (no value of a step sits on
disk in clear; a frame cut short or tampered with does not open, and reading stops there). Items:
a header (`H` + a generation: a file begun anew), an entry (`E` + router/trajectory/journal_codec.py),
and a checkpoint (`C` + generation:count: that many first entries were written back). An entry is
written (to the OS: a killed process loses nothing) when it is kept, before the step is answered;
the file is synced (fdatasync) in groups, at most once per `sync_s`, and an answer that waits for
its entry waits for that group (`synced`). Emptied when every entry was written back; rewritten
with the live entries only when written-back ones take more than half of it; bounded by
`max_bytes`: past it an entry stays in memory only, counted and logged (`on_lost`).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from router.trajectory.journal import Entry, entry_size
from router.trajectory.journal_codec import decode, encode

log = logging.getLogger("tandem.store")
PREFIX, SUFFIX = "journal-", ".tj"
MAX_FILES = 1024  # workers of one host sharing a directory


def directory_problem(directory: Path) -> str | None:
    """Why a journal could not be kept in `directory` (something not a folder, a folder this
    process cannot write), or None; found before the gateway starts (`tandem check`, `tandem
    serve`) and without creating anything that stays. A folder not there yet is made at start:
    the nearest one above it must then be a folder this process can write."""
    existing = directory
    try:
        while not existing.exists() and existing.parent != existing:
            existing = existing.parent
        if not existing.is_dir():
            return f"{existing} is not a folder"
        if existing != directory:
            if not os.access(existing, os.W_OK | os.X_OK):
                return f"{directory} does not exist and cannot be made ({existing} is not writable)"
            return None
        with tempfile.TemporaryFile(dir=directory, prefix=".tandem-check-"):
            pass
    except OSError as exc:
        return f"{directory} cannot be written ({exc.strerror or exc})"
    return None


_AAD = b"tandem-outage-journal-v1"
_NONCE = 12
_LOG_EVERY_S = 10.0  # at most one log line a reason this often (a full disk fails every step)


class JournalFile:
    def __init__(
        self,
        directory: Path,
        key: bytes,
        max_bytes: int,
        sync_s: float,
        on_lost: Callable[[str, int], None] = lambda reason, count: None,
    ) -> None:
        self.directory = directory
        self.path: Path | None = None
        self._aead = AESGCM(key)
        self.max_bytes = max_bytes
        self.sync_s = sync_s
        self._on_lost = on_lost
        # The entries of the in-memory journal, oldest first (set by the store): a rewrite keeps them.
        self.live: Callable[[], Iterable[Entry]] = lambda: ()
        self._fd: int | None = None
        self._generation = 0
        self._tag = b""  # this generation's name: a checkpoint counts in its own generation only
        self._size = 0  # bytes in the file
        self._in_file: deque[bool] = deque()  # per entry of the memory journal: written to the file?
        self._entries = 0  # entry frames in the file (this generation)
        self._done = 0  # of them, written back (the first ones)
        self._checkpoint_due = False
        self._changes = 0  # writes to the file so far; `_synced` of them are on the disk
        self._synced = 0
        self._last_sync = 0.0
        self._wake = asyncio.Event()
        self._synced_event = asyncio.Event()
        self._flusher: asyncio.Task[None] | None = None
        self._logged: dict[str, float] = {}

    # -- start: claim a file, take over what is left ---------------------------------------

    def open(self) -> list[Entry]:
        """Claim this worker's file and return the entries not yet written back from it and from
        every file no running worker holds; they are in this worker's file when this returns."""
        self.directory.mkdir(parents=True, exist_ok=True)
        own = self._claim()
        if own is None:
            raise OSError(f"no free journal file in {self.directory} ({MAX_FILES} are locked)")
        self._fd, self.path = own
        entries = self._read(self._fd, self.path)
        adopted: list[int] = []
        for path in sorted(self.directory.glob(f"{PREFIX}*{SUFFIX}")):
            if path == self.path:
                continue
            fd = _lock(path, create=False)
            if fd is None:
                continue  # a running worker's
            adopted.append(fd)
            found = self._read(fd, path)
            if found:
                log.warning("taking over %d write(s) kept by a stopped worker in %s", len(found), path)
            entries += found
        self._rewrite(entries)
        os.fdatasync(self._fd)
        for fd in adopted:  # only once this worker's file holds their entries on the disk
            os.ftruncate(fd, 0)
            os.fsync(fd)
            os.close(fd)
        self._flusher = asyncio.create_task(self._flush_loop(), name="tandem-journal-sync")
        return entries

    def _claim(self) -> tuple[int, Path] | None:
        for index in range(MAX_FILES):
            path = self.directory / f"{PREFIX}{index}{SUFFIX}"
            fd = _lock(path, create=True)
            if fd is not None:
                return fd, path
        return None

    def _read(self, fd: int, path: Path) -> list[Entry]:
        data = _read_all(fd)
        entries: list[Entry] = []
        generation, done, position = b"", 0, 0
        while position + 4 <= len(data):
            length = int.from_bytes(data[position : position + 4], "big")
            end = position + 4 + length
            if length <= _NONCE or end > len(data):
                break  # cut short: the end of what was written
            try:
                nonce = data[position + 4 : position + 4 + _NONCE]
                plain = self._aead.decrypt(nonce, data[position + 4 + _NONCE : end], _AAD)
            except InvalidTag:
                if position == 0:
                    self._unreadable(path, data)
                break  # past a torn rewrite: the rest is an older generation's
            position = end
            kind, body = plain[:1], plain[1:]
            if kind == b"H":
                generation, done, entries = body, 0, []
            elif kind == b"C":
                seen, _, count = body.partition(b":")
                if seen == generation:
                    done = max(done, int(count))
            elif kind == b"E":
                try:
                    entries.append(decode(body))
                except (ValueError, KeyError, TypeError) as exc:
                    self._lost("unreadable", 1, f"an entry of {path} does not decode ({exc})")
        return entries[done:]

    def _unreadable(self, path: Path, data: bytes) -> None:
        """A file another key sealed (the vault key changed): kept aside, never overwritten."""
        aside = path.with_name(f"{path.name}.unreadable-{int(time.time())}")
        aside.write_bytes(data)
        self._lost("unreadable", 1, f"{path} does not open with this vault key; its bytes are kept in {aside}")

    # -- the journal's hooks (router/trajectory/journal.py) ---------------------------------

    def kept(self, entry: Entry) -> None:
        """Write an entry the outage keeps (called before the journal holds it)."""
        if self._fd is None:
            self._in_file.append(False)
            return
        try:
            frame = self._frame(b"E" + encode(entry))
        except TypeError as exc:
            self._in_file.append(False)
            self._lost("encode_error", entry_size(entry), str(exc))
            return
        if self._size + len(frame) > self.max_bytes and self._done:
            self._rewrite(list(self.live()))
        if self._size + len(frame) > self.max_bytes:
            self._in_file.append(False)
            self._lost("file_full", entry_size(entry), f"the journal file {self.path} is full ({self.max_bytes} bytes)")
            return
        try:
            self._append(frame)
        except OSError as exc:
            self._in_file.append(False)
            self._lost("disk_error", entry_size(entry), f"could not write the journal file {self.path}: {exc}")
            return
        self._in_file.append(True)
        self._entries += 1

    def left(self, entry: Entry) -> None:
        """The journal's oldest entry was written back (or dropped): the file forgets it."""
        if self._in_file.popleft():
            self._done += 1
            self._checkpoint_due = True
        if not self._in_file and self._fd is not None:
            self._rewrite([])  # all written back: the file begins anew, empty

    async def synced(self) -> None:
        """Wait until what was written so far is on the disk (one sync serves many waiters)."""
        target = self._changes
        while self._synced < target and self._flusher is not None and not self._flusher.done():
            event = self._synced_event
            self._wake.set()
            await event.wait()

    async def aclose(self) -> None:
        """Sync what is written (a checkpoint included) and release the file's lock."""
        if self._flusher is not None:
            self._flusher.cancel()
            await asyncio.gather(self._flusher, return_exceptions=True)
            self._flusher = None
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            self._write_checkpoint()
            os.fdatasync(self._fd)
        if self._in_file:
            log.warning(
                "stopping with %d write(s) of the outage not written back to the trajectory store: "
                "kept in %s, written back at the next start",
                sum(self._in_file),
                self.path,
            )
        os.close(self._fd)
        self._fd = None

    # -- writing ---------------------------------------------------------------------------

    def _frame(self, plain: bytes) -> bytes:
        nonce = os.urandom(_NONCE)
        sealed = nonce + self._aead.encrypt(nonce, plain, _AAD)
        return len(sealed).to_bytes(4, "big") + sealed

    def _append(self, frame: bytes) -> None:
        assert self._fd is not None
        os.pwrite(self._fd, frame, self._size)
        self._size += len(frame)
        self._changed()

    def _changed(self) -> None:
        self._changes += 1
        self._wake.set()

    def _rewrite(self, entries: list[Entry]) -> None:
        """Begin the file anew (a new generation) holding `entries`, the memory journal's: in
        place, so that the lock (held on the file itself) stays. Cut short by a crash, the new
        frames come first and reading stops at the first old one that does not follow a frame."""
        assert self._fd is not None
        self._generation += 1
        self._tag = f"{os.getpid()}-{self._generation}-{time.time_ns()}".encode()
        frames = [self._frame(b"H" + self._tag)]
        size = len(frames[0])
        flags: list[bool] = []
        for entry in entries:
            try:
                frame = self._frame(b"E" + encode(entry))
            except TypeError:
                flags.append(False)
                continue
            if size + len(frame) > self.max_bytes:
                flags.append(False)
                continue
            frames.append(frame)
            size += len(frame)
            flags.append(True)
        if len(flags) < len(entries) and entries:
            self._lost("file_full", len(entries) - sum(flags), f"the journal file {self.path} is full")
        data = b"".join(frames)
        os.pwrite(self._fd, data, 0)
        os.ftruncate(self._fd, len(data))
        self._size = len(data)
        self._in_file = deque(flags)
        self._entries = sum(flags)
        self._done = 0
        self._checkpoint_due = False
        self._changed()

    def _write_checkpoint(self) -> None:
        if not self._checkpoint_due or self._fd is None:
            return
        self._checkpoint_due = False
        self._append(self._frame(b"C" + self._tag + b":" + str(self._done).encode()))

    async def _flush_loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            wait = self._last_sync + self.sync_s - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)  # the group: what arrives meanwhile shares this sync
            await self._sync_once()

    async def _sync_once(self) -> None:
        if self._fd is None:
            return
        try:
            self._write_checkpoint()
            if self._done * 2 > self._entries and self._size * 4 > self.max_bytes:
                self._rewrite(list(self.live()))  # mostly written back: keep the live part only
            target = self._changes
            if self._synced < target:
                await asyncio.to_thread(os.fdatasync, self._fd)
            self._synced = max(self._synced, target)
        except OSError as exc:
            # The entries stay in memory (and written to the OS): only a crash of the host loses them.
            self._lost(
                "disk_error",
                0,
                f"could not sync the journal file {self.path} ({exc}): what it holds survives a stop of this "
                "worker, not a crash of the machine",
            )
            self._synced = max(self._synced, self._changes)
        self._last_sync = time.monotonic()
        event, self._synced_event = self._synced_event, asyncio.Event()
        event.set()

    def _lost(self, reason: str, count: int, message: str) -> None:
        self._on_lost(reason, count)
        now = time.monotonic()
        if now - self._logged.get(reason, -_LOG_EVERY_S) >= _LOG_EVERY_S:
            self._logged[reason] = now
            if count:
                message += f"; {count} write(s) kept in memory only (lost if this worker stops)"
            log.error("outage journal: %s", message)


def _lock(path: Path, *, create: bool) -> int | None:
    """The file open and exclusively locked, or None when another process holds it (or it is gone)."""
    try:
        fd = os.open(path, os.O_RDWR | (os.O_CREAT if create else 0), 0o600)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _read_all(fd: int) -> bytes:
    chunks, offset = [], 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)

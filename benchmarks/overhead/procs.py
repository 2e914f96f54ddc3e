"""Servers under test as child processes: pinned to a core, waited for, measured, stopped."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.overhead.loadgen import fetch, http_request


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def pinned(command: list[str], cpu: int | None) -> list[str]:
    """The command run on one core; `taskset` so that the pinning shows in `ps`."""
    if cpu is None:
        return command
    if shutil.which("taskset") is None:
        raise RuntimeError("taskset is needed to pin the servers to their cores (util-linux)")
    return ["taskset", "-c", str(cpu), *command]


def _children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children") as handle:
                found += [int(child) for child in handle.read().split()]
    return found


def _status_kb(pid: int, key: str) -> int:
    with contextlib.suppress(OSError), open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith(key):
                return int(line.split()[1])
    return 0


@dataclass
class Service:
    """A server process started in its own session, so that stopping it stops its children."""

    name: str
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path
    peak_rss_kb: int = 0  # the largest sum of VmRSS over the process tree seen by `sample`
    _pids: list[int] = field(default_factory=list)

    @classmethod
    def start(
        cls,
        name: str,
        port: int,
        command: list[str],
        log_path: Path,
        env: dict[str, str],
        cwd: Path | None = None,
    ) -> Service:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd, start_new_session=True
            )
        return cls(name, port, process, log_path)

    def tree(self) -> list[int]:
        pids = [self.process.pid]
        index = 0
        while index < len(pids):
            pids += _children(pids[index])
            index += 1
        return pids

    def sample(self) -> None:
        total = sum(_status_kb(pid, "VmRSS:") for pid in self.tree())
        self.peak_rss_kb = max(self.peak_rss_kb, total)

    def hwm_kb(self) -> int:
        """Sum of each live process's own peak (VmHWM): never below the true peak of the tree."""
        return sum(_status_kb(pid, "VmHWM:") for pid in self.tree())

    def log_tail(self, lines: int = 25) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        return ""

    async def wait_ready(self, path: str, timeout_s: float) -> None:
        """Until `GET path` answers 200; raise with the log's tail if the process dies first."""
        deadline = time.monotonic() + timeout_s
        request = http_request(self.port, path)
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                status = self.process.returncode
                raise RuntimeError(f"{self.name} exited with status {status}; its log ends:\n{self.log_tail()}")
            with contextlib.suppress(OSError, TimeoutError):
                answer = await fetch(self.port, request, timeout_s=2.0)
                if answer.status == 200:
                    return
            await asyncio.sleep(0.1)
        raise RuntimeError(f"{self.name} was not ready within {timeout_s:g} s; its log ends:\n{self.log_tail()}")

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=5)


async def sample_rss(services: list[Service], every_s: float = 0.05) -> None:
    """Poll VmRSS until cancelled: cheap (a /proc read) and independent of psutil."""
    while True:
        for service in services:
            service.sample()
        await asyncio.sleep(every_s)

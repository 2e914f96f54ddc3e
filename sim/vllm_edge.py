"""A real vLLM OpenAI-compatible server on 127.0.0.1, serving a tiny random model on the CPU.

Plain Python (standard library only), so any test or benchmark can use it::

    with VLLMServer(run_dir) as server:
        httpx.post(f"{server.base_url}/chat/completions", json={"model": server.model, ...})

On entry it installs vLLM if needed (``sim/vllm/install.sh``, a no-op once done), builds the
tiny model once into a cache folder (``sim/vllm/make_tiny_model.py``), starts
``sim/vllm/serve.sh`` on a free loopback port and waits until the server really answers:
``/health`` is 200 *and* a one-token chat completion succeeds. Everything the server writes
(caches, socket files, its log) goes into ``run_dir``.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any, Self

SCRIPTS_DIR = Path(__file__).resolve().parent / "vllm"  # package data: found from a wheel as from the clone
READY_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 10.0
# Install on a fresh machine downloads ~3.4 GB; it is not part of the readiness deadline.
INSTALL_TIMEOUT_S = 1800.0


class VLLMServerError(RuntimeError):
    """The vLLM server could not be installed, started or reached."""


# Loopback only: never route these requests through a proxy from the environment.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def cache_home() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def venv_dir() -> Path:
    """Where install.sh puts the vLLM virtualenv (same rule as the script)."""
    return Path(os.environ.get("TANDEM_VLLM_VENV") or cache_home() / "tandem" / "vllm-venv")


def default_model_dir() -> Path:
    return Path(os.environ.get("TANDEM_TINY_MODEL_DIR") or cache_home() / "tandem" / "tiny-model")


def free_port() -> int:
    """A port that was free a moment ago; the server's start is retried if it got taken."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run_setup_step(command: list[str], what: str, env: dict[str, str] | None = None) -> None:
    try:
        subprocess.run(
            command,
            check=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            env=env,
        )
    except subprocess.CalledProcessError as error:
        raise VLLMServerError(f"{what} failed (exit {error.returncode}):\n{_tail(error.stdout)}") from None
    except subprocess.TimeoutExpired as error:
        output = error.stdout.decode(errors="replace") if isinstance(error.stdout, bytes) else error.stdout
        raise VLLMServerError(f"{what} timed out after {INSTALL_TIMEOUT_S:.0f} s:\n{_tail(output)}") from None


def ensure_venv() -> Path:
    """Install vLLM into its virtualenv unless it is already there; return the venv folder."""
    _run_setup_step(["bash", str(SCRIPTS_DIR / "install.sh")], "sim/vllm/install.sh")
    return venv_dir()


def ensure_tiny_model(model_dir: Path | None = None, scratch_dir: Path | None = None) -> Path:
    """Build the tiny model once (a no-op when it is complete); return its folder."""
    model_dir = model_dir or default_model_dir()
    env = dict(os.environ)
    if scratch_dir is not None:
        scratch_dir.mkdir(parents=True, exist_ok=True)
        env["TMPDIR"] = str(scratch_dir)
    python = str(venv_dir() / "bin" / "python")
    script = str(SCRIPTS_DIR / "make_tiny_model.py")
    _run_setup_step([python, script, str(model_dir)], "sim/vllm/make_tiny_model.py", env)
    return model_dir


def live_process_group_members(group: int) -> list[int]:
    """Pids of the processes in a process group that have not exited (zombies excluded)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # exited meanwhile
            continue
        # Fields after the parenthesised command name: state, ppid, pgrp, ...
        state, _ppid, pgrp = stat.rsplit(")", 1)[1].split()[:3]
        if int(pgrp) == group and state not in ("Z", "X"):
            members.append(int(entry.name))
    return members


def _is_resource_tracker(pid: int) -> bool:
    try:
        return b"multiprocessing.resource_tracker" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _wait_for_group_exit(process: subprocess.Popen[bytes], group: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        process.poll()  # reap the server itself
        if not live_process_group_members(group):
            return
        time.sleep(0.1)


def _kill_group(process: subprocess.Popen[bytes], group: int) -> None:
    """SIGKILL the server and its engine-core process, then whatever is left.

    The multiprocessing resource tracker is spared at first: once the others are gone it
    unlinks their POSIX semaphores from /dev/shm and exits. Killed with them, it would leave
    a sem.mp-* file behind for every start.
    """
    for pid in live_process_group_members(group):
        if not _is_resource_tracker(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    _wait_for_group_exit(process, group, 5.0)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)


def _tail(text: str | None, lines: int = 60) -> str:
    return "\n".join((text or "").splitlines()[-lines:])


class VLLMServer:
    """One vLLM server process; a context manager that starts it and stops it.

    ``kill()`` and ``stop()`` leave the object reusable: ``start()`` again brings the server
    back on the same port (for tests of fail-over and recovery).
    """

    def __init__(
        self,
        run_dir: Path | str,
        *,
        model_name: str = "tiny-edge",
        model_dir: Path | None = None,
        port: int | None = None,
        ready_timeout_s: float = READY_TIMEOUT_S,
        extra_args: tuple[str, ...] = (),
    ) -> None:
        self.run_dir = Path(run_dir).resolve()
        self.model = model_name
        self.model_dir = model_dir
        self.port = port or free_port()
        self._port_fixed = port is not None
        self.ready_timeout_s = ready_timeout_s
        self.extra_args = extra_args
        self.log_path = self.run_dir / "vllm.log"
        self.startup_s: float | None = None  # seconds from spawn to ready, of the last start
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (ends in /v1)."""
        return f"{self.root_url}/v1"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def is_running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def log_tail(self, lines: int = 60) -> str:
        try:
            return _tail(self.log_path.read_text(errors="replace"), lines)
        except FileNotFoundError:
            return "(no log)"

    def start(self) -> Self:
        """Install and build what is missing, start the server, wait until it answers."""
        if self.is_running():
            return self
        ensure_venv()
        self.model_dir = ensure_tiny_model(self.model_dir, scratch_dir=self.run_dir / "tmp")
        attempts = 1 if self._port_fixed else 3
        for attempt in range(1, attempts + 1):
            started_at = time.monotonic()
            self._spawn()
            try:
                self._wait_until_ready(started_at + self.ready_timeout_s)
            except VLLMServerError:
                port_taken = "address already in use" in self.log_tail(200).lower()
                self._terminate(signal.SIGKILL)
                if port_taken and attempt < attempts:
                    self.port = free_port()  # another process took the port meanwhile
                    continue
                raise
            self.startup_s = time.monotonic() - started_at
            return self
        raise AssertionError("unreachable")

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it has not exited after 10 s."""
        self._terminate(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL at once, like a crash (for fail-over tests)."""
        self._terminate(signal.SIGKILL)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def _spawn(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        command = [
            "bash",
            str(SCRIPTS_DIR / "serve.sh"),
            "--model",
            str(self.model_dir),
            "--name",
            self.model,
            "--port",
            str(self.port),
            "--run-dir",
            str(self.run_dir),
            "--",
            *self.extra_args,
        ]
        with self.log_path.open("ab") as log:
            log.write(f"\n=== {time.strftime('%H:%M:%S')} start: {' '.join(command)}\n".encode())
            log.flush()
            # Own session: a Ctrl-C in the test run does not reach the server half-way, and
            # stop()/kill() signal the whole group (serve.sh execs into the server).
            self._process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        atexit.register(self.kill)  # never leave a 1.3 GB server behind a crashed test run

    def _terminate(self, sig: signal.Signals) -> None:
        process = self._process
        if process is None:
            return
        atexit.unregister(self.kill)
        group = process.pid  # its own session, so its process group id is its pid
        if sig == signal.SIGTERM:
            # Only the API server: it shuts its engine-core process down itself (~2 s).
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGTERM)
            _wait_for_group_exit(process, group, STOP_TIMEOUT_S)
        if live_process_group_members(group):
            _kill_group(process, group)
        process.wait()
        self._process = None

    def _wait_until_ready(self, deadline: float) -> None:
        process = self._process
        assert process is not None
        last_problem = "no answer yet"
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise VLLMServerError(
                    f"vLLM exited with code {process.returncode} before it was ready\n"
                    f"--- {self.log_path} (tail) ---\n{self.log_tail()}"
                )
            try:
                if self._request("GET", "/health", timeout_s=2.0)[0] == 200:
                    # /health answers before the engine has served anything: only a real
                    # generation proves the model, tokenizer and template work.
                    status, body = self._request("POST", "/v1/chat/completions", self._probe_body())
                    if status == 200:
                        return
                    last_problem = f"probe generation answered {status}: {body[:500]!r}"
            except OSError as error:  # refused, reset, timed out: not up yet
                last_problem = f"{type(error).__name__}: {error}"
            time.sleep(0.25)
        raise VLLMServerError(
            f"vLLM was not ready within {self.ready_timeout_s:.0f} s ({last_problem})\n"
            f"--- {self.log_path} (tail) ---\n{self.log_tail()}"
        )

    def _probe_body(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": [{"role": "user", "content": "ping"}],
            "max_tokens": 1,
            "temperature": 0,
        }

    def _request(
        self, method: str, path: str, body: dict[str, Any] | None = None, timeout_s: float = 30.0
    ) -> tuple[int, bytes]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.root_url + path,
            data=data,
            method=method,
            headers={"Content-Type": "application/json"} if data is not None else {},
        )
        try:
            with _OPENER.open(request, timeout=timeout_s) as response:
                return int(response.status), response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()


def main(argv: list[str] | None = None) -> int:
    """Start a server in the foreground for manual use: python tests/vllm/vllm_server.py RUN_DIR."""
    args = argv if argv is not None else sys.argv[1:]
    run_dir = Path(args[0]) if args else cache_home() / "tandem" / "vllm-run"
    with VLLMServer(run_dir) as server:
        print(f"ready in {server.startup_s:.1f} s: {server.base_url} model={server.model}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while server.is_running():
                time.sleep(1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

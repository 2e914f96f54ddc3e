"""A real `tandem serve --workers N` for tests: its config written from the fake upstreams and a
real redis-server, started as a user starts it, waited for until every worker is up, and
stopped as a deployment stops it (SIGTERM, then SIGKILL)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.fake_upstream import FakeUpstream, free_port
from tests.gateway_server import wait_until

SERVE = [sys.executable, "-m", "router.cli", "serve"]


def workers_of(parent: int) -> dict[int, dict[str, str]]:
    """The worker processes of the uvicorn parent (spawned: `spawn_main` in their command line)
    and their environments."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and b"spawn_main" in command:
            pairs = (item.split(b"=", 1) for item in environ.split(b"\0") if b"=" in item)
            found[int(entry.name)] = {k.decode(): v.decode() for k, v in pairs}
    return found


@dataclass(frozen=True)
class Served:
    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def workers(self) -> dict[int, dict[str, str]]:
        return workers_of(self.process.pid)


@contextlib.contextmanager
def serve_workers(
    tmp_path: Path, edge: FakeUpstream, cloud: FakeUpstream, redis_url: str, more: str = "", workers: int = 2
) -> Iterator[Served]:
    """`tandem serve --workers N` on the edge route `tandem`, with `more` YAML appended to its
    config; yields once `/healthz` answers and all N workers run."""
    config = tmp_path / "tandem.yaml"
    config.write_text(
        f"""
upstreams:
  edge:  {{base_url: "{edge.base_url}", model: small, prices: {{input: 0.1, output: 0.2}}}}
  cloud: {{base_url: "{cloud.base_url}", model: big, prices: {{input: 2.5, output: 15}}}}
routes:
  tandem: {{strategy: edge}}
redis_url: "{redis_url}"
{more}
"""
    )
    port = free_port()
    # The test process's own multiprocess folder (if any) is not the server's: it sets up its own.
    env = {key: value for key, value in os.environ.items() if key != "PROMETHEUS_MULTIPROC_DIR"}
    log_path = tmp_path / "serve.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [*SERVE, "--config", str(config), "--port", str(port), "--workers", str(workers)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        served = Served(process, port, log_path)
        try:

            def up() -> bool:
                try:
                    with httpx.Client(timeout=10) as client:
                        healthy = client.get(f"{served.url}/healthz").status_code == 200
                except httpx.TransportError:
                    return False
                return healthy and len(served.workers()) == workers

            assert wait_until(up, timeout=60), log_path.read_text()
            yield served
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)

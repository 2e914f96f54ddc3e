"""`tandem serve --workers 2` with a real redis-server: /metrics answers for every worker
(prometheus-client's multiprocess mode, set up by `tandem serve` itself), and a worker that
dies leaves its counts but not its live gauges."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
from prometheus_client.mmap_dict import MmapedDict
from prometheus_client.parser import text_string_to_metric_families

from tests.fake_upstream import FakeUpstream, free_port
from tests.gateway_server import wait_until

SERVE = [sys.executable, "-m", "router.cli", "serve"]


def workers_of(parent: int) -> dict[int, dict[str, str]]:
    """Worker processes of the uvicorn parent (spawned: `spawn_main` in their command line)
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


def steps_served(folder: Path, pid: int) -> float:
    path = folder / f"counter_{pid}.db"
    if not path.exists():
        return 0.0
    return sum(
        value for key, value, _, _ in MmapedDict.read_all_values_from_file(str(path)) if '"tandem_steps_total"' in key
    )


def total(text: str, name: str) -> float:
    return sum(s.value for family in text_string_to_metric_families(text) for s in family.samples if s.name == name)


def fresh(url: str, method: str = "GET", **kwargs: object) -> httpx.Response:
    # A new connection each time, so the kernel hands requests to either worker.
    with httpx.Client(timeout=10) as client:
        return client.request(method, url, **kwargs)  # type: ignore[arg-type]


def test_metrics_sum_every_worker_and_survive_a_dead_worker(
    tmp_path: Path, edge: FakeUpstream, cloud: FakeUpstream, redis_url: str
) -> None:
    config = tmp_path / "tandem.yaml"
    config.write_text(
        f"""
upstreams:
  edge:  {{base_url: "{edge.base_url}", model: small, prices: {{input: 0.1, output: 0.2}}}}
  cloud: {{base_url: "{cloud.base_url}", model: big, prices: {{input: 2.5, output: 15}}}}
routes:
  tandem: {{strategy: edge}}
redis_url: "{redis_url}"
"""
    )
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {key: value for key, value in os.environ.items() if key != "PROMETHEUS_MULTIPROC_DIR"}
    log = (tmp_path / "serve.log").open("w")
    process = subprocess.Popen(
        [*SERVE, "--config", str(config), "--port", str(port), "--workers", "2"],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    try:

        def up() -> bool:
            try:
                return fresh(f"{url}/healthz").status_code == 200 and len(workers_of(process.pid)) == 2
            except httpx.TransportError:
                return False

        assert wait_until(up, timeout=30), (tmp_path / "serve.log").read_text()
        workers = workers_of(process.pid)
        folders = {environment.get("PROMETHEUS_MULTIPROC_DIR") for environment in workers.values()}
        assert len(folders) == 1 and None not in folders, "tandem serve did not set up multiprocess mode"
        folder = Path(folders.pop() or "")
        assert folder.is_dir()

        # Steps until both workers have served some (bounded; the kernel picks the worker).
        sent = 0
        while sent < 200 and (sent < 20 or not all(steps_served(folder, pid) for pid in workers)):
            body = {"model": "tandem", "messages": [{"role": "user", "content": f"step {sent}"}]}
            assert fresh(f"{url}/v1/chat/completions", "POST", json=body).status_code == 200
            sent += 1
        # (An answered step is booked once its record is written, just after its answer.)
        wait_until(lambda: sum(steps_served(folder, pid) for pid in workers) == sent)
        per_worker = {pid: steps_served(folder, pid) for pid in workers}
        assert all(per_worker.values()), f"one worker served everything: {per_worker}"
        assert sum(per_worker.values()) == sent

        # Whichever worker answers the scrape, it reports every worker's steps.
        for _ in range(6):
            text = fresh(f"{url}/metrics").text
            assert total(text, "tandem_steps_total") == sent
            assert total(text, "tandem_tokens_total") > 0
            assert 'tandem_build_info{version="0.1.0"} 1.0' in text
            assert text.count("# TYPE tandem_active_trajectories gauge") == 1

        # Each worker serves with the bounded protocol and counts what it refuses.
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 70_000 + b"\r\n\r\n")
            # Refused with bytes still unread, the kernel may reset rather than close.
            with contextlib.suppress(ConnectionResetError):
                assert sock.recv(64).startswith(b"HTTP/1.1 431 ")
        assert total(fresh(f"{url}/metrics").text, "tandem_limit_exceeded_total") == 1

        # A worker dies: uvicorn starts another; its counts stay, its live gauges go.
        victim = min(workers)
        os.kill(victim, signal.SIGKILL)
        assert wait_until(lambda: len(workers_of(process.pid)) == 2 and victim not in workers_of(process.pid), 20)
        assert (folder / f"gauge_livemostrecent_{victim}.db").exists()

        def scraped_after_restart() -> bool:
            try:
                return total(fresh(f"{url}/metrics").text, "tandem_steps_total") == sent
            except httpx.TransportError:
                return False

        assert wait_until(scraped_after_restart, timeout=20)
        assert not (folder / f"gauge_livemostrecent_{victim}.db").exists()
        assert (folder / f"counter_{victim}.db").exists()
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
    time.sleep(0.1)
    assert not folder.exists(), "tandem serve removes the folder it made when it exits"

"""`tandem serve --workers 2` with a real redis-server: /metrics answers for every worker
(prometheus-client's multiprocess mode, set up by `tandem serve` itself), and a worker that
dies leaves its counts but not its live gauges."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from pathlib import Path

import httpx
from prometheus_client.mmap_dict import MmapedDict
from prometheus_client.parser import text_string_to_metric_families

from tests.fake_upstream import FakeUpstream
from tests.gateway_server import wait_until
from tests.serve_workers import serve_workers, workers_of


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
    with serve_workers(tmp_path, edge, cloud, redis_url) as served:
        process, port, url = served.process, served.port, served.url
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
    time.sleep(0.1)
    assert not folder.exists(), "tandem serve removes the folder it made when it exits"

"""The audit writer survives a full disk: it retries with backoff, keeps a bounded queue (drops
beyond it, counted), says so in /readyz and the metrics, and writes again once the disk frees.

The full disk is real: the audit path is a link to /dev/full, whose every write fails with
ENOSPC; removing the link frees the "disk" (the writer reopens the path on each retry)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from tests.gateway_server import GatewayServer, wait_until

MakeGateway = Callable[..., GatewayServer]
DROPPED = 'tandem_audit_lines_total{outcome="dropped"}'


def step(client: httpx.Client, server: GatewayServer, index: int) -> None:
    response = client.post(
        f"{server.url}/v1/chat/completions",
        json={"model": "tandem/edge", "messages": [{"role": "user", "content": f"step {index}"}]},
        headers={"X-Session-ID": f"full-disk-{index}"},
    )
    assert response.status_code == 200, response.text


def metric(client: httpx.Client, server: GatewayServer, series: str) -> float:
    text = client.get(f"{server.url}/metrics").text
    found = re.search(rf"^{re.escape(series)} (\S+)$", text, re.MULTILINE)
    assert found is not None, f"{series} not in /metrics"
    return float(found.group(1))


def audit_state(client: httpx.Client, server: GatewayServer) -> str:
    ready = client.get(f"{server.url}/readyz")
    assert ready.status_code == 200  # a failing audit log does not take the gateway out of service
    state: str = ready.json()["audit"]
    return state


def test_a_full_disk_queues_then_recovers_without_losing_a_line(
    make_gateway: MakeGateway, client: httpx.Client, tmp_path: Path
) -> None:
    path = tmp_path / "audit.jsonl"
    path.symlink_to("/dev/full")
    server = make_gateway(audit={"mode": "metadata", "path": str(path)})
    assert audit_state(client, server) == "ok"
    for index in range(5):
        step(client, server, index)
    assert wait_until(lambda: audit_state(client, server) == "failing", timeout=5)
    assert metric(client, server, "tandem_audit_failing") == 1
    assert metric(client, server, "tandem_audit_write_errors_total") >= 1
    for index in range(5, 8):
        step(client, server, index)  # answered as usual while the disk is full
    path.unlink()  # the disk frees
    assert wait_until(lambda: audit_state(client, server) == "ok", timeout=10)
    assert metric(client, server, "tandem_audit_failing") == 0
    step(client, server, 8)
    server.stop()
    written = [json.loads(line) for line in path.read_text().splitlines()]
    assert sorted(line["trajectory_id"] for line in written) == sorted(f"full-disk-{i}" for i in range(9))
    assert server.gateway.audit.lines_dropped == 0


def test_the_queue_is_bounded_and_drops_are_counted(
    make_gateway: MakeGateway, client: httpx.Client, tmp_path: Path
) -> None:
    path = tmp_path / "audit.jsonl"
    path.symlink_to("/dev/full")
    # Room for five queued lines (a metadata line holds about 800 bytes: its JSON, its entry).
    server = make_gateway(audit={"mode": "metadata", "path": str(path), "max_queue_bytes": 4096})
    for index in range(20):
        step(client, server, index)
    assert wait_until(lambda: metric(client, server, DROPPED) >= 15, timeout=5)
    dropped = metric(client, server, DROPPED)
    assert audit_state(client, server) == "failing"
    path.unlink()
    assert wait_until(lambda: audit_state(client, server) == "ok", timeout=10)
    server.stop()
    written = path.read_text().splitlines()
    # Every step is either written or counted as dropped; the queue held at most 5 (the batch
    # the writer was retrying included: it counts until it is written).
    assert len(written) + dropped == 20
    assert 1 <= len(written) <= 5


def test_shutdown_on_a_full_disk_gives_up_in_bounded_time(
    make_gateway: MakeGateway, client: httpx.Client, tmp_path: Path
) -> None:
    path = tmp_path / "audit.jsonl"
    path.symlink_to("/dev/full")
    server = make_gateway(audit={"mode": "metadata", "path": str(path)})
    for index in range(600):  # more than one batch of the writer
        step(client, server, index)
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < 9  # retried for 5 s, then the lines are dropped
    audit = server.gateway.audit
    assert audit.lines_written == 0 and audit.lines_dropped == 600

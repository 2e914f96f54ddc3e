"""SIGHUP to a real `tandem serve`: with one worker it stops as SIGTERM does (the streams in
flight end and are recorded); with several workers a SIGHUP to the whole process group (a closed
terminal, `kill -HUP -<pgid>`) restarts the workers without cutting a stream, and a config broken
since the start keeps the running workers and says so in one line, never a traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from tests.fake_upstream import FakeUpstream, free_port
from tests.gateway_server import wait_healthy, wait_until

STREAMS = 4


def _config(path: Path, edge: FakeUpstream, cloud: FakeUpstream, **extra: str) -> str:
    text = f"""
upstreams:
  edge: {{base_url: "{edge.base_url}", model: small}}
  cloud: {{base_url: "{cloud.base_url}", model: big}}
routes:
  tandem: {{strategy: edge}}
server: {{shutdown_timeout_s: 20}}
""" + "".join(f"{key}: {value}\n" for key, value in extra.items())
    path.write_text(text)
    return text


def _serve(config: Path, port: int, workers: int) -> subprocess.Popen[str]:
    """`tandem serve` in a process group of its own (the group a terminal would signal)."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "router.cli",
            "serve",
            "--config",
            str(config),
            "--port",
            str(port),
            "--workers",
            f"{workers}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    wait_healthy(process, port)
    return process


def _streams(port: int, edge: FakeUpstream) -> tuple[list[threading.Thread], dict[int, Any]]:
    """`STREAMS` streamed steps that take about 2.5 s each, started; what each client read."""
    edge.default = {"kind": "text", "chunks": 5, "chunk_delay": 0.5}
    read: dict[int, Any] = {}

    def one(n: int) -> None:
        body = {"model": "tandem", "stream": True, "messages": [{"role": "user", "content": f"run {n}"}]}
        try:
            with (
                httpx.Client(timeout=30) as http,
                http.stream(
                    "POST",
                    f"http://127.0.0.1:{port}/v1/chat/completions",
                    json=body,
                    headers={"x-session-id": f"hup-{n}"},
                ) as response,
            ):
                read[n] = (response.status_code, b"".join(response.iter_bytes()))
        except httpx.HTTPError as error:
            read[n] = ("cut", repr(error))

    threads = [threading.Thread(target=one, args=(n,)) for n in range(STREAMS)]
    for thread in threads:
        thread.start()
    assert wait_until(lambda: len(edge.received) == STREAMS, timeout=10)
    return threads, read


def _complete(read: dict[int, Any]) -> None:
    for n in range(STREAMS):
        status, body = read[n]
        assert status == 200 and b"[DONE]" in body and b'"error"' not in body, (n, read[n])


def test_sighup_with_one_worker_ends_the_streams_in_flight_and_records_them(
    tmp_path: Path, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    audit = tmp_path / "audit.jsonl"
    config = tmp_path / "tandem.yaml"
    _config(config, edge, cloud, audit=f'{{mode: metadata, path: "{audit}"}}')
    port = free_port()
    process = _serve(config, port, workers=1)
    try:
        threads, read = _streams(port, edge)
        time.sleep(0.5)
        os.killpg(process.pid, signal.SIGHUP)
        for thread in threads:
            thread.join(30)
        output, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    # Before: SIGHUP's default action killed the process at once, every stream cut, no record.
    _complete(read)
    assert process.returncode == 0, output
    assert "received SIGHUP" in output and "Traceback" not in output
    recorded = audit.read_text().splitlines()
    assert len(recorded) == STREAMS, recorded


def test_sighup_to_the_process_group_of_two_workers_restarts_them_cutting_no_stream(
    tmp_path: Path, edge: FakeUpstream, cloud: FakeUpstream, redis_url: str
) -> None:
    config = tmp_path / "tandem.yaml"
    _config(config, edge, cloud, redis_url=redis_url)
    port = free_port()
    process = _serve(config, port, workers=2)
    try:
        threads, read = _streams(port, edge)
        time.sleep(0.5)
        os.killpg(process.pid, signal.SIGHUP)  # the supervisor and each worker get it
        for thread in threads:
            thread.join(30)
        # Still serving after the restart.
        edge.default = {"kind": "text"}
        answer = httpx.post(
            f"http://127.0.0.1:{port}/v1/chat/completions",
            json={"model": "tandem", "messages": [{"role": "user", "content": "after"}]},
            timeout=20,
        )
        assert answer.status_code == 200, answer.text
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=40)
    # Before: each worker died of the SIGHUP at once, every stream cut.
    _complete(read)
    assert process.returncode == 0, output
    assert "Traceback" not in output and "resource_tracker" not in output, output


def test_a_config_broken_before_a_restart_keeps_the_workers_and_says_so_in_one_line(
    tmp_path: Path, edge: FakeUpstream, cloud: FakeUpstream, redis_url: str
) -> None:
    config = tmp_path / "tandem.yaml"
    text = _config(config, edge, cloud, redis_url=redis_url)
    port = free_port()
    process = _serve(config, port, workers=2)
    lines: list[str] = []
    assert process.stdout is not None
    reader = threading.Thread(target=lambda: lines.extend(process.stdout or ()), daemon=True)
    reader.start()
    try:
        # Both workers started on the good config (a worker that first starts on the broken
        # one makes uvicorn stop: a start that fails would fail again at every restart).
        assert wait_until(lambda: sum("Application startup complete" in line for line in lines) == 2, timeout=30)
        config.write_text(text + "bogus_key: 1\n")
        process.send_signal(signal.SIGHUP)
        time.sleep(4)
        try:
            answer = httpx.post(
                f"http://127.0.0.1:{port}/v1/chat/completions",
                json={"model": "tandem", "messages": [{"role": "user", "content": "still here"}]},
                timeout=20,
            )
        except httpx.TransportError as error:
            answer = httpx.Response(599, text=repr(error))
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(40)
        reader.join(10)
    output = "".join(lines)
    assert answer.status_code == 200, (answer.text, output)
    assert process.returncode == 0, output
    # Before: a traceback of some thirty lines ending in the ConfigError.
    assert "Traceback" not in output, output
    said = [line for line in output.splitlines() if "bogus_key" in line]
    assert said == [
        f"tandem: invalid configuration: bogus_key: unknown key, not permitted here ({config}:9); this worker does not start"
    ], output
    assert "aborting the restart" in output

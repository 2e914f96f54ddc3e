"""`tandem serve` as a user runs it: a real process with uvloop and httptools, from a YAML file."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import httpx

from tests.fake_upstream import FakeUpstream, free_port
from tests.gateway_server import serve_process


def test_serve_from_a_config_file_with_overrides(tmp_path: Path, edge: FakeUpstream, cloud: FakeUpstream) -> None:
    config = tmp_path / "tandem.yaml"
    config.write_text(
        f"""
upstreams:
  edge:  {{base_url: "{edge.base_url}", model: small}}
  cloud: {{base_url: "{cloud.base_url}", model: big, api_key_env: SERVE_TEST_KEY}}
routes:
  tandem: {{strategy: cloud}}
server: {{port: 1}}
"""
    )
    port = free_port()
    env = {**os.environ, "SERVE_TEST_KEY": "sk-serve-secret"}
    process = serve_process(config, port, env)
    try:
        with httpx.Client(timeout=5) as http:
            response = http.post(
                f"http://127.0.0.1:{port}/v1/chat/completions",
                json={"model": "tandem", "messages": [{"role": "user", "content": "hi"}]},
            )
            assert response.status_code == 200
            assert response.headers["x-tandem-target"] == "cloud"
            assert cloud.received[0].body["model"] == "big"
            assert cloud.received[0].headers["Authorization"] == "Bearer sk-serve-secret"
            assert http.get(f"http://127.0.0.1:{port}/readyz").json()["ready"] is True
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=15)
    # uvicorn shuts down gracefully, then re-raises the signal it caught, as a process should.
    assert process.returncode in (0, -signal.SIGTERM), output
    assert "Finished server process" in output
    assert "sk-serve-secret" not in output


def test_log_level_reaches_the_gateways_own_lines(tmp_path: Path, edge: FakeUpstream, cloud: FakeUpstream) -> None:
    """`log_level: info` shows the gateway's info lines (each upstream's state at start), with
    their level and logger; `warning` leaves them out. (Without a handler of their own only
    warnings got out, with no level or name.)"""
    said = {}
    for level in ("info", "warning"):
        config = tmp_path / f"{level}.yaml"
        config.write_text(
            f"log_level: {level}\n"
            "upstreams:\n"
            f"  edge: {{base_url: '{edge.base_url}', model: small}}\n"
            f"  cloud: {{base_url: '{cloud.base_url}', model: big}}\n"
        )
        process = serve_process(config, free_port())
        httpx.get(f"http://127.0.0.1:{process.args[-1]}/readyz", timeout=10)
        process.send_signal(signal.SIGTERM)
        said[level], _ = process.communicate(timeout=30)
    assert "INFO:     tandem: upstream edge is reachable and authorised (HTTP 200)" in said["info"], said["info"]
    assert "upstream edge is reachable" not in said["warning"], said["warning"]

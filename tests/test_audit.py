"""The audit log: one line per step, content for cloud steps when asked, nothing lost on SIGTERM."""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.fake_upstream import FakeUpstream, free_port
from tests.gateway_server import GatewayServer, serve_process, wait_until

MakeGateway = Callable[..., GatewayServer]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def send(client: httpx.Client, server: GatewayServer, model: str, session: str, turn: int = 0) -> httpx.Response:
    messages = [{"role": "user", "content": "mail me at a@b.example"}, *[{"role": "assistant", "content": "ok"}] * turn]
    return client.post(
        f"{server.url}/v1/chat/completions",
        json={"model": model, "messages": messages},
        headers={"X-Session-ID": session},
    )


def test_metadata_mode_writes_one_line_per_step(
    make_gateway: MakeGateway, client: httpx.Client, tmp_path: Path
) -> None:
    path = tmp_path / "audit.jsonl"
    server = make_gateway(audit={"mode": "metadata", "path": str(path)})
    for model in ("tandem/edge", "tandem/cloud", "tandem/edge"):
        send(client, server, model, "audited")
    server.stop()
    written = lines(path)
    assert [(line["step"], line["target"]) for line in written] == [(1, "edge"), (2, "cloud"), (3, "edge")]
    assert all("input" not in line for line in written)
    assert written[1]["usage"]["prompt_tokens"] == 20 and written[1]["cost_usd"] > 0


def test_content_mode_keeps_what_the_cloud_received(
    make_gateway: MakeGateway, client: httpx.Client, tmp_path: Path, cloud: FakeUpstream
) -> None:
    path = tmp_path / "audit.jsonl"
    server = make_gateway(audit={"mode": "content", "path": str(path)})
    cloud.push({"kind": "tool_call", "name": "send_mail", "arguments": '{"to": "a@b.example"}'})
    send(client, server, "tandem/cloud", "content")
    send(client, server, "tandem/edge", "content")
    cloud.push({"text": "streamed answer"})
    client.post(
        f"{server.url}/v1/chat/completions",
        json={"model": "tandem/cloud", "stream": True, "messages": [{"role": "user", "content": "s"}]},
        headers={"X-Session-ID": "content"},
    )
    server.stop()
    cloud_line, edge_line, stream_line = lines(path)
    assert cloud_line["input"] == [{"role": "user", "content": "mail me at a@b.example"}]
    assert cloud_line["output_tools"] == ["send_mail"] and "a@b.example" in cloud_line["output"]
    assert "input" not in edge_line
    assert stream_line["output"] == "streamed answer"


def test_rotation_by_size_keeps_every_line(make_gateway: MakeGateway, client: httpx.Client, tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    server = make_gateway(audit={"mode": "metadata", "path": str(path), "max_bytes": 2048, "backups": 20})
    for turn in range(12):
        send(client, server, "tandem/edge", "rotating", turn)
    server.stop()
    files = sorted(tmp_path.glob("audit.jsonl*"))
    assert len(files) > 2
    steps = sorted(line["step"] for file in files for line in lines(file))
    assert steps == list(range(1, 13))


def test_sigterm_mid_load_loses_no_answered_step(tmp_path: Path, edge: FakeUpstream, cloud: FakeUpstream) -> None:
    audit = tmp_path / "audit.jsonl"
    config = tmp_path / "tandem.yaml"
    config.write_text(
        f"""
upstreams:
  edge: {{base_url: "{edge.base_url}", model: e}}
  cloud: {{base_url: "{cloud.base_url}", model: c}}
routes: {{tandem: {{strategy: edge}}}}
audit: {{mode: metadata, path: "{audit}"}}
"""
    )
    edge.default = {"kind": "text", "delay": 0.4}
    port = free_port()
    process = serve_process(config, port)
    answered: list[tuple[str, str]] = []
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(timeout=10) as http:

            def one(index: int) -> None:
                try:
                    response = http.post(
                        f"{url}/v1/chat/completions",
                        json={"model": "tandem", "messages": [{"role": "user", "content": f"n{index}"}]},
                        headers={"X-Session-ID": f"load-{index}"},
                    )
                except httpx.TransportError:
                    return
                if response.status_code == 200:
                    answered.append((response.headers["x-tandem-trajectory"], response.headers["x-tandem-step"]))

            threads = [threading.Thread(target=one, args=(i,)) for i in range(16)]
            for thread in threads:
                thread.start()
            assert wait_until(lambda: len(edge.received) >= 16, timeout=10)
            process.send_signal(signal.SIGTERM)  # every request is in flight upstream now
            for thread in threads:
                thread.join(15)
    finally:
        output, _ = process.communicate(timeout=20)
    assert len(answered) == 16, output
    logged = {(line["trajectory_id"], str(line["step"])) for line in lines(audit)}
    assert set(answered) <= logged

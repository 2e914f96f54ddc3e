"""`tandem demo --serve`: the simulated models and a real gateway stay up, the printed base URL
answers the real openai SDK and a plain HTTP client (as the printed curl line) with x-tandem-*
headers, the printed client settings name that URL, and Ctrl-C stops it with exit 0."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import openai

ROOT = Path(__file__).resolve().parents[1]


def test_demo_serve_answers_curl_and_the_openai_sdk_then_stops_on_ctrl_c() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TANDEM_")}
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "router.cli", "demo", "--serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    try:
        assert process.stdout is not None
        printed = []
        for line in process.stdout:
            printed.append(line)
            if line.startswith("Ctrl-C stops it"):
                break
        text = "".join(printed)
        found = re.search(r"base URL: (http://127\.0\.0\.1:\d+/v1)", text)
        assert found, text
        base_url = found.group(1)
        # The printed settings point at that URL: curl, Codex's provider block, OpenHands.
        assert f"curl -s -D - {base_url}/chat/completions" in text
        assert f'base_url = "{base_url}"' in text and 'wire_api = "responses"' in text
        assert f"LLM_BASE_URL={base_url.removesuffix('/v1')}" in text and "LLM_MODEL=litellm_proxy/tandem" in text

        # What the curl line sends, by a plain HTTP client.
        body = {"model": "tandem", "messages": [{"role": "user", "content": "hello"}]}
        reply = httpx.post(f"{base_url}/chat/completions", json=body, timeout=30)
        first_200_s = time.monotonic() - started
        assert reply.status_code == 200, reply.text
        assert reply.headers["x-tandem-target"] in ("edge", "cloud")
        assert reply.headers["x-tandem-route"] == "tandem"
        assert reply.json()["choices"][0]["message"]["content"].startswith("This is the simulated")

        client = openai.OpenAI(base_url=base_url, api_key="demo", max_retries=0)
        # Codex's own model name reaches the `tandem` route (the printed config.toml uses it).
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-5-codex", messages=[{"role": "user", "content": "hello"}]
        )
        assert raw.http_response.status_code == 200
        assert raw.headers["x-tandem-route"] == "tandem"
        assert raw.headers["x-tandem-trajectory"]
        assert raw.parse().choices[0].message.content
        forced = client.chat.completions.with_raw_response.create(
            model="tandem/cloud", messages=[{"role": "user", "content": "hello"}]
        )
        assert forced.headers["x-tandem-target"] == "cloud"
        print(f"tandem demo --serve: first 200 after {first_200_s:.2f} s")

        # Odd requests a client may send: never a 5xx from the demo's gateway or its simulated
        # models; a refusal is an OpenAI-shaped error that says what was wrong.
        hello = {"role": "user", "content": "hello"}
        call = {"id": "a", "type": "function", "function": {"name": "advisor", "arguments": "{}"}}
        odd: list[dict[str, Any]] = [
            {"messages": [hello], "tools": [{"type": "custom", "custom": {"name": "apply_patch"}}]},
            {"messages": [hello], "tools": [{"type": "function", "function": "bash"}]},
            {"messages": [hello], "tools": [{"type": "function", "function": None}, {"type": "function"}]},
            {"messages": [{"role": "tool", "tool_call_id": "a", "content": "out"}]},
            {"messages": [hello, {"role": "assistant", "tool_calls": [call]}, {"role": "tool", "tool_call_id": "a"}]},
            {"messages": [hello, {"role": "assistant", "tool_calls": [{"id": "b", "function": "x"}]}]},
            {"messages": [{"role": "system", "content": [{"type": "text", "text": "be brief"}]}, hello]},
        ]
        for extra in odd:
            reply = httpx.post(f"{base_url}/chat/completions", json={"model": "tandem", **extra}, timeout=30)
            assert reply.status_code < 500, (extra, reply.text)
            if reply.status_code >= 400:
                assert reply.json()["error"]["message"], (extra, reply.text)

        # The server is `tandem serve`'s, with its limits: a head over `limits.max_header_bytes`
        # is refused with a 431 rather than buffered.
        port = int(base_url.rsplit(":", 1)[1].removesuffix("/v1"))
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw_socket:
            raw_socket.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n")
            assert raw_socket.recv(64).startswith(b"HTTP/1.1 431 ")

        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
        stderr = process.stderr.read() if process.stderr else ""
        assert "Traceback" not in stderr and "stopped" in stderr
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_demo_serve_on_a_taken_port_says_so_in_one_line() -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "router.cli", "demo", "--serve", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
        )
    assert done.returncode == 2
    assert f"cannot serve on 127.0.0.1:{port}" in done.stderr
    assert "(choose another --host or --port; --port 0 takes a free one)" in done.stderr
    assert "Traceback" not in done.stderr

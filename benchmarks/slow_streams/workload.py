"""Slow readers of fast streams against a real `tandem serve`: how much the gateway holds a stream.

An upstream on 127.0.0.1 (an asyncio server in this process, honouring back-pressure: it writes
only as fast as the gateway reads) streams a large answer as fast as it can to every request;
`streams` clients each ask for a streamed answer and then read it very slowly (`read_bytes`
every `read_every_s`, with the kernel's default socket buffers). The gateway's RSS (VmRSS from
/proc) is read before the streams start and every 0.2 s while they run; the figure is the peak
growth, all streams together and per stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import orjson

CONTENT = "stream " * 146  # ~1 KB of text an event
EVENT = (
    b"data: "
    + orjson.dumps(
        {
            "id": "chatcmpl-slow",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "fast-model",
            "choices": [{"index": 0, "delta": {"content": CONTENT}, "finish_reason": None}],
        }
    )
    + b"\n\n"
)
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
REQUEST_BODY = orjson.dumps({"model": "tandem", "stream": True, "messages": [{"role": "user", "content": "hi"}]})


@dataclass
class Figures:
    streams: int
    answer_bytes: int
    seconds: float
    rss_before_mb: float
    rss_peak_mb: float
    relayed_bytes: int  # what the clients read, all streams together

    @property
    def growth_mb(self) -> float:
        return self.rss_peak_mb - self.rss_before_mb

    @property
    def per_stream_kb(self) -> float:
        return self.growth_mb * 1024 / self.streams

    def line(self) -> str:
        return (
            f"{self.streams} slow-reading streams of {self.answer_bytes / 2**20:.0f} MB answers for "
            f"{self.seconds:g} s: gateway RSS {self.rss_before_mb:.1f} -> peak {self.rss_peak_mb:.1f} MB, "
            f"growth {self.growth_mb:.1f} MB ({self.per_stream_kb:.0f} KB a stream); "
            f"clients read {self.relayed_bytes / 2**20:.1f} MB in all"
        )


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


class FastUpstream:
    """Answers every request with `answer_bytes` of SSE events, then `[DONE]`, as fast as the
    gateway reads them (each write waits for the socket to drain)."""

    def __init__(self, answer_bytes: int) -> None:
        self.answer_bytes = answer_bytes
        self.port = 0
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="fast-upstream", daemon=True)
        self._server: asyncio.Server | None = None

    def start(self) -> FastUpstream:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(10)
        return self

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                await reader.readexactly(length)
                writer.write(HEAD)
                batch = EVENT * 16
                piece = b"%x\r\n" % len(batch) + batch + b"\r\n"
                sent = 0
                while sent < self.answer_bytes:
                    writer.write(piece)
                    sent += len(batch)
                    await writer.drain()
                end = b"data: [DONE]\n\n"
                writer.write(b"%x\r\n" % len(end) + end + b"\r\n0\r\n\r\n")
                await writer.drain()
        writer.close()

    def stop(self) -> None:
        async def close() -> None:
            if self._server is not None:
                self._server.close()

        asyncio.run_coroutine_threadsafe(close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def gateway(upstream_port: int, extra_config: str = "") -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """A `tandem serve` process whose `tandem` route sends every step to the fast upstream."""
    folder = Path(tempfile.mkdtemp(prefix="tandem-slow-streams-"))
    config = folder / "tandem.yaml"
    base = f"http://127.0.0.1:{upstream_port}/v1"
    config.write_text(
        f"""
upstreams:
  edge:  {{base_url: "{base}", model: fast-model}}
  cloud: {{base_url: "{base}", model: fast-model}}
routes:
  tandem: {{strategy: edge}}
log_level: warning
{extra_config}
"""
    )
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TANDEM_") or k == "TANDEM_VAULT_KEY"}
    command = [sys.executable, "-m", "router.cli", "serve", "--config", str(config), "--port", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("tandem serve did not come up")
            time.sleep(0.1)
        yield process, port
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def _request(port: int) -> bytes:
    return (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n" % (port, len(REQUEST_BODY))
    ) + REQUEST_BODY


async def _slow_client(port: int, read_bytes: int, read_every_s: float, stop: asyncio.Event, read: list[int]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=read_bytes)
    writer.write(_request(port))
    try:
        while not stop.is_set():
            data = await reader.read(read_bytes)
            if not data:
                break
            read[0] += len(data)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), read_every_s)
    finally:
        writer.transport.abort()


async def _run_clients(
    pid: int, port: int, streams: int, seconds: float, read_bytes: int, read_every_s: float
) -> tuple[float, int]:
    stop = asyncio.Event()
    read = [0]
    clients = [asyncio.create_task(_slow_client(port, read_bytes, read_every_s, stop, read)) for _ in range(streams)]
    peak = 0.0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        await asyncio.sleep(0.2)
        peak = max(peak, rss_mb(pid))
    stop.set()
    await asyncio.gather(*clients, return_exceptions=True)
    return peak, read[0]


def _warm_up(port: int) -> None:
    """A few whole streams first, so that what a stream's code loads once is in the baseline."""
    with httpx.Client(timeout=60) as http:
        for _ in range(3):
            body = {"model": "tandem", "stream": True, "messages": [{"role": "user", "content": "warm"}]}
            with http.stream("POST", f"http://127.0.0.1:{port}/v1/chat/completions", json=body) as response:
                for _ in response.iter_bytes():
                    pass


def measure(
    streams: int = 50,
    answer_bytes: int = 32 * 2**20,
    seconds: float = 8.0,
    read_bytes: int = 1024,
    read_every_s: float = 0.5,
    extra_config: str = "",
) -> Figures:
    upstream = FastUpstream(answer_bytes).start()
    try:
        with gateway(upstream.port, extra_config) as (process, port):
            # Warm up on small answers first (what a stream's code loads once is then in the
            # baseline), then the large one.
            upstream.answer_bytes = 256 * 1024
            _warm_up(port)
            upstream.answer_bytes = answer_bytes
            time.sleep(1.0)
            before = rss_mb(process.pid)
            peak, relayed = asyncio.run(_run_clients(process.pid, port, streams, seconds, read_bytes, read_every_s))
    finally:
        upstream.stop()
    return Figures(streams, answer_bytes, seconds, before, peak, relayed)

"""What a hostile client can make a real `tandem serve` hold, with the default `limits`.

Three probes against a fresh `tandem serve` process each (loopback only, ~30 s in all):
- RSS before and after 8 clients each try to send a 32 MB header;
- seconds until a client that dribbles its headers (one byte a second) is dropped;
- open file descriptors while 1,000 clients hold half-sent heads, and how long until they go.

    python -m benchmarks.limits
"""

from __future__ import annotations

import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx

CONFIG = """
upstreams:
  edge: {base_url: "http://127.0.0.1:9/v1", model: small}
  cloud: {base_url: "http://127.0.0.1:9/v1", model: big}
client_api_keys: [sk-bench]
log_level: warning
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def _gateway() -> Iterator[tuple[int, int]]:
    """A `tandem serve` process with the default limits: (pid, port)."""
    folder = Path(tempfile.mkdtemp(prefix="tandem-limits-"))
    (folder / "tandem.yaml").write_text(CONFIG)
    port = _free_port()
    command = [sys.executable, "-m", "router.cli", "serve", "--config", str(folder / "tandem.yaml")]
    process = subprocess.Popen([*command, "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        time.sleep(1)  # let start-up allocations settle before the first reading
        yield process.pid, port
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(15)


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _huge_head(port: int, size: int = 32 << 20) -> str:
    piece = b"h" * (1 << 20)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
            sock.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Huge: ")
            for _ in range(size // len(piece)):
                sock.sendall(piece)
            sock.sendall(b"\r\n\r\n")
            return sock.recv(100)[:12].decode(errors="replace")
    except OSError as exc:
        return type(exc).__name__


def huge_headers() -> None:
    with _gateway() as (pid, port):
        before = _rss_mb(pid)
        started = time.monotonic()
        with ThreadPoolExecutor(8) as pool:
            answers = sorted(set(pool.map(lambda _: _huge_head(port), range(8))))
        took = time.monotonic() - started
        time.sleep(0.5)
        after = _rss_mb(pid)
    growth = after - before
    print(f"8 x 32 MB headers: RSS {before:.1f} -> {after:.1f} MB ({growth:+.1f} MB) in {took:.1f} s; {answers}")


def slow_header() -> None:
    with _gateway() as (_, port), socket.create_connection(("127.0.0.1", port)) as sock:
        started = time.monotonic()
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        sock.settimeout(1.0)
        answer = b""
        while time.monotonic() - started < 60 and not answer:
            try:
                sock.sendall(b"s")
                answer = sock.recv(200) or b"(closed)"
            except TimeoutError:
                continue
            except OSError as exc:
                answer = type(exc).__name__.encode()
        status = answer.split(b"\r\n", 1)[0].decode(errors="replace") or "still connected"
        print(f"headers dribbled at 1 byte/s: dropped after {time.monotonic() - started:.2f} s ({status})")


def held_connections(count: int = 1000) -> None:
    with _gateway() as (pid, port):

        def open_fds() -> int:
            return len(os.listdir(f"/proc/{pid}/fd"))

        before = open_fds()
        clients = []
        for _ in range(count):
            client = socket.create_connection(("127.0.0.1", port))
            client.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            clients.append(client)
        started = time.monotonic()
        time.sleep(2)
        held = open_fds()
        while time.monotonic() - started < 30 and open_fds() > before + 5:
            time.sleep(0.25)
        print(
            f"{count} half-sent heads: fds {before} -> {held}, back to {open_fds()} "
            f"after {time.monotonic() - started:.1f} s"
        )
        for client in clients:
            client.close()


def main() -> int:
    if not Path("/proc/self/status").exists():
        print("needs /proc (Linux) to read a process's RSS and descriptors")
        return 2
    # A thousand client sockets here, as many in the gateway: more than a default soft limit.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    huge_headers()
    slow_header()
    held_connections()
    return 0


if __name__ == "__main__":
    sys.exit(main())

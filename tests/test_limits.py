"""`limits`: bounded request heads, head and body timeouts, bounded upstream answers and events,
each against a real gateway (the server `tandem serve` runs) and counted in a metric."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from aiohttp import web

from router.streaming import EventTooLong, _Observer
from tests.fake_upstream import FakeUpstream, free_port
from tests.gateway_server import GatewayServer, chat, wait_until
from tests.raw_upstream import RawUpstream, stream_bytes

EDGE_ONLY = {"tandem": {"strategy": "edge", "failover": False}}


def limit_count(client: httpx.Client, server: GatewayServer, limit: str) -> float:
    for line in client.get(f"{server.url}/metrics").text.splitlines():
        if line.startswith(f'tandem_limit_exceeded_total{{limit="{limit}"}}'):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def read_answer(sock: socket.socket, timeout: float = 5.0) -> bytes:
    """Everything the server sends until it closes the connection (or `timeout` passes)."""
    sock.settimeout(timeout)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    return data


def error_of(answer: bytes) -> dict[str, Any]:
    body = answer.partition(b"\r\n\r\n")[2]
    error: dict[str, Any] = orjson.loads(body)["error"]
    return error


# -- request heads ---------------------------------------------------------------------------


def test_an_oversized_request_head_is_431_before_authentication(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client
) -> None:
    server = make_gateway(routes=EDGE_ONLY, client_api_keys=["sk-client"], limits={"max_header_bytes": 4096})
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        # No key at all: the head is refused for its size before anyone asks for one.
        sock.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 8192 + b"\r\n\r\n")
        answer = read_answer(sock)
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    error = error_of(answer)
    assert error["code"] == "request_headers_too_large"
    assert "4096" in error["message"] and "limits.max_header_bytes" in error["message"]
    assert limit_count(client, server, "max_header_bytes") == 1
    # A head under the limit, body and all in the same read, goes through.
    headers = {"Authorization": "Bearer sk-client", "X-Padding": "p" * 3000}
    response = client.post(
        f"{server.base_url}/chat/completions",
        json={"model": "tandem", "messages": [{"role": "user", "content": "hi"}]},
        headers=headers,
    )
    assert response.status_code == 200, response.text


def test_a_client_dribbling_its_head_is_dropped_with_408(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client
) -> None:
    server = make_gateway(routes=EDGE_ONLY, limits={"header_timeout_s": 1})
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        started = time.monotonic()
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        sock.settimeout(0.2)
        answer = b""
        while time.monotonic() - started < 5 and not answer:
            try:
                sock.sendall(b"X")  # one byte of a header that never ends, every 0.2 s
                answer = sock.recv(65536)
            except TimeoutError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                break
        answer += read_answer(sock, 2)
        dropped_after = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert "limits.header_timeout_s" in error_of(answer)["message"]
    assert 0.9 <= dropped_after < 3, dropped_after
    assert limit_count(client, server, "header_timeout_s") == 1


def test_a_connection_that_sends_nothing_is_closed(make_gateway: Callable[..., GatewayServer]) -> None:
    server = make_gateway(routes=EDGE_ONLY, limits={"header_timeout_s": 1})
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        started = time.monotonic()
        assert read_answer(sock, 5) == b""
        closed_after = time.monotonic() - started
    assert 0.9 <= closed_after < 3, closed_after


def test_a_slow_body_is_408(make_gateway: Callable[..., GatewayServer], client: httpx.Client) -> None:
    server = make_gateway(routes=EDGE_ONLY, limits={"body_timeout_s": 1})
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        started = time.monotonic()
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1000\r\n\r\n" + b'{"model": "tandem", '
        )
        answer = read_answer(sock, 5)
        dropped_after = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    error = error_of(answer)
    assert error["code"] == "request_timeout" and "limits.body_timeout_s" in error["message"]
    assert 0.9 <= dropped_after < 3, dropped_after
    assert limit_count(client, server, "body_timeout_s") == 1
    assert chat(client, server.url).status_code == 200


def test_a_kept_alive_connection_outlives_the_head_timeout(
    make_gateway: Callable[..., GatewayServer], edge: FakeUpstream, client: httpx.Client
) -> None:
    """The timers bound a head or body in progress, never an answer or an idle pause."""
    server = make_gateway(routes=EDGE_ONLY, limits={"header_timeout_s": 0.5, "body_timeout_s": 0.5})
    edge.push({"kind": "text", "text": "a b c d e f", "chunk_delay": 0.2})
    with client.stream(
        "POST",
        f"{server.base_url}/chat/completions",
        json={"model": "tandem", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
    ) as response:
        body = b"".join(response.iter_bytes())
    assert response.status_code == 200 and body.endswith(b"data: [DONE]\n\n")
    time.sleep(0.7)
    assert chat(client, server.url).status_code == 200
    assert limit_count(client, server, "header_timeout_s") == 0
    assert limit_count(client, server, "body_timeout_s") == 0


# -- upstream answers ------------------------------------------------------------------------


@pytest.fixture()
def raw_upstream() -> Iterator[Callable[..., RawUpstream]]:
    started: list[RawUpstream] = []

    def make(routes: dict[tuple[str, str], Any]) -> RawUpstream:
        upstream = RawUpstream(routes).start()
        started.append(upstream)
        return upstream

    yield make
    for upstream in started:
        upstream.stop()


def _completion(text: str) -> bytes:
    return orjson.dumps(
        {
            "id": "chatcmpl-big",
            "object": "chat.completion",
            "created": 0,
            "model": "edge-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        }
    )


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
def test_an_oversized_plain_answer_is_502(
    declared: bool,
    make_gateway: Callable[..., GatewayServer],
    raw_upstream: Callable[..., RawUpstream],
    client: httpx.Client,
) -> None:
    big = _completion("x" * 3_000_000)

    async def answer(request: web.Request) -> web.StreamResponse:
        await request.read()
        if declared:
            return web.Response(body=big, content_type="application/json")
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        for start in range(0, len(big), 65536):
            await response.write(big[start : start + 65536])
        await response.write_eof()
        return response

    upstream = raw_upstream({("POST", "/v1/chat/completions"): answer})
    server = make_gateway(routes=EDGE_ONLY, edge_url=upstream.base_url, limits={"max_answer_bytes": 1_000_000})
    response = chat(client, server.url)
    assert response.status_code == 502, response.text
    error = response.json()["error"]
    assert error["code"] == "answer_too_large"
    assert "1000000" in error["message"] and "limits.max_answer_bytes" in error["message"]
    assert limit_count(client, server, "max_answer_bytes") == 1


def _event(text: str) -> bytes:
    chunk = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


def _stream(client: httpx.Client, server: GatewayServer) -> bytes:
    with client.stream(
        "POST",
        f"{server.base_url}/chat/completions",
        json={"model": "tandem", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
    ) as response:
        assert response.status_code == 200
        return b"".join(response.iter_bytes())


def _error_events(body: bytes) -> list[dict[str, Any]]:
    errors = []
    for block in body.split(b"\n\n"):
        if block.startswith(b"data: {") and b'"error"' in block[:20]:
            errors.append(orjson.loads(block[6:])["error"])
    return errors


def test_an_oversized_stream_ends_with_an_error_event(
    make_gateway: Callable[..., GatewayServer], raw_upstream: Callable[..., RawUpstream], client: httpx.Client
) -> None:
    async def answer(request: web.Request) -> web.StreamResponse:
        await request.read()
        return await stream_bytes(request, [_event("y" * 10_000) for _ in range(300)] + [b"data: [DONE]\n\n"])

    upstream = raw_upstream({("POST", "/v1/chat/completions"): answer})
    server = make_gateway(routes=EDGE_ONLY, edge_url=upstream.base_url, limits={"max_answer_bytes": 1_000_000})
    body = _stream(client, server)
    errors = _error_events(body)
    assert [e["code"] for e in errors] == ["answer_too_large"], body[-400:]
    assert "limits.max_answer_bytes" in errors[0]["message"]
    assert body.endswith(b"data: [DONE]\n\n")
    assert len(body) < 1_100_000
    assert limit_count(client, server, "max_answer_bytes") == 1


def test_an_event_that_never_ends_is_cut_off_with_an_error_event(
    make_gateway: Callable[..., GatewayServer], raw_upstream: Callable[..., RawUpstream], client: httpx.Client
) -> None:
    async def answer(request: web.Request) -> web.StreamResponse:
        await request.read()
        return await stream_bytes(request, [b'data: {"choices": "'] + [b"z" * 16384] * 200)

    upstream = raw_upstream({("POST", "/v1/chat/completions"): answer})
    server = make_gateway(routes=EDGE_ONLY, edge_url=upstream.base_url, limits={"max_sse_line_bytes": 1_000_000})
    body = _stream(client, server)
    errors = _error_events(body)
    assert [e["code"] for e in errors] == ["upstream_event_too_long"], body[-400:]
    assert "limits.max_sse_line_bytes" in errors[0]["message"]
    assert body.endswith(b"data: [DONE]\n\n")
    assert limit_count(client, server, "max_sse_line_bytes") == 1


def test_a_long_event_under_the_bound_is_relayed_whole(
    make_gateway: Callable[..., GatewayServer], raw_upstream: Callable[..., RawUpstream], client: httpx.Client
) -> None:
    text = "w" * (8 * 1024 * 1024)
    event = _event(text)

    async def answer(request: web.Request) -> web.StreamResponse:
        await request.read()
        pieces = [event[i : i + 4096] for i in range(0, len(event), 4096)]
        return await stream_bytes(request, [*pieces, b"data: [DONE]\n\n"])

    upstream = raw_upstream({("POST", "/v1/chat/completions"): answer})
    server = make_gateway(routes=EDGE_ONLY, edge_url=upstream.base_url, limits={"max_sse_line_bytes": 16 << 20})
    body = _stream(client, server)
    assert _error_events(body) == [] and body.endswith(b"data: [DONE]\n\n")
    assert text.encode() in body
    assert limit_count(client, server, "max_sse_line_bytes") == 0


def test_waiting_for_the_end_of_an_event_costs_linear_time() -> None:
    """8 MB of one event in 4 KB pieces: joining what waits to every piece copied ~8 GB (seconds;
    a 32 MB event took 4.6 s through the gateway); growing one buffer copies each byte once."""
    observer = _Observer(max_event_bytes=16 << 20)
    piece = b"v" * 4096
    started = time.perf_counter()
    observer.feed(b'data: {"choices": [{"delta": {"content": "')
    for _ in range(2048):
        observer.feed(piece)
    observer.feed(b'"}}]}\r\n\r\ndata: [DONE]\n\n')
    elapsed = time.perf_counter() - started
    assert observer.done and observer.events == 2 and not observer.partial
    assert elapsed < 0.5, elapsed
    with pytest.raises(EventTooLong):
        _Observer(max_event_bytes=4096).feed(b"data: " + b"u" * 5000)


# -- a real `tandem serve` process under header abuse -----------------------------------------


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _send_huge_head(port: int, size: int) -> bytes:
    """Try to send a head with one header of `size` bytes; what the server answered, if anything."""
    piece = b"h" * (1 << 20)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Huge: ")
            for _ in range(size // len(piece)):
                sock.sendall(piece)
            sock.sendall(b"\r\n\r\n")
            return read_answer(sock, 5)
    except OSError:
        return b""  # the server closed on us mid-send: refused unread, as it should be


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc to read a process's RSS")
def test_eight_clients_sending_32_mb_heads_leave_the_rss_flat(
    tmp_path: Path, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    config = tmp_path / "tandem.yaml"
    config.write_text(
        f"""
upstreams:
  edge:  {{base_url: "{edge.base_url}", model: small}}
  cloud: {{base_url: "{cloud.base_url}", model: big}}
client_api_keys: [sk-rss]
log_level: warning
"""
    )
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "router.cli", "serve", "--config", str(config), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        with httpx.Client(timeout=5) as http:

            def up() -> bool:
                try:
                    return http.get(f"http://127.0.0.1:{port}/healthz").status_code == 200
                except httpx.TransportError:
                    return False

            assert wait_until(up, timeout=20), "tandem serve did not come up"
            before = _rss_mb(process.pid)
            with ThreadPoolExecutor(8) as pool:
                answers = list(pool.map(lambda _: _send_huge_head(port, 32 << 20), range(8)))
            after = _rss_mb(process.pid)
            assert all(a == b"" or a.startswith(b"HTTP/1.1 431 ") for a in answers), [a[:40] for a in answers]
            assert after - before <= 20, (before, after)
            assert http.get(f"http://127.0.0.1:{port}/healthz").status_code == 200
            metrics = http.get(f"http://127.0.0.1:{port}/metrics").text
            assert 'tandem_limit_exceeded_total{limit="max_header_bytes"} 8.0' in metrics
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=15)

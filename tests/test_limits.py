"""`limits` the server keeps: bounded request heads, head and body timeouts, each against a real
gateway (the server `tandem serve` runs) and counted in `tandem_limit_exceeded_total`."""

from __future__ import annotations

import logging
import signal
import socket
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.fake_upstream import FakeUpstream, free_port
from tests.gateway_server import GatewayServer, chat, limit_count, serve_process

EDGE_ONLY = {"tandem": {"strategy": "edge", "failover": False}}


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


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}",
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\n{}",
        b"POST /v1/chat/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"NOT-HTTP\r\n\r\n",
    ],
)
def test_bytes_that_are_not_http_get_an_openai_shaped_400(
    make_gateway: Callable[..., GatewayServer], request_bytes: bytes
) -> None:
    server = make_gateway(routes=EDGE_ONLY)
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(request_bytes)
        answer = read_answer(sock)
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    error = error_of(answer)
    assert error["code"] == "invalid_http_request" and "not valid HTTP/1.1" in error["message"]
    # The gateway serves the next client as before.
    with httpx.Client(timeout=10) as client:
        assert chat(client, server.url).status_code == 200


def test_heads_are_counted_one_request_at_a_time(make_gateway: Callable[..., GatewayServer]) -> None:
    """Two pipelined requests in one read, 6 KB together, each head under a 4 KB limit."""
    server = make_gateway(routes=EDGE_ONLY, limits={"max_header_bytes": 4096})
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"p" * 3000 + b"\r\n\r\n"
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(head + head.replace(b"Host: x", b"Host: x\r\nConnection: close"))
        answer = read_answer(sock)
    assert answer.count(b"HTTP/1.1 200 ") == 2, answer[:300]


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


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/messages"])
def test_a_slow_body_is_408(
    path: str, make_gateway: Callable[..., GatewayServer], client: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    server = make_gateway(routes=EDGE_ONLY, limits={"body_timeout_s": 1})
    # uvicorn's own logger does not reach the root logger; listen to it directly.
    uvicorn_errors = logging.getLogger("uvicorn.error")
    uvicorn_errors.addHandler(caplog.handler)
    try:
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            started = time.monotonic()
            sock.sendall(
                f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n".encode()
                + b"Content-Length: 1000\r\n\r\n"
                + b'{"model": "tandem", '
            )
            answer = read_answer(sock, 5)
            dropped_after = time.monotonic() - started
        time.sleep(0.2)  # the handler that waited for the body finishes
    finally:
        uvicorn_errors.removeHandler(caplog.handler)
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    error = error_of(answer)
    assert error["code"] == "request_timeout" and "limits.body_timeout_s" in error["message"]
    assert 0.9 <= dropped_after < 3, dropped_after
    assert limit_count(client, server, "body_timeout_s") == 1
    # A client dropped for its slowness is no error of the gateway's.
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert chat(client, server.url).status_code == 200


def test_a_client_that_stops_reading_a_stream_is_dropped_and_its_step_recorded(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client, edge: FakeUpstream
) -> None:
    """A stream's relay waited on a client that read nothing (its send buffer full) for ever,
    past the stream's own deadline: no upstream timeout runs while it waits, so the step, its
    upstream call and their memory were held until the client closed its socket."""
    server = make_gateway(
        routes=EDGE_ONLY,
        limits={"send_timeout_s": 1},
        upstream_overrides={"edge": {"timeouts": {"connect": 2, "first_byte": 5, "idle": 2, "stream": 2}}},
    )
    long_answer = {"kind": "text", "text": "w" * 200, "chunks": 200_000}  # ~50 MB of events
    body = orjson.dumps({"model": "tandem", "stream": True, "messages": [{"role": "user", "content": "hi"}]})
    body = body[:-1] + b',"fake":' + orjson.dumps(long_answer) + b"}"
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", server.port))
        head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        head += b"X-Session-ID: unread\r\nContent-Length: %d\r\n\r\n" % len(body)
        sock.sendall(head + body)
        assert sock.recv(100).startswith(b"HTTP/1.1 200 ")
        started = time.monotonic()

        def records() -> list[dict[str, Any]]:
            response = client.get(f"{server.url}/v1/trajectories/unread")
            return response.json()["records"] if response.status_code == 200 else []

        # The socket stays open and unread: the gateway ends the step itself.
        deadline = started + 8
        while not records() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert records(), "the step was still held by a client that reads nothing"
        assert time.monotonic() - started < 6
    (record,) = records()
    assert record["status"] == "cancelled", record
    assert edge.received[-1].disconnected  # the upstream call was dropped too
    assert limit_count(client, server, "send_timeout_s") == 1


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
    process = serve_process(config, port)
    try:
        with httpx.Client(timeout=5) as http:
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


# -- Upgrade ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "upgrade",
    [
        b"Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n",
        b"Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        b"Sec-WebSocket-Version: 13\r\n",
    ],
    ids=["h2c", "websocket"],
)
def test_an_upgrade_request_is_served_as_http_1_1(make_gateway: Callable[..., GatewayServer], upgrade: bytes) -> None:
    """`curl --http2` on http:// asks to upgrade to h2c; a WebSocket handshake may come with a
    body: the gateway ignores the header and answers the request (its body read) in HTTP/1.1,
    within a second, where the body was dropped or the connection left without an answer."""
    server = make_gateway(routes=EDGE_ONLY)
    body = b'{"model": "tandem", "messages": [{"role": "user", "content": "hi"}]}'
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(head + upgrade + b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
        started = time.monotonic()
        answer = read_answer(sock, timeout=5.0)
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:300]
    assert time.monotonic() - started < 2.0
    assert orjson.loads(answer.partition(b"\r\n\r\n")[2])["choices"][0]["message"]["role"] == "assistant"
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + upgrade + b"Connection: close\r\n\r\n")
        assert read_answer(sock).startswith(b"HTTP/1.1 200 ")


# -- answers given before the body was read ---------------------------------------------------


@pytest.mark.parametrize("pace", ["at_once", "slowly"])
@pytest.mark.parametrize(
    ("version", "keys", "status"),
    [
        ("HTTP/1.1", [], b"413"),  # Content-Length over max_body_bytes
        ("HTTP/1.0", [], b"413"),
        ("HTTP/1.1", ["sk-client"], b"401"),  # no key: refused before its body is read
    ],
)
def test_an_answer_given_before_the_body_reaches_a_client_that_sends_it_all(
    make_gateway: Callable[..., GatewayServer],
    edge: FakeUpstream,
    version: str,
    keys: list[str],
    status: bytes,
    pace: str,
) -> None:
    """A client that ends its connection after the answer (`Connection: close`, HTTP/1.0)
    sends its whole body, then reads: the gateway answered after the head and closed with the
    body unread, and the kernel's reset (data left unread) destroyed the answer in flight."""
    server = make_gateway(routes=EDGE_ONLY, max_body_bytes=4096 if not keys else 16 << 20, client_api_keys=keys)
    body = b'{"model": "tandem", "messages": [{"role": "user", "content": "' + b"x" * (8 << 20) + b'"}]}'
    head = f"POST /v1/chat/completions {version}\r\nHost: x\r\nContent-Type: application/json\r\n".encode()
    head += b"Connection: close\r\n" if version == "HTTP/1.1" else b""
    head += b"Content-Length: %d\r\n\r\n" % len(body)
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        if pace == "at_once":
            sock.sendall(head + body)
        else:
            sock.sendall(head)
            time.sleep(0.2)  # the answer is written before any of the body comes
            for start in range(0, len(body), 1 << 20):
                sock.sendall(body[start : start + (1 << 20)])
                time.sleep(0.02)
        answer = read_answer(sock)
    assert answer.startswith(b"HTTP/1.1 " + status + b" "), answer[:200]
    head_part, _, answer_body = answer.partition(b"\r\n\r\n")
    length = int(next(h for h in head_part.split(b"\r\n") if h.lower().startswith(b"content-length:")).split(b":")[1])
    assert len(answer_body) == length
    assert error_of(answer)["message"]
    assert not edge.received


def test_a_413_before_the_body_closes_a_keep_alive_connection(make_gateway: Callable[..., GatewayServer]) -> None:
    """Refused on its declared length, the rest of the body is what would follow on the
    connection: the answer says `connection: close` and the connection closes at once, rather
    than read a pipelined request as that body until the body timeout."""
    server = make_gateway(routes=EDGE_ONLY, max_body_bytes=4096)
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    second = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(head + b"Content-Length: 99999999999\r\n\r\n" + b'{"model": ' + second)
        started = time.monotonic()
        answer = read_answer(sock, timeout=8.0)
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]
    assert b"connection: close" in answer.partition(b"\r\n\r\n")[0].lower()
    assert error_of(answer)["code"] == "request_too_large"
    assert time.monotonic() - started < 7.0  # closed after the linger, not held to the body timeout


def test_a_stream_to_an_http_1_0_client_is_not_chunked(make_gateway: Callable[..., GatewayServer]) -> None:
    """HTTP/1.0 has no chunked coding: the events are sent as they are and the body ends with the
    connection, which the head says it closes."""
    server = make_gateway(routes=EDGE_ONLY)
    body = b'{"model": "tandem", "stream": true, "messages": [{"role": "user", "content": "hi"}]}'
    head = b"POST /v1/chat/completions HTTP/1.0\r\nHost: x\r\nContent-Type: application/json\r\n"
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
        answer = read_answer(sock, timeout=8.0)
    head_part, _, events = answer.partition(b"\r\n\r\n")
    assert head_part.startswith(b"HTTP/1.1 200 "), answer[:300]
    assert b"transfer-encoding" not in head_part.lower() and b"connection: close" in head_part.lower()
    assert events.startswith(b"data: {") and events.endswith(b"data: [DONE]\n\n"), events[-200:]
    chunks = [orjson.loads(line[6:]) for line in events.split(b"\n\n") if line.startswith(b"data: {")]
    assert chunks and all(chunk["object"] == "chat.completion.chunk" for chunk in chunks)


def test_a_body_cut_short_by_a_half_close_gets_a_400(make_gateway: Callable[..., GatewayServer]) -> None:
    """The client sends part of its body and ends its side of the connection: an answer saying
    so, rather than a connection closed with no word."""
    server = make_gateway(routes=EDGE_ONLY)
    body = b'{"model": "tandem", "messages": [{"role": "user", "content": "hi"}]}'
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(head + b"Content-Length: %d\r\n\r\n" % (len(body) + 50) + body)
        sock.shutdown(socket.SHUT_WR)
        answer = read_answer(sock, timeout=5.0)
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    assert error_of(answer)["code"] == "incomplete_request"

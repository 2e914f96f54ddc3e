"""How many codings a request body may list, and what undoing them may cost: a list of thousands
is refused before anything is inflated, the bytes inflated across all layers are bounded by
`max_body_bytes`, a large body is inflated off the event loop, and a coding header repeated on
two lines is one list (RFC 9110 5.3), on every surface."""

from __future__ import annotations

import gzip
import socket
import threading
import zlib

import httpx
import orjson
import pytest

from router.api import encoding
from router.api.encoding import MAX_CODINGS, OFF_LOOP_BYTES, decoded
from router.errors import GatewayError
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

BODY = {"model": "tandem", "messages": [{"role": "user", "content": "hello, twice compressed"}]}
MESSAGES_BODY = {"model": "tandem", "max_tokens": 20, "messages": [{"role": "user", "content": "hi"}]}


def _raw_post(server: GatewayServer, lines: list[str], body: bytes, path: str = "/v1/chat/completions") -> bytes:
    """POST `body` with the header `lines` as written (a repeated name stays two lines)."""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n"
        f"Content-Length: {len(body)}\r\n" + "".join(f"{line}\r\n" for line in lines) + "\r\n"
    )
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(head.encode("latin-1") + body)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def _error(answer: bytes) -> dict[str, object]:
    error: dict[str, object] = orjson.loads(answer.partition(b"\r\n\r\n")[2])["error"]
    return error


# -- how many codings ----------------------------------------------------------------------------


def test_more_codings_than_the_cap_are_refused_before_any_is_undone() -> None:
    """The bytes are not deflate at all: had any layer been undone, the answer would be a 400
    "not valid deflate"; the 415 says the list itself is refused, unread."""
    codings = ", ".join(["deflate"] * (MAX_CODINGS + 1))
    with pytest.raises(GatewayError) as raised:
        decoded(b"\x00 not deflate", {"content-encoding": codings}, 1 << 20)
    assert raised.value.status == 415
    assert f"lists {MAX_CODINGS + 1} codings; at most {MAX_CODINGS} are accepted" in str(raised.value)


def test_thousands_of_stacked_codings_get_a_415_naming_the_cap(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream
) -> None:
    """The abuse probe's request: 6,000 `deflate` codings (each a pass over the body before)."""
    body = orjson.dumps(BODY)
    for _ in range(20):
        body = zlib.compress(body, 0)  # stored blocks: each layer about as large as the last
    answer = _raw_post(gateway, ["Content-Encoding: " + ",".join(["deflate"] * 6000)], body)
    assert _status(answer) == 415, answer[:300]
    error = _error(answer)
    assert error["code"] == "unsupported_content_encoding"
    assert f"lists 6000 codings; at most {MAX_CODINGS} are accepted" in str(error["message"])
    assert not edge.received
    # The gateway still serves.
    assert client.get(f"{gateway.url}/healthz").status_code == 200


def test_a_transfer_coding_list_over_the_cap_is_refused_too(gateway: GatewayServer, edge: FakeUpstream) -> None:
    packed = gzip.compress(orjson.dumps(BODY))
    chunked = b"%x\r\n" % len(packed) + packed + b"\r\n0\r\n\r\n"
    head = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: gzip, gzip, gzip, chunked\r\nConnection: close\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", gateway.port), timeout=10) as sock:
        sock.sendall(head + chunked)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert _status(answer) == 415, answer[:300]
    assert "Transfer-Encoding lists 3 codings" in str(_error(answer)["message"])
    assert not edge.received


# -- bytes inflated --------------------------------------------------------------------------------


def test_the_bytes_inflated_across_layers_are_bounded_by_the_limit() -> None:
    """Two stored-block layers of a 600 KB body: each layer alone is within a 1 MB limit, the
    two together inflate 1.2 MB, which is refused (before, each layer had the whole limit)."""
    inner = b"x" * 600_000
    body = zlib.compress(zlib.compress(inner, 0), 0)
    assert decoded(body, {"content-encoding": "deflate, deflate"}, 2_000_000) == inner
    with pytest.raises(GatewayError) as raised:
        decoded(body, {"content-encoding": "deflate, deflate"}, 1_000_000)
    assert raised.value.status == 413
    message = str(raised.value)
    assert "limit of 1000000 bytes (max_body_bytes)" in message and "2 layers" in message
    # One layer of the same body within the same limit is fine.
    assert decoded(zlib.compress(inner, 0), {"content-encoding": "deflate"}, 1_000_000) == inner


def test_a_large_compressed_body_is_inflated_off_the_event_loop(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[str] = []
    real = encoding.decoded

    def watched(*args: object) -> bytes:
        threads.append(threading.current_thread().name)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(encoding, "decoded", watched)
    # Stored blocks: compressed, the body is over OFF_LOOP_BYTES.
    large = {**BODY, "pad": "y" * (OFF_LOOP_BYTES + 1024)}
    packed = zlib.compress(orjson.dumps(large), 0)
    headers = {"content-type": "application/json", "content-encoding": "deflate"}
    response = client.post(f"{gateway.url}/v1/chat/completions", content=packed, headers=headers)
    assert response.status_code == 200, response.text
    assert edge.received[0].body["messages"] == BODY["messages"]
    assert threads and threads[0] != "gateway"  # not the thread the gateway's loop runs in
    # A small one stays on the loop (a thread hop would cost more than it saves).
    threads.clear()
    response = client.post(
        f"{gateway.url}/v1/chat/completions",
        content=gzip.compress(orjson.dumps(BODY)),
        headers={**headers, "content-encoding": "gzip"},
    )
    assert response.status_code == 200, response.text
    assert threads == ["gateway"]


# -- a coding header on two lines ------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/messages"])
def test_content_encoding_on_two_lines_is_one_list(gateway: GatewayServer, edge: FakeUpstream, path: str) -> None:
    """`Content-Encoding: gzip` twice is a body gzipped twice (before: the second line was
    ignored, and the once-decoded body was "not valid UTF-8")."""
    body = MESSAGES_BODY if path == "/v1/messages" else BODY
    answer = _raw_post(
        gateway,
        ["Content-Encoding: gzip", "Content-Encoding: gzip"],
        gzip.compress(gzip.compress(orjson.dumps(body))),
        path,
    )
    assert _status(answer) == 200, answer[:300]
    assert edge.received[0].body["messages"][-1]["content"] == body["messages"][0]["content"]


def test_a_coding_not_accepted_on_a_second_line_gets_a_415(gateway: GatewayServer, edge: FakeUpstream) -> None:
    """`identity` then `br`: before, only `identity` was read and the body taken as it came."""
    answer = _raw_post(gateway, ["Content-Encoding: identity", "Content-Encoding: br"], orjson.dumps(BODY))
    assert _status(answer) == 415, answer[:300]
    error = _error(answer)
    assert error["code"] == "unsupported_content_encoding" and "'br' is not supported" in str(error["message"])
    assert not edge.received


def test_repeated_coding_lines_count_against_the_cap(gateway: GatewayServer, edge: FakeUpstream) -> None:
    answer = _raw_post(
        gateway, ["Content-Encoding: gzip"] * 3, gzip.compress(gzip.compress(gzip.compress(orjson.dumps(BODY))))
    )
    assert _status(answer) == 415, answer[:300]
    assert f"lists 3 codings; at most {MAX_CODINGS}" in str(_error(answer)["message"])

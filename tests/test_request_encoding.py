"""Request bodies sent compressed (`Content-Encoding`): gzip and deflate are decoded on every
surface, within `max_body_bytes` once decoded; other codings get a 415 naming the accepted ones,
and bytes that are not of their coding a 400 that says so, never "not valid JSON"."""

from __future__ import annotations

import gzip
import random
import zlib
from collections.abc import Callable

import httpx
import orjson
import pytest

from router.api.encoding import _PIECE, MAX_MEMBERS, decoded
from router.errors import GatewayError
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

BODY = {"model": "tandem", "messages": [{"role": "user", "content": "hello, compressed"}]}


def _post(
    client: httpx.Client, server: GatewayServer, data: bytes, coding: str, path: str = "/v1/chat/completions"
) -> httpx.Response:
    headers = {"content-type": "application/json", "content-encoding": coding, "x-session-id": f"enc-{coding}"}
    return client.post(f"{server.url}{path}", content=data, headers=headers)


@pytest.mark.parametrize(
    ("coding", "compress"),
    [
        ("gzip", gzip.compress),
        ("x-gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("identity", lambda data: data),
        ("gzip, identity", gzip.compress),
        ("deflate, gzip", lambda data: gzip.compress(zlib.compress(data))),
    ],
)
def test_a_compressed_chat_body_is_decoded_and_forwarded(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream, coding: str, compress: Callable[[bytes], bytes]
) -> None:
    response = _post(client, gateway, compress(orjson.dumps(BODY)), coding)
    assert response.status_code == 200, response.text
    assert edge.received[0].body["messages"] == BODY["messages"]


def test_gzip_members_one_after_another_are_one_body(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream
) -> None:
    data = orjson.dumps(BODY)
    response = _post(client, gateway, gzip.compress(data[:20]) + gzip.compress(data[20:]), "gzip")
    assert response.status_code == 200, response.text
    assert edge.received[0].body["messages"] == BODY["messages"]


def test_a_body_of_many_gzip_members_decodes_up_to_the_cap_and_is_refused_past_it(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream
) -> None:
    """Empty members one after another: decoded up to MAX_MEMBERS (before, a body of ~1,000
    of them, 24 KB, went past Python's recursion limit: a 500), refused past it with a 400."""
    data = orjson.dumps(BODY)
    empty = gzip.compress(b"")
    within = gzip.compress(data) + empty * (MAX_MEMBERS - 1)
    response = _post(client, gateway, within, "gzip")
    assert response.status_code == 200, response.text
    assert edge.received[0].body["messages"] == BODY["messages"]
    past = gzip.compress(data) + empty * MAX_MEMBERS
    response = _post(client, gateway, past, "gzip")
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_content_encoding" and f"more than {MAX_MEMBERS} members" in error["message"]
    assert len(edge.received) == 1


def test_members_split_across_the_decoders_pieces_decode_whole() -> None:
    """Members larger than the piece the decoder is fed, and members that end inside a piece."""
    parts = [bytes(range(256)) * (_PIECE // 100), b"x", b"", b"y" * (_PIECE * 3 + 7)]
    noise = random.Random(7).randbytes(_PIECE * 2)  # incompressible: a member over a piece long
    parts.append(noise)
    body = b"".join(gzip.compress(part) for part in parts)
    assert decoded(body, {"content-encoding": "gzip"}, 1 << 24) == b"".join(parts)
    with pytest.raises(GatewayError) as raised:
        decoded(body, {"content-encoding": "gzip"}, len(b"".join(parts)) - 1)
    assert raised.value.status == 413
    with pytest.raises(GatewayError) as raised:
        decoded(body[:-3], {"content-encoding": "gzip"}, 1 << 24)
    assert raised.value.status == 400 and "ends early" in str(raised.value)


def test_a_compressed_messages_body_is_decoded(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream
) -> None:
    body = {"model": "tandem", "max_tokens": 20, "messages": [{"role": "user", "content": "hi"}]}
    response = _post(client, gateway, gzip.compress(orjson.dumps(body)), "gzip", "/v1/messages")
    assert response.status_code == 200, response.text
    assert response.json()["type"] == "message"


@pytest.mark.parametrize("coding", ["br", "zstd", "compress", "gzip, br"])
def test_a_coding_not_accepted_gets_a_415_naming_the_accepted_ones(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream, coding: str
) -> None:
    response = _post(client, gateway, b"\x28\xb5\x2f\xfd\x00", coding)
    assert response.status_code == 415, response.text
    error = response.json()["error"]
    assert error["code"] == "unsupported_content_encoding" and "gzip or deflate" in error["message"]
    assert not edge.received


@pytest.mark.parametrize(
    ("data", "coding", "why"),
    [
        (orjson.dumps(BODY), "gzip", "not valid gzip"),  # plain JSON that says it is gzip
        (gzip.compress(orjson.dumps(BODY))[:-12], "gzip", "ends early"),
        (b"\x00\x01garbage", "deflate", "not valid deflate"),
    ],
)
def test_bytes_not_of_their_coding_get_a_400_that_says_so(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream, data: bytes, coding: str, why: str
) -> None:
    response = _post(client, gateway, data, coding)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_content_encoding" and why in error["message"]
    assert not edge.received


def test_a_small_body_that_inflates_past_the_limit_gets_a_413(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client, edge: FakeUpstream
) -> None:
    server = make_gateway(max_body_bytes=64 * 1024)
    bomb = gzip.compress(b'{"model":"tandem","messages":[{"role":"user","content":"' + b"a" * (50 << 20) + b'"}]}')
    assert len(bomb) < 64 * 1024  # 50 MB of JSON in ~50 KB: under the limit as sent
    response = _post(client, server, bomb, "gzip")
    assert response.status_code == 413, response.text
    assert "max_body_bytes" in response.json()["error"]["message"]
    assert not edge.received
    # The gateway still serves.
    assert _post(client, server, gzip.compress(orjson.dumps(BODY)), "gzip").status_code == 200


def test_the_messages_surface_says_a_coding_not_accepted_in_its_own_shape(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream
) -> None:
    response = _post(client, gateway, b"\x00", "br", "/v1/messages")
    assert response.status_code == 415, response.text
    body = response.json()
    # Anthropic's shape; a client's mistake, not the server's (`api_error` invites a retry).
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    assert "gzip or deflate" in body["error"]["message"]


def test_a_transfer_coding_besides_chunked_is_undone(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream
) -> None:
    """`Transfer-Encoding: gzip, chunked`: the server undoes the chunks, the gateway the gzip
    (the body was read as it came: "not valid UTF-8"); a transfer coding not accepted is a 415."""
    import socket

    packed = gzip.compress(orjson.dumps(BODY))
    chunked = b"%x\r\n" % len(packed) + packed + b"\r\n0\r\n\r\n"
    for coding, status in ((b"gzip, chunked", 200), (b"br, chunked", 415)):
        head = (
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: " + coding + b"\r\nConnection: close\r\n\r\n"
        )
        with socket.create_connection(("127.0.0.1", gateway.port), timeout=5) as sock:
            sock.sendall(head + chunked)
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 %d " % status), answer[:300]
    assert edge.received[0].body["messages"] == BODY["messages"]
    assert b"Transfer-Encoding 'br' is not supported" in answer

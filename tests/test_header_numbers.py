"""Numbers read from what a client sent (headers, the view's cookie) and the errors nobody
expected: odd digits are a client's mistake or nothing, never a 500; an unexpected error on a
translated surface is answered in that surface's shape and leaves the connection usable."""

from __future__ import annotations

import socket
from collections.abc import Callable

import httpx
import orjson
import pytest

from router.protocol.numbers import CAP, whole_number
from tests.gateway_server import GatewayServer
from tests.test_limits import read_answer

BODIES = {
    "/v1/chat/completions": {"model": "tandem", "messages": [{"role": "user", "content": "hi"}]},
    "/v1/messages": {"model": "tandem", "max_tokens": 20, "messages": [{"role": "user", "content": "hi"}]},
    "/v1/responses": {"model": "tandem", "input": "hi"},
}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0", 0),
        ("62", 62),
        ("0" * 5000 + "62", 62),
        ("9" * 5000, CAP),
        (str(CAP + 1), CAP),
        ("²", None),
        ("٣", None),
        ("-1", None),
        (" 5", None),
        ("", None),
        (None, None),
    ],
)
def test_whole_numbers_of_ascii_digits_only_and_capped(text: str | None, value: int | None) -> None:
    assert whole_number(text) == value


@pytest.mark.parametrize("path", list(BODIES))
@pytest.mark.parametrize("retries", [b"9" * 5000, "²".encode("latin-1"), b"-3", b"0" * 4999 + b"1"])
def test_an_odd_retry_count_header_is_not_a_500(
    gateway: GatewayServer, client: httpx.Client, path: str, retries: bytes
) -> None:
    for stream in (False, True):
        response = client.post(
            f"{gateway.url}{path}",
            json={**BODIES[path], "stream": stream},
            headers={"x-stainless-retry-count": retries},
        )
        assert response.status_code == 200, response.text[:300]


@pytest.mark.parametrize("path", list(BODIES))
def test_a_content_length_of_thousands_of_digits_is_read_for_its_value(gateway: GatewayServer, path: str) -> None:
    body = orjson.dumps(BODIES[path])
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n"
    with socket.create_connection(("127.0.0.1", gateway.port)) as sock:
        sock.sendall(head.encode() + b"Content-Length: " + b"0" * 5000 + str(len(body)).encode() + b"\r\n\r\n" + body)
        answer = read_answer(sock)
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:300]


@pytest.fixture()
def view(make_gateway: Callable[..., GatewayServer]) -> GatewayServer:
    return make_gateway(routes={"tandem": {"strategy": "edge"}}, ui={"enabled": True}, admin_api_keys=["k" * 32])


@pytest.mark.parametrize(
    "headers",
    [
        {"authorization": b"Basic \xff"},
        {"authorization": ("Basic " + "é" * 4).encode()},
        {"cookie": "tandem_ui=abc." + "9" * 5000 + ".x"},
        {"cookie": b"tandem_ui=abc.\xb2.x"},
    ],
    ids=["basic not ascii", "basic not ascii, utf-8", "expiry of 5000 digits", "expiry not a digit"],
)
def test_the_views_sign_in_refuses_unreadable_credentials_with_401(
    view: GatewayServer, client: httpx.Client, headers: dict[str, str | bytes]
) -> None:
    for path in ("/ui", "/ui/t/x"):
        assert client.get(f"{view.url}{path}", headers=headers).status_code == 401


def test_an_unexpected_error_on_a_translated_surface_is_answered_in_its_shape(
    gateway: GatewayServer, client: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = gateway.app.state.engine

    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug, with a request's text: sk-not-for-clients")

    monkeypatch.setattr(engine, "translated", broken)
    with httpx.Client(timeout=10) as http:  # one connection, kept alive between the requests
        messages = http.post(f"{gateway.url}/v1/messages", json=BODIES["/v1/messages"])
        assert messages.status_code == 500
        body = messages.json()
        assert body["type"] == "error" and body["error"]["type"] == "api_error"
        assert "RuntimeError" in body["error"]["message"] and "sk-not" not in messages.text
        responses = http.post(f"{gateway.url}/v1/responses", json=BODIES["/v1/responses"])
        assert responses.status_code == 500 and responses.json()["error"]["code"] == "internal_error"
        monkeypatch.undo()
        for _ in range(5):  # the same connection still answers
            assert http.post(f"{gateway.url}/v1/messages", json=BODIES["/v1/messages"]).status_code == 200

"""A client's mistakes get an OpenAI-shaped 4xx that says what was wrong, never a 500 or a hang."""

from __future__ import annotations

import httpx
import pytest

from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer


def post(client: httpx.Client, server: GatewayServer, content: bytes, **headers: str) -> httpx.Response:
    return client.post(
        f"{server.url}/v1/chat/completions",
        content=content,
        headers={"content-type": "application/json", **headers},
    )


def assert_error(response: httpx.Response, status: int, *words: str) -> dict[str, object]:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) >= {"message", "type", "code"}
    for word in words:
        assert word in error["message"], (word, error["message"])
    return error


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"", ["empty"]),
        (b"{not json", ["not valid JSON"]),
        (b"[1, 2]", ["JSON object", "array"]),
        (b'{"messages": [{"role": "user", "content": "x"}]}', ["'model'"]),
        (b'{"model": 5, "messages": [{"role": "user", "content": "x"}]}', ["'model'"]),
        (b'{"model": "tandem"}', ["'messages'"]),
        (b'{"model": "tandem", "messages": []}', ["'messages'", "empty"]),
        (b'{"model": "tandem", "messages": "hi"}', ["'messages'", "string"]),
        (b'{"model": "tandem", "messages": [{"content": "x"}]}', ["messages[0].role"]),
        (b'{"model": "tandem", "messages": [{"role": "user", "content": 5}]}', ["messages[0].content"]),
        (
            b'{"model": "tandem", "messages": [{"role": "user", "content": "x"}], "stream": "yes"}',
            ["'stream'"],
        ),
        (b'{"model": "tandem", "messages": [{"role": "user", "content": "x"}], "tools": {}}', ["'tools'"]),
        (
            b'{"model": "tandem", "messages": [{"role": "assistant", "content": null, "tool_calls": 5}]}',
            ["messages[0].tool_calls", "array", "got number"],
        ),
        (
            b'{"model": "tandem", "messages": [{"role": "assistant", "tool_calls": [{"function": "f"}]}]}',
            ["messages[0].tool_calls[0].function", "object"],
        ),
        (
            b'{"model": "tandem", "messages": [{"role": "assistant", "tool_calls": [{"function": {"name": 5}}]}]}',
            ["messages[0].tool_calls[0].function.name", "string"],
        ),
        (
            b'{"model": "tandem", "messages": [{"role": "assistant", "tool_calls": [7]}]}',
            ["messages[0].tool_calls[0]", "object"],
        ),
    ],
)
def test_malformed_requests_get_400_naming_the_problem(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream, content: bytes, words: list[str]
) -> None:
    assert_error(post(client, gateway, content), 400, *words)
    assert not edge.received


def test_unknown_model_gets_404_listing_the_valid_names(gateway: GatewayServer, client: httpx.Client) -> None:
    response = post(client, gateway, b'{"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}]}')
    error = assert_error(response, 404, "gpt-4o", "tandem/edge", "tandem/cloud")
    assert error["code"] == "model_not_found"


def test_unknown_model_route_answers_unknown_names(make_gateway: object, client: httpx.Client) -> None:
    server = make_gateway(unknown_model_route="tandem/cloud")  # type: ignore[operator]
    response = post(client, server, b'{"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}]}')
    assert response.status_code == 200
    assert response.headers["x-tandem-route"] == "tandem/cloud"


def test_body_over_the_limit_gets_413(make_gateway: object, client: httpx.Client, edge: FakeUpstream) -> None:
    server = make_gateway(max_body_bytes=4096)  # type: ignore[operator]
    big = b'{"model": "tandem", "messages": [{"role": "user", "content": "' + b"x" * 5000 + b'"}]}'
    assert_error(post(client, server, big), 413, "4096", "max_body_bytes")

    def chunked() -> object:
        yield big[:3000]
        yield big[3000:]

    response = client.post(f"{server.url}/v1/chat/completions", content=chunked())  # type: ignore[arg-type]
    assert_error(response, 413, "max_body_bytes")
    assert not edge.received


def test_invalid_target_header_gets_400(gateway: GatewayServer, client: httpx.Client) -> None:
    body = b'{"model": "tandem", "messages": [{"role": "user", "content": "x"}]}'
    assert_error(post(client, gateway, body, **{"x-tandem-target": "moon"}), 400, "x-tandem-target", "moon")


def test_unknown_path_and_method_are_openai_shaped(gateway: GatewayServer, client: httpx.Client) -> None:
    assert_error(client.get(f"{gateway.url}/v1/nothing"), 404, "/v1/nothing")
    assert_error(client.get(f"{gateway.url}/v1/chat/completions"), 405, "GET")


def test_client_keys_guard_the_api_but_not_health(make_gateway: object, client: httpx.Client) -> None:
    server = make_gateway(client_api_keys=["sk-good"])  # type: ignore[operator]
    body = b'{"model": "tandem", "messages": [{"role": "user", "content": "x"}]}'
    assert_error(post(client, server, body), 401, "missing API key")
    assert_error(post(client, server, body, authorization="Bearer sk-bad"), 401, "invalid API key")
    assert post(client, server, body, authorization="Bearer sk-good").status_code == 200
    assert client.get(f"{server.url}/v1/models").status_code == 401
    assert client.get(f"{server.url}/healthz").status_code == 200


def test_bad_requests_are_counted(gateway: GatewayServer, client: httpx.Client) -> None:
    post(client, gateway, b"{oops")
    metrics = client.get(f"{gateway.url}/metrics").text
    assert 'tandem_bad_requests_total{code="invalid_json"} 1.0' in metrics


@pytest.mark.parametrize(
    ("path", "body", "words"),
    [
        (
            "messages",
            {
                "max_tokens": 8,
                "system": [{"type": "text", "text": ["a"]}],
                "messages": [{"role": "user", "content": "x"}],
            },
            ["system[0].text", "string"],
        ),
        (
            "messages",
            {"max_tokens": 8, "messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]},
            ["messages[0].content[0].text", "string"],
        ),
        (
            "messages",
            {
                "max_tokens": 8,
                "messages": [
                    {"role": "user", "content": "x"},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": {}, "input": {}}]},
                ],
            },
            ["messages[1].content[0].name", "string"],
        ),
        (
            "messages",
            {
                "max_tokens": 8,
                "messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": 1, "content": "r"}]}],
            },
            ["messages[0].content[0].tool_use_id", "string"],
        ),
        (
            "responses",
            {"input": [{"role": "user", "content": [{"type": "input_text", "text": {"a": 1}}]}]},
            ["input[0].content[0].text", "string"],
        ),
        (
            "responses",
            {"input": [{"type": "function_call", "call_id": "c", "name": 5, "arguments": "{}"}]},
            ["input[0].name", "string"],
        ),
        (
            "responses",
            {"input": [{"type": "function_call_output", "call_id": [], "output": "r"}]},
            ["input[0].call_id", "string"],
        ),
    ],
)
def test_mistyped_parts_of_translated_requests_get_400_naming_them(
    gateway: GatewayServer,
    client: httpx.Client,
    edge: FakeUpstream,
    path: str,
    body: dict[str, object],
    words: list[str],
) -> None:
    response = client.post(f"{gateway.url}/v1/{path}", json={"model": "tandem", **body})
    assert response.status_code == 400, response.text
    message = response.json()["error"]["message"]
    for word in words:
        assert word in message, (word, message)
    assert not edge.received


@pytest.mark.parametrize("path", ["/v1/embeddings", "/v1/chat/completion", "/v2/chat/completions"])
def test_an_unknown_path_gets_a_404_naming_every_endpoint(
    gateway: GatewayServer, client: httpx.Client, path: str
) -> None:
    response = client.post(f"{gateway.url}{path}", json={"model": "tandem"})
    error = assert_error(response, 404, path)
    for endpoint in ("chat/completions", "messages", "responses", "models"):
        assert endpoint in str(error["message"])

"""A client's mistakes get an OpenAI-shaped 4xx that says what was wrong, never a 500 or a hang."""

from __future__ import annotations

from collections.abc import Callable

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
        (b'{"messages": [{"role": "user", "content": "x"}]}', ["'model' is required"]),
        # A required field of another type is named as such, not as missing.
        (
            b'{"model": 5, "messages": [{"role": "user", "content": "x"}]}',
            ["'model' must be a non-empty string, got number"],
        ),
        (b'{"model": "", "messages": [{"role": "user", "content": "x"}]}', ["'model'", "got an empty string"]),
        (b'{"model": "tandem", "messages": [{"role": 5, "content": "x"}]}', ["messages[0].role must be", "got number"]),
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


def test_target_header_repeated_with_different_values_gets_400(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    """Two `x-tandem-target` headers that disagree: the first won silently; now the client is
    told. The same value twice still forces it."""
    body = b'{"model": "tandem", "messages": [{"role": "user", "content": "x"}]}'
    url = f"{gateway.url}/v1/chat/completions"
    conflicting = [("Content-Type", "application/json"), ("X-Tandem-Target", "cloud"), ("x-tandem-target", "edge")]
    error = assert_error(client.post(url, content=body, headers=conflicting), 400, "x-tandem-target", "'cloud', 'edge'")
    assert error["code"] == "invalid_target"
    messages = {"model": "tandem", "max_tokens": 8, "messages": [{"role": "user", "content": "x"}]}
    response = client.post(f"{gateway.url}/v1/messages", json=messages, headers=conflicting[1:])
    assert response.status_code == 400 and "more than one value" in response.json()["error"]["message"]
    assert not edge.received and not cloud.received
    same = [("Content-Type", "application/json"), ("X-Tandem-Target", "cloud"), ("x-tandem-target", "cloud")]
    response = client.post(url, content=body, headers=same)
    assert response.status_code == 200, response.text
    assert response.headers["x-tandem-target"] == "cloud" and response.headers["x-tandem-reason"] == "header_forced"


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
        # Ids that tie a call to its result, missing: sent on as "", the upstream refuses or
        # the model reads a result of no call.
        (
            "messages",
            {
                "max_tokens": 8,
                "messages": [{"role": "user", "content": [{"type": "tool_result", "content": "r"}]}],
            },
            ["messages[0].content[0].tool_use_id is required"],
        ),
        (
            "messages",
            {
                "max_tokens": 8,
                "messages": [
                    {"role": "user", "content": "x"},
                    {"role": "assistant", "content": [{"type": "tool_use", "name": "f", "input": {}}]},
                ],
            },
            ["messages[1].content[0].id is required"],
        ),
        (
            "messages",
            {
                "max_tokens": 8,
                "messages": [
                    {"role": "user", "content": "x"},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": "ls"}]},
                ],
            },
            ["messages[1].content[0].input must be an object", "string"],
        ),
        (
            "messages",
            {
                "max_tokens": 8,
                "system": [{"type": "image", "source": {}}],
                "messages": [{"role": "user", "content": "x"}],
            },
            ["system[0] must be a text block", "'image'"],
        ),
        (
            "messages",
            {"max_tokens": 8, "system": [{"text": "be brief"}], "messages": [{"role": "user", "content": "x"}]},
            ["system[0] must be a text block", "got type null"],
        ),
        (
            "responses",
            {"input": [{"type": "function_call_output", "output": "r"}]},
            ["input[0].call_id is required"],
        ),
        (
            "responses",
            {"input": [{"type": "function_call", "name": "f", "arguments": "{}"}]},
            ["input[0].call_id is required"],
        ),
        ("responses", {"input": []}, ["'input' must be a non-empty string or a non-empty array"]),
        ("responses", {"input": [{"type": 5}]}, ["input[0].type must be a string", "number"]),
        (
            "responses",
            {"input": [{"type": "function_call", "call_id": "c", "arguments": "{}"}]},
            ["input[0].name is required"],
        ),
        ("responses", {"input": [{"type": "teleport"}]}, ["'input' has no item a chat model can be sent", "teleport"]),
        ("responses", {"input": [{"role": "wizard", "content": "x"}]}, ["input[0].role must be", "'wizard'"]),
        (
            "messages",
            {"max_tokens": None, "messages": [{"role": "user", "content": "x"}]},
            ["'max_tokens' is required"],
        ),
        # Required fields of another type are named as such, not as missing.
        (
            "messages",
            {"model": 5, "max_tokens": 8, "messages": [{"role": "user", "content": "x"}]},
            ["'model' must be a non-empty string, got number"],
        ),
        ("messages", {"max_tokens": 8, "messages": 5}, ["'messages' must be a non-empty array", "got number"]),
        (
            "messages",
            {"max_tokens": 8, "messages": [{"role": 5, "content": "x"}]},
            ["messages[0].role must be 'user' or 'assistant', got number"],
        ),
        (
            "messages",
            {"max_tokens": 8, "messages": [{"role": "user", "content": 5}]},
            ["messages[0].content must be a string or an array", "got number"],
        ),
        (
            "messages",
            {"max_tokens": 8, "messages": [{"role": "user", "content": []}]},
            ["messages[0].content must hold text or content blocks", "every turn's content is empty"],
        ),
        *(
            (
                "messages",
                {"max_tokens": 8, "messages": [{"role": "user", "content": "x"}], "tools": tools},
                words,
            )
            for tools, words in (
                ([{"name": 5, "input_schema": {}}], ["tools[0].name must be a non-empty string, got number"]),
                ([{"input_schema": {}}], ["tools[0].name is required"]),
                ([{"name": "f"}, {"name": "f"}], ["tools[1].name 'f' names a tool given before it"]),
            )
        ),
        (
            "messages",
            {
                "max_tokens": 8,
                "messages": [{"role": "user", "content": "x"}],
                "tools": [{"name": "f"}],
                "tool_choice": {"type": "tool"},
            },
            ["tool_choice.name is required"],
        ),
        ("responses", {"model": 5, "input": "x"}, ["'model' must be a non-empty string, got number"]),
        ("responses", {"input": 5}, ["'input' must be a non-empty string", "got number"]),
        ("responses", {}, ["'input' is required"]),
        ("responses", {"input": "x", "reasoning": {"effort": 5}}, ["reasoning.effort must be a string, got number"]),
        ("responses", {"input": [{"role": "user", "content": 5}]}, ["input[0].content must be", "got number"]),
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


@pytest.mark.parametrize(
    ("path", "hint"),
    [
        ("/v1/v1/messages", "drop /v1 from its base URL"),
        ("/s/run-1/v1/v1/chat/completions", "drop /v1 from its base URL"),
        ("/v1/completions", "send chat/completions"),
        ("/v1/embeddings", "embeddings are not served"),
    ],
)
def test_a_404_says_what_the_client_most_likely_did_wrong(
    gateway: GatewayServer, client: httpx.Client, path: str, hint: str
) -> None:
    """Anthropic's SDK adds /v1 to its base URL itself; the legacy completions API is not served."""
    assert_error(client.post(f"{gateway.url}{path}", json={"model": "tandem"}), 404, path, hint)


USER = [{"role": "user", "content": "x"}]


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"max_tokens": -1}, ["'max_tokens'", "at least 1", "-1"]),
        ({"max_tokens": 10**30}, ["'max_tokens'", "at least 1"]),
        ({"max_completion_tokens": 0}, ["'max_completion_tokens'", "at least 1"]),
        ({"n": 10**30}, ["'n'", "between 1 and 128"]),
        ({"n": 0}, ["'n'", "between 1 and 128", "0"]),
        ({"temperature": -1}, ["'temperature'", "between 0 and 2"]),
        ({"temperature": "hot"}, ["'temperature'", '"hot"']),
        ({"top_p": 5}, ["'top_p'", "between 0 and 1"]),
        ({"presence_penalty": 3}, ["'presence_penalty'", "between -2 and 2"]),
        ({"seed": 1e40}, ["'seed'", "64-bit"]),
        ({"seed": -(2**63) - 1}, ["'seed'", "64-bit"]),  # parsed as -2.0**63, a float
        ({"top_logprobs": -1}, ["'top_logprobs'", "between 0 and 20"]),
        # A nested member of the wrong type is named itself, with what it got (not "got object").
        (
            {"stream_options": {"include_usage": "yes"}},
            ["'stream_options.include_usage' must be a boolean", 'got the string "yes"'],
        ),
        # A number equal to a boolean (1 == True, 0.0 == False in Python) is not one.
        ({"stream_options": {"include_usage": 1}}, ["'stream_options.include_usage' must be a boolean", "got 1"]),
        ({"stream_options": {"include_usage": 0.0}}, ["'stream_options.include_usage' must be a boolean", "got 0.0"]),
        ({"stream_options": 5}, ["'stream_options' must be an object", "got 5"]),
        ({"tool_choice": "maybe"}, ["'tool_choice'", "required"]),
        ({"response_format": {"type": 5}}, ["'response_format.type' must be a string, got 5"]),
        ({"response_format": {}}, ["'response_format.type' is required"]),
        ({"tools": [{"type": "function"}]}, ["tools[0].function", "required"]),
        ({"messages": [{"role": "wizard", "content": "x"}]}, ["messages[0].role", "wizard", "assistant"]),
        ({"messages": [{"role": "user", "content": [1, 2]}]}, ["messages[0].content[0]", "content part"]),
        ({"messages": [{"role": "user", "content": [{"text": "x"}]}]}, ["messages[0].content[0]", "'type'"]),
        # A content part's value of another type, named: it was sent on to the upstream.
        (
            {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": 5}]}]},
            ["messages[0].content[0].image_url must be an object with a 'url'", "got number"],
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}, {"type": "image_url"}]}]},
            ["messages[0].content[1].image_url is required"],
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": [1]}}]}]},
            ["messages[0].content[0].image_url.url must be a non-empty string", "got array"],
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "text", "text": {"a": 1}}]}]},
            ["messages[0].content[0].text must be a string, got object"],
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "file", "file": "f"}]}]},
            ["messages[0].content[0].file must be an object, got string"],
        ),
    ],
)
def test_values_out_of_the_apis_range_get_400_naming_them(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream, fields: dict[str, object], words: list[str]
) -> None:
    body = {"model": "tandem", "messages": USER, **fields}
    for stream in (False, True):
        assert_error(client.post(f"{gateway.url}/v1/chat/completions", json={**body, "stream": stream}), 400, *words)
    assert not edge.received


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"temperature": 0, "top_p": 1, "n": 1, "max_tokens": 1, "seed": -(2**63), "presence_penalty": -2}, []),
        ({"tool_choice": "required", "tools": [{"type": "function", "function": {"name": "f"}}]}, []),
        ({"messages": [{"role": "ipython", "content": "x"}, {"role": "developer", "content": "y"}, *USER]}, []),
        ({"response_format": {"type": "json_object"}, "stream_options": {"include_usage": False}}, []),
        ({"max_tokens": 10.0, "temperature": 2.0}, []),  # integral floats, as some clients write them
        (
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "x"},
                            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}},
                            {"type": "image_url", "image_url": "https://example.com/a.png"},
                        ],
                    }
                ]
            },
            [],
        ),
    ],
)
def test_values_at_the_ends_of_the_range_pass(
    gateway: GatewayServer, client: httpx.Client, fields: dict[str, object], words: list[str]
) -> None:
    response = client.post(f"{gateway.url}/v1/chat/completions", json={"model": "tandem", "messages": USER, **fields})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    ("path", "fields", "words"),
    [
        ("messages", {"max_tokens": -1}, ["'max_tokens'", "at least 1"]),
        ("messages", {"max_tokens": 5, "temperature": 1.5}, ["'temperature'", "between 0 and 1"]),
        ("messages", {"max_tokens": 5, "system": [5, None]}, ["'system'", "array of objects"]),
        ("messages", {"max_tokens": 5, "tools": [5]}, ["'tools'", "array of objects"]),
        ("messages", {"max_tokens": 5, "stop_sequences": [1]}, ["'stop_sequences'", "strings"]),
        ("messages", {"max_tokens": 5, "messages": [5]}, ["messages[0]", "object"]),
        ("messages/count_tokens", {"messages": "x"}, ["'messages'"]),
        ("messages/count_tokens", {"messages": [{"role": "user", "content": "x"}], "tools": [5]}, ["'tools'"]),
        # What /v1/messages refuses is not counted: named as it is there.
        (
            "messages/count_tokens",
            {"messages": [{"role": "user", "content": [{"type": "image", "source": 5}]}]},
            ["messages[0].content[0].source must be an object", "got number"],
        ),
        (
            "messages/count_tokens",
            {"messages": [{"role": "user", "content": [{"type": "document", "source": "x"}]}]},
            ["messages[0].content[0].source must be an object", "got string"],
        ),
        (
            "messages",
            {
                "max_tokens": 5,
                "messages": [{"role": "user", "content": [{"type": "image", "source": {"type": "url"}}]}],
            },
            ["messages[0].content[0].source.url is required"],
        ),
        ("responses", {"input": "x", "tools": [5]}, ["'tools'", "array of objects"]),
        ("responses", {"input": "x", "max_output_tokens": -1}, ["'max_output_tokens'", "at least 1"]),
        ("responses", {"input": "x", "temperature": 3}, ["'temperature'", "between 0 and 2"]),
    ],
)
def test_translated_surfaces_refuse_values_out_of_range_with_400(
    gateway: GatewayServer,
    client: httpx.Client,
    edge: FakeUpstream,
    path: str,
    fields: dict[str, object],
    words: list[str],
) -> None:
    body = (
        {"model": "tandem", "messages": USER, **fields}
        if path.startswith("messages")
        else {"model": "tandem", **fields}
    )
    response = client.post(f"{gateway.url}/v1/{path}", json=body)
    assert response.status_code == 400, response.text
    message = response.json()["error"]["message"]
    for word in words:
        assert word in message, (word, message)
    assert not edge.received


def test_a_body_that_is_not_utf8_is_named_so(gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream) -> None:
    """The JSON parser says "surrogates not allowed" at char 0 wherever the byte is: the 400
    names the encoding and the byte's offset instead."""
    body = b'{"model": "tandem", "messages": [{"role": "user", "content": "h\xff"}]}'
    where = body.index(b"\xff")
    for path in ("chat/completions", "messages", "responses"):
        response = client.post(f"{gateway.url}/v1/{path}", content=body, headers={"content-type": "application/json"})
        assert response.status_code == 400, response.text
        assert "not valid UTF-8" in response.text and f"byte {where}" in response.text
    assert not edge.received


def test_a_trailing_slash_is_the_endpoint_without_it(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream
) -> None:
    """`/v1/chat/completions/` (a base URL joined with one slash too many) is answered as the
    endpoint, not redirected with an empty body."""
    body = {"model": "tandem", "messages": [{"role": "user", "content": "x"}]}
    response = client.post(f"{gateway.url}/v1/chat/completions/", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["choices"][0]["message"]["role"] == "assistant"
    assert client.get(f"{gateway.url}/v1/models/").json()["data"]
    response = client.get(f"{gateway.url}/v1/nothing/")
    assert response.status_code == 404 and "location" not in response.headers


@pytest.mark.parametrize("depth", [253, 254, 300, 1024])
def test_tool_call_arguments_nested_past_what_json_writes_are_answered(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client, cloud: FakeUpstream, depth: int
) -> None:
    """Arguments are a string: the body's depth limit (128) does not see inside it, and orjson
    reads 1,024 levels but writes 254. Stitching's digest and the redact route's re-encoding
    wrote them again (a 500 from 254 to 1,024 levels); now compared and scanned as written."""
    server = make_gateway(
        routes={"tandem": {"strategy": "edge"}, "private": {"strategy": "cloud", "privacy": "redact"}}
    )
    secret = "sk-proj-" + "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF"
    arguments = "[" * (depth - 1) + f'["{secret}"]' + "]" * (depth - 1)
    for model in ("tandem", "private"):
        body = {
            "model": model,
            "messages": [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "ok"},
            ],
        }
        for _ in range(2):  # the second continues the first's history (stitched by its digest)
            response = client.post(f"{server.url}/v1/chat/completions", json=body)
            assert response.status_code == 200, response.text
    # The redact route kept the secret from the cloud however deep it was.
    sent = [request.body for request in cloud.received]
    assert sent and all(secret not in str(body) for body in sent)
    responses = {
        "model": "tandem",
        "input": [
            {"role": "user", "content": "hi"},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": arguments},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        ],
    }
    response = client.post(f"{server.url}/v1/responses", json=responses)
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/messages", "/v1/responses"])
@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"", ["request body is empty"]),
        (b"  \n", ["request body is empty"]),
        (b"[1, 2]", ["must be a JSON object", "got array"]),
        (b'"hi"', ["must be a JSON object", "got string"]),
        (b'{"model": "tandem", "x": ' + b"9" * 5_000 + b"}", ["number too large"]),
    ],
)
def test_a_body_that_is_no_object_gets_the_same_message_on_every_surface(
    gateway: GatewayServer, client: httpx.Client, path: str, content: bytes, words: list[str]
) -> None:
    response = client.post(f"{gateway.url}{path}", content=content, headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text
    message = response.json()["error"]["message"]
    assert all(word in message for word in words), message


def _turns(count: int) -> list[dict[str, str]]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"} for i in range(count)]


def test_a_history_over_max_messages_gets_400_on_every_surface(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client, edge: FakeUpstream
) -> None:
    """Each message costs the step's bookkeeping time whatever its size: a body of 400,000
    one-letter messages fit the body limit and held every other client for seconds."""
    server = make_gateway(routes={"tandem": {"strategy": "edge"}}, limits={"max_messages": 40})
    before = len(edge.received)
    response = client.post(f"{server.url}/v1/chat/completions", json={"model": "tandem", "messages": _turns(41)})
    error = assert_error(response, 400, "41 messages", "40", "limits.max_messages")
    assert (error["code"], error["param"]) == ("array_above_max_length", "messages")
    anthropic = client.post(
        f"{server.url}/v1/messages", json={"model": "tandem", "max_tokens": 5, "messages": _turns(41)}
    )
    assert anthropic.status_code == 400, anthropic.text
    assert "limits.max_messages" in anthropic.json()["error"]["message"]
    responses = client.post(f"{server.url}/v1/responses", json={"model": "tandem", "input": _turns(41)})
    assert responses.status_code == 400, responses.text
    assert "limits.max_messages" in responses.json()["error"]["message"]
    assert len(edge.received) == before  # nothing went upstream
    # At the limit, a step; and the next step extending it (parsed from the last body) too.
    history = _turns(39)
    for _ in range(2):
        response = client.post(f"{server.url}/v1/chat/completions", json={"model": "tandem", "messages": history})
        assert response.status_code == 200, response.text
        history = [*history, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "more"}][-40:]


def test_a_long_history_parsed_from_its_last_body_keeps_its_depth_check(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client
) -> None:
    """The next body of a 3,000-message history is parsed from the last one; a message nested
    past max_json_depth among its new messages is still refused."""
    server = make_gateway(routes={"tandem": {"strategy": "edge"}})
    history = _turns(3_001)
    for _ in range(3):
        response = client.post(f"{server.url}/v1/chat/completions", json={"model": "tandem", "messages": history})
        assert response.status_code == 200, response.text
        history = [*history, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "more"}]
    deep: object = "x"
    for _ in range(200):
        deep = [deep]
    history = [*history[:-1], {"role": "user", "content": "more", "deep": deep}]
    response = client.post(f"{server.url}/v1/chat/completions", json={"model": "tandem", "messages": history})
    assert_error(response, 400, "more than 128 levels")

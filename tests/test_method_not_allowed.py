"""A method a path does not take (405) is answered in the shape of the path's surface: Anthropic's
on the Messages paths (as every other error there), OpenAI's elsewhere; `Allow` names the methods."""

from __future__ import annotations

import httpx
import pytest

from tests.gateway_server import GatewayServer


@pytest.mark.parametrize(
    "path", ["/v1/messages", "/v1/messages/count_tokens", "/messages", "/s/run-1/v1/messages/count_tokens"]
)
def test_a_405_on_the_messages_paths_is_anthropic_shaped(
    gateway: GatewayServer, client: httpx.Client, path: str
) -> None:
    response = client.get(f"{gateway.url}{path}")
    assert response.status_code == 405, response.text
    assert response.headers["allow"] == "POST"
    body = response.json()
    assert body["type"] == "error" and set(body) == {"type", "error"}
    assert body["error"]["type"] == "invalid_request_error"
    assert f"method GET is not allowed on {path}" in body["error"]["message"]


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/responses"])
def test_a_405_elsewhere_stays_openai_shaped(gateway: GatewayServer, client: httpx.Client, path: str) -> None:
    response = client.delete(f"{gateway.url}{path}")
    assert response.status_code == 405, response.text
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error" and error["code"] == "bad_method"

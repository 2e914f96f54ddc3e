"""`GET /v1/models/{id}` (a model a client may ask for, or an OpenAI-shaped 404) and
`/v1/messages/count_tokens` (an estimate by characters, images by their size), with the real
openai and anthropic SDKs."""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable

import anthropic
import httpx
import openai
import orjson
import pytest

from router.surfaces.messages.token_estimate import IMAGE_MAX_TOKENS, image_size, input_tokens
from tests.gateway_server import GatewayServer

ALIASES = {"claude-*": {"route": "tandem", "models": ["claude-sonnet-4-6"]}}


@pytest.fixture()
def aliased(make_gateway: Callable[..., GatewayServer]) -> GatewayServer:
    return make_gateway(
        routes={"tandem": {"strategy": "edge"}, "tandem/cloud": {"strategy": "cloud"}}, model_aliases=ALIASES
    )


def test_a_model_is_retrieved_by_route_or_alias_name(aliased: GatewayServer, client: httpx.Client) -> None:
    models = openai.OpenAI(base_url=aliased.base_url, api_key="unused", max_retries=0).models
    assert models.retrieve("tandem").id == "tandem"
    assert models.retrieve("tandem/cloud").id == "tandem/cloud"  # a name with a slash
    assert models.retrieve("claude-opus-4-7").id == "claude-opus-4-7"  # matched by an alias, though not listed
    claude = anthropic.Anthropic(base_url=aliased.url, api_key="unused", max_retries=0)
    assert claude.models.retrieve("claude-sonnet-4-6").display_name == "claude-sonnet-4-6"
    with pytest.raises(openai.NotFoundError) as raised:
        models.retrieve("gpt-nope")
    error = raised.value.body
    assert isinstance(error, dict) and error["code"] == "model_not_found" and "gpt-nope" in error["message"]
    for prefix in ("", "/s/run-1"):  # the other API prefixes answer as /v1 does
        assert client.get(f"{aliased.url}{prefix}/models/tandem").json()["id"] == "tandem"


def _png(width: int, height: int, size: int) -> str:
    header = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + struct.pack(">II", width, height) + b"\x08\x06\x00\x00\x00"
    return base64.b64encode(header + b"\x00" * (size - len(header))).decode()


def test_image_sizes_are_read_from_their_headers() -> None:
    png = base64.b64decode(_png(640, 480, 100))
    gif = b"GIF89a" + struct.pack("<HH", 32, 16) + b"\x00" * 10
    jpeg = (
        b"\xff\xd8" + b"\xff\xe0\x00\x04\x00\x00" + b"\xff\xc0\x00\x11\x08" + struct.pack(">HH", 300, 200) + b"\x00" * 8
    )
    assert [image_size(png), image_size(gif), image_size(jpeg), image_size(b"junk")] == [
        (640, 480),
        (32, 16),
        (200, 300),
        None,
    ]


def test_count_tokens_counts_text_by_characters_and_images_by_size(gateway: GatewayServer) -> None:
    claude = anthropic.Anthropic(base_url=gateway.url, api_key="unused", max_retries=0)
    text = "def parse_row(line):\n    return line.split(',')\n" * 200  # 9,600 characters
    counted = claude.messages.count_tokens(model="tandem", messages=[{"role": "user", "content": text}])
    assert 2400 <= counted.input_tokens <= 3000  # about 3.6 characters a token, plus the turn
    screenshot = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": _png(1280, 800, 300_000)},
    }
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": [screenshot]}
    body = {"model": "tandem", "messages": [{"role": "user", "content": [result]}]}
    counted = claude.messages.count_tokens(**body)  # type: ignore[arg-type]
    # Anthropic: width x height / 750 tokens; the JSON bytes / 4 counted the base64 (100,000).
    assert counted.input_tokens == input_tokens(body) and 1300 < counted.input_tokens < IMAGE_MAX_TOKENS


def test_the_streamed_input_estimate_counts_an_image_by_its_size(gateway: GatewayServer, client: httpx.Client) -> None:
    # message_start carries an estimate before the upstream's usage: a screenshot in a tool
    # result is ~1,400 tokens, not its 400,000 base64 characters / 4.
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": _png(1280, 800, 300_000)}}
    call = {"type": "tool_use", "id": "toolu_1", "name": "shot", "input": {}}
    turns = [
        {"role": "user", "content": "take a screenshot"},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [image]}]},
    ]
    body = {"model": "tandem", "max_tokens": 8, "stream": True, "messages": turns}
    with client.stream("POST", f"{gateway.url}/v1/messages", json=body) as answer:
        lines = [line for line in answer.iter_lines() if line.startswith("data: ")]
    start = next(orjson.loads(line[6:]) for line in lines if '"message_start"' in line)
    assert 1300 < start["message"]["usage"]["input_tokens"] < 2000

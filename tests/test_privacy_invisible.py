"""Characters that show as nothing (zero-width space, joiner, word joiner, byte order mark, soft
hyphen) inside a value do not hide it: the detectors read the text without them and the finding
is the value as written, invisible characters and all, so that it is redacted whole and restored
exactly. In JSON written ASCII-only (`\\u200b`) too."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import orjson
import pytest

from router.privacy.detect import detect_uncached
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

MakeGateway = Callable[..., GatewayServer]

CASES = [
    ("card 4111\u200b1111\u200b1111\u200b1111 ok", "CARD", "4111\u200b1111\u200b1111\u200b1111"),
    ("mail jane.\u200bdoe@example.com", "EMAIL", "jane.\u200bdoe@example.com"),
    ("mail jane.doe\u2060@example.com", "EMAIL", "jane.doe\u2060@example.com"),
    ("日本語 bob\u200d@corp-mail.com", "EMAIL", "bob\u200d@corp-mail.com"),
    (
        "token ghp_\u00adabcdefghijklmnopqrstuvwxyz0123456789 end",
        "CODE_TOKEN",
        "ghp_\u00adabcdefghijklmnopqrstuvwxyz0123456789",
    ),
    ('{"note": "card 4111\\u200b1111\\u200b1111\\u200b1111"}', "CARD", "4111\\u200b1111\\u200b1111\\u200b1111"),
    ('{"a": "mail jane.\\u200Bdoe@example.com", "b": "x\\"y"}', "EMAIL", "jane.\\u200Bdoe@example.com"),
]


@pytest.mark.parametrize(("text", "kind", "value"), CASES)
def test_a_value_parted_by_invisible_characters_is_found_as_written(text: str, kind: str, value: str) -> None:
    found = [(f.type, f.value) for f in detect_uncached(text)]
    assert (kind, value) in found, found
    finding = next(f for f in detect_uncached(text) if f.value == value)
    assert text[finding.start : finding.end] == value


def test_text_without_them_and_ordinary_unicode_escapes_are_read_as_before() -> None:
    assert [(f.type, f.value) for f in detect_uncached('{"a": "caf\\u00e9 jane.doe@example.com"}')] == [
        ("EMAIL", "jane.doe@example.com")
    ]
    assert detect_uncached("zero\u200bwidth between words, nothing else") == []


def test_the_cloud_never_sees_the_value_and_the_answer_gets_it_back_exactly(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "cloud", "privacy": "redact"}})
    card = "4111\u200b1111\u200b1111\u200b1111"
    cloud.push({"text": "noted: [CARD_1]"})  # the cloud echoes the placeholder it was sent
    response = client.post(
        f"{server.url}/v1/chat/completions",
        json={"model": "tandem", "messages": [{"role": "user", "content": f"card {card}"}]},
        headers={"X-Session-ID": "invisible"},
    )
    assert response.status_code == 200, response.text
    sent = orjson.dumps(cloud.received[-1].body["messages"]).decode()
    assert "4111" not in sent and "1111" not in sent, sent
    assert response.json()["choices"][0]["message"]["content"] == f"noted: {card}"

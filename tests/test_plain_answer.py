"""A whole chat answer sent without a Starlette `Response` (router/api/http.py `PlainAnswer`)
goes out as the `Response` that `chat_response` builds would send it: the same messages, the
same head in the same order, then the answer's `after` work, once."""

from __future__ import annotations

from typing import Any

import pytest

from router.api.http import PlainAnswer, chat_response
from router.result import Answer, Facts


async def _sent(app: Any) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        messages.append(message)

    async def receive() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    await app({"type": "http", "method": "POST"}, receive, send)
    return messages


@pytest.mark.parametrize(
    "facts",
    [
        Facts("edge", "fast", "strategy", "t-1", 3),
        Facts("cloud", "judge", "judge", "t-2", 1, score=0.4321, fallback=True, stitch="extended"),
    ],
)
async def test_a_plain_answer_is_sent_as_its_response_would_be(facts: Facts) -> None:
    afters: list[str] = []

    async def after() -> None:
        afters.append("ran")

    body = b'{"id": "x", "choices": []}'
    plain = await _sent(PlainAnswer(Answer(facts, {}, body, after)))
    assert afters == ["ran"]
    built = await _sent(chat_response(Answer(facts, {}, body, after)))
    assert afters == ["ran", "ran"]
    assert plain == built
    assert plain[0]["headers"][-2:] == [(b"content-length", b"%d" % len(body)), (b"content-type", b"application/json")]
    assert plain[1]["body"] == body


@pytest.mark.parametrize(
    "facts",
    [
        Facts("edge", "fast", "route_fixed", "t-1", 3),
        Facts("cloud", "judge", "judge", "s:é-run", 12, score=1e-7, fallback=True, stitch="rewritten"),
        Facts("edge", "r", "judge", "t-3", 0, score=0.0),
    ],
)
def test_the_raw_headers_are_the_headers_encoded(facts: Facts) -> None:
    expected = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in facts.headers().items()]
    assert facts.raw_headers() == expected

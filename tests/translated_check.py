"""The check the translated surfaces' prefix tests share: a body parsed from the last one
(`PrefixParser.translated(spec)`) against the whole path (parse, translate, `chat_request`):
the chat body, every field of the chat request and its bytes, or the same error."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from router.errors import GatewayError
from router.protocol.chat import chat_request
from router.protocol.prefix import PrefixParser
from router.protocol.prefix_translated import Translated, parsed

Outcome = Translated | tuple[int, str, str | None, str | None]


def whole(spec: Any, body: bytes) -> Translated:
    surface_body = parsed(body, 128)
    chat = spec.to_chat(surface_body)
    view = chat if spec.answer_view is None else spec.answer_view(surface_body, chat)
    return Translated(chat, chat_request(chat, len(body), 128), view, surface_body)


def outcome(parse: Callable[[], Translated]) -> Outcome:
    try:
        return parse()
    except GatewayError as exc:
        return exc.status, exc.message, exc.param, exc.code


def check(parser: PrefixParser, spec: Any, body: bytes) -> None:
    got = outcome(lambda: parser.translated(spec).parse(body))
    expected = outcome(lambda: whole(spec, body))
    if not isinstance(expected, Translated) or not isinstance(got, Translated):
        assert got == expected
        return
    assert got.chat == expected.chat
    assert got.view == expected.view
    assert got.body == expected.body  # what a kept response keeps of the request
    assert list(got.chat) == list(expected.chat)
    request, made = got.request, expected.request
    assert (request.raw, request.model, request.stream, request.size) == (made.raw, made.model, made.stream, made.size)
    assert request.messages == made.messages
    assert bytes(request.encoded()) == bytes(made.encoded())

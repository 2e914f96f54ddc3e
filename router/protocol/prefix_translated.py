"""The translated surfaces' bodies parsed from the last one: only new turns are parsed,
checked, translated to chat messages and encoded.

`/v1/messages` (Claude Code) sends its whole history at every step, as chat clients do, in a
top-level `messages` array of turns. Each turn's chat messages depend on that turn alone
(`surfaces/messages/translate.py`'s `turn_messages`), so the chat messages of the turns a body shares with one
seen before (router/protocol/prefix_store.py) are those made then, with their encoding; the
system prompt and the other fields are translated at every step (they are not the history).

Exactness: the request equals the whole path's (`to_chat(parsed(body))` then `chat_request`)
in every field and in its bytes, and a body the split path cannot take, or would refuse, goes
the whole path, which writes the error a client gets (tests/test_prefix_translated.py). Every
check of the whole path is made: on the surface body (its depth: the old turns' at the step
that learned them, the new turns' and the trailing fields' now), on the turns (as translated),
and on the chat request (the new chat messages, the system message, the other fields).
`/v1/responses` (Codex) likewise, with its `input` items: there an item's translation may
change the chat message before it (a function call joins its assistant message), so a body is
split only after an item whose last chat message no later item can change (not an assistant's,
not in the leading run of system messages, which the `instructions` join at every step).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from router.errors import GatewayError, bad_request
from router.protocol.chat import ChatRequest, chat_request, check_messages, encoded_request, not_json
from router.protocol.containers import check_containers
from router.protocol.fields import check_depth, too_deep, type_name
from router.protocol.prefix_store import KEY_BYTES, PrefixStore, Reader, Split


def parsed(raw: bytes, max_depth: int) -> dict[str, Any]:
    """A surface's body as a JSON object, checked for depth (before translating it: no
    recursion error later); a client's mistake raises a 400."""
    if not raw.strip():
        raise bad_request("request body is empty; expected a JSON object")
    check_containers(raw)
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if str(exc).startswith("depth limit"):
            raise too_deep(max_depth) from exc
        raise not_json(raw, exc) from exc
    if not isinstance(body, dict):
        raise bad_request(f"request body must be a JSON object, got {type_name(body)}")
    check_depth(body, max_depth)
    return body


@dataclass(frozen=True, slots=True)
class SurfaceSpec:
    """A translated surface: its whole translation, and the pieces of it used on a split body
    (None: always the whole path)."""

    name: str
    to_chat: Callable[[dict[str, Any]], dict[str, Any]]
    array: str | None = None  # the top-level array of the history
    check: Callable[[dict[str, Any]], None] | None = None  # the body's own fields
    # The chat messages each item adds (items, index of the first), checked as the whole path does.
    items: Callable[[list[Any], int], list[list[dict[str, Any]]]] | None = None
    # The chat messages before the items' (a system prompt), and how many of the items' they
    # stand for (Responses: the instructions join the leading system messages).
    lead: Callable[[dict[str, Any], list[dict[str, Any]]], tuple[list[dict[str, Any]], int]] | None = None
    fields: Callable[[dict[str, Any], list[dict[str, Any]]], dict[str, Any]] | None = None  # the chat body
    usable: Callable[[list[dict[str, Any]], int], bool] | None = None  # see prefix_store.Reader
    # The chat body as the surface's answer reads it (surface body, chat body): what the answer
    # must know of the request that the chat body cannot carry upstream (None: the chat body).
    answer_view: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]] | None = None
    # The body's own fields that say who sent it, where the chat body drops them (`ChatRequest.said`).
    said: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Translated:
    chat: dict[str, Any]  # the chat-completions body
    request: ChatRequest
    view: dict[str, Any]  # the chat body as the surface's answer reads it (SurfaceSpec.answer_view)
    body: dict[str, Any]  # the surface's body as read (its history items the objects made when they were new)


class TranslatedParser:
    """`parse(body, namespace)`: a surface's body as a chat request, equal to the whole path's."""

    def __init__(self, spec: SurfaceSpec, store: PrefixStore, max_depth: int, min_bytes: int) -> None:
        self.spec = spec
        self.store = store
        self.max_depth = max_depth
        self.min_bytes = max(min_bytes, KEY_BYTES + 1)
        self.reader = Reader(spec.array or "", self._translate, max_depth, translates=True, usable=spec.usable)
        self.reused = 0
        self.whole = 0

    def parse(self, body: bytes, namespace: str = "") -> Translated:
        spec = self.spec
        namespace = f"{spec.name}:{namespace}"  # the surfaces' bodies never meet
        reusable = spec.array is not None and self.store.budget_bytes > 0 and len(body) >= self.min_bytes
        if reusable:
            split = self.store.split(body, namespace, self.reader)
            if split is not None:
                try:
                    translated = self._request(split, len(body))
                except GatewayError:
                    translated = None
                if translated is not None:
                    self.store.replace(split)
                    self.reused += 1
                    return translated
        self.whole += 1
        surface_body = parsed(body, self.max_depth)
        chat = spec.to_chat(surface_body)
        translated = Translated(
            chat,
            self._said(chat_request(chat, len(body), self.max_depth), surface_body),
            self._view(surface_body, chat),
            surface_body,
        )
        if reusable:
            self.store.learn(body, namespace, surface_body, self.reader)
        return translated

    def _translate(self, items: list[Any], first: int) -> list[list[dict[str, Any]]]:
        assert self.spec.items is not None
        check_depth(items, self.max_depth - 1, self.max_depth)  # the surface body's depth, for these items
        made = self.spec.items(items, first)
        messages = [message for one in made for message in one]
        if messages:
            check_messages(messages)
        return made

    def _request(self, split: Split, size: int) -> Translated | None:
        spec = self.spec
        assert spec.array is not None and spec.check and spec.lead and spec.fields
        body = {**split.head, spec.array: split.items, **split.tail}
        spec.check(body)
        check_depth(split.tail, self.max_depth)  # the head's was checked with the old items
        lead, skip = spec.lead(body, split.messages)
        messages = lead + split.messages[skip:]
        if not messages:
            return None  # the whole path says what is wrong
        if lead:
            check_messages(lead)  # the history's were checked when they were made
        pieces: list[bytes | memoryview] = []
        for message in lead:
            pieces += [check_depth(message, self.max_depth - 2, self.max_depth), b","]
        # Where the messages the lead stands for end in the encoding (a few, at its start).
        offset = sum(len(check_depth(message, self.max_depth - 2)) + 1 for message in split.messages[:skip])
        rest = split.encoded.array(offset)
        if rest:
            pieces += rest
        else:
            pieces.pop()  # the lead's last comma (there are messages: the lead's)
        chat = spec.fields(body, messages)
        request = encoded_request(chat, messages, [b"[", *pieces, b"]"], size, self.max_depth)
        return None if request is None else Translated(chat, self._said(request, body), self._view(body, chat), body)

    def _said(self, request: ChatRequest, body: dict[str, Any]) -> ChatRequest:
        if self.spec.said:
            request.said = {key: body[key] for key in self.spec.said if key in body}
        return request

    def _view(self, body: dict[str, Any], chat: dict[str, Any]) -> dict[str, Any]:
        return chat if self.spec.answer_view is None else self.spec.answer_view(body, chat)

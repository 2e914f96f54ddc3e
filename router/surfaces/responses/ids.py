"""The ids of a Responses answer and of its output items.

A response's id is random (`resp_` and 32 hex digits): it names one answer of one client wherever
it is kept (kept.py); an upstream's completion ids are not unique across upstreams, and some send
the same one every time. Its output items' ids are made from it (`rs_`, `msg_`, `fc_` or `ctc_`, the
same hex digits, then the item's place after the first), so an item a client sends back names the
response that gave it (continued.py: a client that resends the whole conversation)."""

from __future__ import annotations

import re
import secrets

_OWN_ITEM = re.compile(r"(?:rs|msg|fc|ctc)_([0-9a-f]{32})(?:_[0-9]{1,6})?")


def new_response_id() -> str:
    return "resp_" + secrets.token_hex(16)


def call_id(given: object) -> str:
    """A function call's `call_id`, or a new one where the upstream gave it none or an empty one
    (Gemini's OpenAI-compatible endpoint, NVIDIA NIM, older llama.cpp): the client answers a
    call by it, and two calls of one answer without ids could not be told apart."""
    return given if isinstance(given, str) and given else "call_" + secrets.token_hex(12)


def item_id(kind: str, response_id: str, place: int) -> str:
    """The id of the output item at `place` of the response `response_id` (`kind`: `rs`, `msg`,
    `fc` or `ctc`)."""
    own = response_id.removeprefix("resp_")
    return f"{kind}_{own}" if place == 0 else f"{kind}_{own}_{place}"


def response_of_item(item: object) -> str | None:
    """The response an output item (as a client sends it back) was given in, when its id is one
    this gateway made; else None."""
    if not isinstance(item, dict):
        return None
    found = item.get("id")
    matched = _OWN_ITEM.fullmatch(found) if isinstance(found, str) else None
    return None if matched is None else "resp_" + matched[1]

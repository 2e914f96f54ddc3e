"""A Responses request that continues a kept response (`previous_response_id`), and the keeping
of its answer: once the request is read, a body that names a kept response is read again with
the conversation so far at the start of its `input`, before it becomes a chat step (so
stitching, privacy and the judge see the whole conversation, as with a client that resends it);
its answer is kept once it is out, whole or at the end of its stream, before the client reads
its last event (a client that names it in its next request at once finds it). The field is
read from the body as parsed: no search of the request's bytes (a 400 KB body costs ~50 µs).

A client that resends the whole conversation instead (the openai-agents SDK, a hand-written
loop) sends back the output items of the answer before, whose ids name it (ids.py): when what
it sends begins with that answer's kept conversation, item for item, its answer is kept as if
it had named it (its own items and the chain), so a run of n steps is kept once, not n times
over (each step's whole input). That conversation is read while the step runs, not after."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import orjson

from router.config.privacy import protects
from router.errors import GatewayError, bad_request
from router.protocol.fields import shown
from router.step import Route
from router.surfaces.responses.ids import response_of_item
from router.surfaces.responses.kept import Keep, KeptResponses

log = logging.getLogger("tandem")

# The events that end a Responses stream with an answer worth keeping (not `response.failed`).
_ENDINGS = (b"event: response.completed\ndata: ", b"event: response.incomplete\ndata: ")


@dataclass(slots=True)
class Continuation:
    """One request's part in the kept responses: what it continues and what of it is kept
    (`kept` None: kept responses are off, and a request that names one is refused)."""

    kept: KeptResponses | None
    namespace: str
    route_for: Callable[[str], Route]
    max_bytes: int  # a request body's limit, which a continued conversation keeps to
    own: list[Any] | None = None  # its own input items, when it named a previous response
    chain: list[str] | None = None
    # A whole conversation resent: how many of its items, and the chain, a kept one holds.
    resent: asyncio.Task[tuple[int, list[str]] | None] | None = None
    _keeps_answer: bool | None = None  # (`_keeps`, decided once a request)

    async def resume(self, body: dict[str, Any]) -> bytes | None:
        """The request's body with the conversation it continues at the start of its input,
        when it names a kept response (`body`: the request as read and checked); else None."""
        previous: str | None = body.get("previous_response_id")  # a string: the field check refused others
        if not previous:
            self.resent = self._resent(body)
            return None
        if self.kept is None:
            raise bad_request(
                "'previous_response_id' is not supported: this gateway keeps no responses "
                "(kept_responses.enabled is false); send the whole conversation in 'input'",
                param="previous_response_id",
            )
        model = body["model"]
        if protects(self.route_for(model).settings.privacy):  # (an unknown model: its 404)
            raise bad_request(
                f"'previous_response_id' cannot be used with the model {shown(model)}: its route's privacy mode keeps "
                "no conversation at rest; send the whole conversation in 'input'",
                param="previous_response_id",
            )
        turn = await self.kept.turn(self.namespace, previous)
        self.own, self.chain = _items(body.get("input")), turn.chain
        whole = {key: value for key, value in body.items() if key != "previous_response_id"}
        whole["input"] = turn.items + self.own
        encoded = orjson.dumps(whole)
        if len(encoded) > self.max_bytes:
            raise GatewayError(
                413,
                f"previous_response_id: the conversation it continues and this input are {len(encoded)} bytes, "
                f"over the limit of {self.max_bytes} bytes (max_body_bytes); start a new one, or send it shortened "
                "in 'input'",
                code="request_too_large",
                param="previous_response_id",
            )
        return encoded

    def _resent(self, body: dict[str, Any]) -> asyncio.Task[tuple[int, list[str]] | None] | None:
        """For a request that names no kept response: the reading of the kept conversation its
        input may resend (the answer its last item of this gateway's was given in), begun now."""
        items = body.get("input")
        if self.kept is None or not isinstance(items, list) or not self._keeps(body):
            return None
        for index in range(len(items) - 1, -1, -1):
            given = response_of_item(items[index])
            if given is not None:
                return asyncio.create_task(_resent_prefix(self.kept, self.namespace, given, items, index))
        return None

    def _keeps(self, body: dict[str, Any]) -> bool:
        """Whether this request's answer is to be kept at all (kept responses on)."""
        if self._keeps_answer is None:
            model = body.get("model")
            self._keeps_answer = (
                body.get("store", True) is not False and isinstance(model, str) and _keeps(self.route_for, model)
            )
        return self._keeps_answer

    async def keeping(self, body: dict[str, Any] | None) -> tuple[KeptResponses, Keep] | None:
        """Where and what of this request's answer is kept, or None (nothing is)."""
        if self.kept is None or body is None or not self._keeps(body):
            return None
        own = self.own if self.own is not None else _items(body.get("input"))
        chain = self.chain or []
        if self.resent is not None:
            found = await self.resent  # (read while the step ran: done by now as a rule)
            if found is not None:
                size, chain = found
                own = own[size:]
                self.kept.count("continued")  # (as if the request had named the answer before)
        return self.kept, Keep(self.namespace, own, chain)

    async def answered(self, body: dict[str, Any] | None, response: dict[str, Any]) -> None:
        """Keep a whole answer (`body`: the request as read)."""
        if response.get("status") in ("completed", "incomplete"):
            keeping = await self.keeping(body)
            if keeping is not None:
                await keeping[0].keep(keeping[1], response)

    def streamed(self, body: dict[str, Any] | None, events: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        """`events`, the answer kept before the event that ends it is passed on."""
        keeps = self.kept is not None and body is not None and self._keeps(body)
        return _kept_stream(self, body, events) if keeps else events


async def _kept_stream(
    continuation: Continuation, body: dict[str, Any] | None, events: AsyncIterator[bytes]
) -> AsyncIterator[bytes]:
    async for piece in events:
        response = _final_response(piece)
        if response is not None:
            keeping = await continuation.keeping(body)
            if keeping is not None:
                await keeping[0].keep(keeping[1], response)
        yield piece


async def _resent_prefix(
    kept: KeptResponses, namespace: str, response_id: str, items: list[Any], index: int
) -> tuple[int, list[str]] | None:
    """How many of `items` (a whole conversation resent, whose item at `index` was given in
    `response_id`) are that response's kept conversation, item for item, and its chain; None
    when they are not (a history the client cut or rewrote: the answer is kept whole)."""
    try:
        turn = await kept.conversation(namespace, response_id)
    except Exception as exc:  # (a store failure: kept whole, as before the reading)
        log.warning("kept responses: reading a resent conversation failed (%s); keeping it whole", exc)
        return None
    if turn is None or not index < len(turn.items) <= len(items):
        return None
    # (Most items are the client's own, kept as it sent them: equal at once, no gist made.)
    if any(ours != sent and _gist(ours) != _gist(sent) for ours, sent in zip(turn.items, items, strict=False)):
        return None
    return len(turn.items), turn.chain


_TEXT_PARTS = frozenset(("input_text", "output_text", "text"))


def _gist(item: Any) -> Any:
    """What of an item a client's copy must keep to be the same item: a message's role and text
    (a string, or its parts' texts), anything else as it is less its `id` and `status` (which a
    client's copy of an output item may drop or change)."""
    if not isinstance(item, dict):
        return item
    if item.get("type", "message") == "message":
        content = item.get("content")
        if isinstance(content, list):
            parts = [p.get("text") if isinstance(p, dict) and p.get("type") in _TEXT_PARTS else p for p in content]
            content = parts[0] if len(parts) == 1 and isinstance(parts[0], str) else parts
        return ("message", item.get("role"), content)
    return {key: value for key, value in item.items() if key not in ("id", "status")}


def _final_response(piece: bytes) -> dict[str, Any] | None:
    """The response an ending event in `piece` carries (the stream translator writes each event
    as `event: …\ndata: {json}\n\n`), or None."""
    for ending in _ENDINGS:
        at = piece.find(ending)
        if at >= 0:
            start = at + len(ending)
            end = piece.find(b"\n\n", start)
            event: dict[str, Any] = orjson.loads(piece[start : end if end >= 0 else len(piece)])
            response = event.get("response")
            return response if isinstance(response, dict) else None
    return None


def _items(given: Any) -> list[Any]:
    """A request's `input` as items (a string is one user message)."""
    if isinstance(given, str):
        return [{"type": "message", "role": "user", "content": given}]
    return list(given) if isinstance(given, list) else []


def _keeps(route_for: Callable[[str], Route], model: str) -> bool:
    """Whether a request for `model` may have its answer kept: never on a route whose privacy
    mode protects values (the kept conversation would hold them as the client sent them)."""
    try:
        route = route_for(model)
    except GatewayError:
        return False  # refused as the step is: nothing to keep
    return not protects(route.settings.privacy)

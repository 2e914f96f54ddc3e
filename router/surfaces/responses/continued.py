"""A Responses request that continues a kept response (`previous_response_id`), and the keeping
of its answer: once the request is read, a body that names a kept response is read again with
the conversation so far at the start of its `input`, before it becomes a chat step (so
stitching, privacy and the judge see the whole conversation, as with a client that resends it);
its answer is kept once it is out, whole or at the end of its stream, before the client reads
its last event (a client that names it in its next request at once finds it). The field is
read from the body as parsed: no search of the request's bytes (a 400 KB body costs ~50 µs)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import orjson

from router.config.privacy import protects
from router.errors import GatewayError, bad_request
from router.protocol.fields import shown
from router.step import Route
from router.surfaces.responses.kept import Keep, KeptResponses

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

    async def resume(self, body: dict[str, Any]) -> bytes | None:
        """The request's body with the conversation it continues at the start of its input,
        when it names a kept response (`body`: the request as read and checked); else None."""
        previous: str | None = body.get("previous_response_id")  # a string: the field check refused others
        if not previous:
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

    def _keep(self, body: dict[str, Any] | None) -> tuple[KeptResponses, Keep] | None:
        """Where and what of this request's answer is kept, or None (nothing is)."""
        if self.kept is None or body is None or body.get("store", True) is False:
            return None
        model = body.get("model")
        if not isinstance(model, str) or not _keeps(self.route_for, model):
            return None
        own = self.own if self.own is not None else _items(body.get("input"))
        return self.kept, Keep(self.namespace, own, self.chain or [])

    async def answered(self, body: dict[str, Any] | None, response: dict[str, Any]) -> None:
        """Keep a whole answer (`body`: the request as read)."""
        keeping = self._keep(body)
        if keeping is not None and response.get("status") in ("completed", "incomplete"):
            await keeping[0].keep(keeping[1], response)

    def streamed(self, body: dict[str, Any] | None, events: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        """`events`, the answer kept before the event that ends it is passed on."""
        keeping = self._keep(body)
        return events if keeping is None else _kept_stream(*keeping, events)


async def _kept_stream(kept: KeptResponses, keep: Keep, events: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    async for piece in events:
        response = _final_response(piece)
        if response is not None:
            await kept.keep(keep, response)
        yield piece


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

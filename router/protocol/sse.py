"""Re-framing a chat-completions SSE stream into another API's events, event by event."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson

from router.protocol.completion_shape import clean_chunk
from router.protocol.upstream_error import event_error


class ChunkTranslator:
    """Splits the relayed bytes into chat-completion events and asks the subclass for what each
    becomes: `on_chunk` per chunk, `on_error` for an error event, the gateway's or the
    upstream's (the stream ends there: nothing after it is translated), `on_done` at `[DONE]`."""

    def __init__(self) -> None:
        self._pending = b""
        self._failed = False

    def on_chunk(self, chunk: dict[str, Any]) -> list[bytes]:
        raise NotImplementedError

    def on_error(self, error: dict[str, Any]) -> list[bytes]:
        raise NotImplementedError

    def on_done(self) -> list[bytes]:
        raise NotImplementedError

    def _events(self, complete: bytes) -> list[bytes]:
        out: list[bytes] = []
        for line in complete.split(b"\n"):
            if self._failed:
                break  # the stream ended at its error: nothing after it is an answer
            if not line.startswith(b"data:"):
                continue
            payload = line[5:].strip()
            if payload == b"[DONE]":
                if not self._failed:
                    out += self.on_done()
                continue
            try:
                event = orjson.loads(payload)
            except orjson.JSONDecodeError:
                continue  # not an event a translator can read (the chat surface relays it as sent)
            if not isinstance(event, dict):
                continue
            error = event_error(event)
            if error is not None:
                self._failed = True
                out += self.on_error(error)
                continue
            out += self.on_chunk(clean_chunk(event))
        return out

    async def translate(self, chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        async for raw in chunks:
            buffer = self._pending + (raw if isinstance(raw, bytes) else raw.encode())
            end = buffer.rfind(b"\n\n")
            if end < 0:
                self._pending = buffer
                continue
            complete, self._pending = buffer[: end + 2], buffer[end + 2 :]
            out = self._events(complete)
            if out:
                yield b"".join(out)

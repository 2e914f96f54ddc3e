"""A hostile upstream: a raw TCP server on 127.0.0.1 (its own thread and event loop) that answers
each request with scripted bytes, HTTP/1.1 as a broken or malicious server might speak it.

Each request names its own id and the behaviour it wants in its body (`tag(...)`, within the
body's first 4 KB, so an early answer can be chosen before the body is read); a request that
may reach two such upstreams (an edge, then the cloud on failover) names one behaviour for each,
`edge+cloud`, and each upstream plays the one of its `slot`. Every answer
carries the id of the request it answers as `<<id>>` (in the completion's content, or in each
event of a stream); the stray answers a behaviour leaves behind (after a 204, past a declared
length, a second answer nobody asked for) carry `<<id~leftover>>`, which no request owns. So a
client that ever reads bytes meant for another request sees a tag that is not its own.

The bytes of one answer go in one to three writes split at random points inside the answer;
whatever a behaviour sends after the answer's end goes in the same write as the answer's last
byte. Bytes an upstream sends later, after the client's next request is on the wire, cannot be
told from the answer to that request by any HTTP/1.1 client (there are no request ids), and are
not scripted here, but for one case: a `length_short` answer's bytes past its declared length may
come in a later write than its end, so the next request on the connection may read them. They are
never HTTP, so that request fails, and its error must not quote them (it would hand one client's
bytes to another).
"""

from __future__ import annotations

import asyncio
import random
import re
import socket
import ssl
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass

import orjson

TAG = re.compile(rb"TAG\[([^|\]]+)\|([^\]]+)\]")
ANSWER_TAG = re.compile(rb"<<([^<>]+)>>")


def tag(request_id: str, behaviour: str) -> str:
    """What a request puts first in its message text to script the upstream's answer."""
    return f"TAG[{request_id}|{behaviour}]"


def tags_in(data: bytes) -> set[str]:
    """The request ids of the answers found in `data`."""
    return {found.decode() for found in ANSWER_TAG.findall(data)}


def completion(owner: str) -> bytes:
    return orjson.dumps(
        {
            "id": f"chatcmpl-{owner}",
            "object": "chat.completion",
            "model": "edge-model",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": f"<<{owner}>>"}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
        }
    )


def events(owner: str) -> bytes:
    def event(delta: dict[str, str], finish: str | None) -> bytes:
        chunk = {
            "id": f"chatcmpl-{owner}",
            "object": "chat.completion.chunk",
            "model": "edge-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return b"data: " + orjson.dumps(chunk) + b"\n\n"

    usage = {"id": f"chatcmpl-{owner}", "object": "chat.completion.chunk", "model": "edge-model", "choices": []}
    usage["usage"] = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    return (
        event({"role": "assistant", "content": f"<<{owner}>>"}, None)
        + event({"content": f"<<{owner}>>"}, "stop")
        + b"data: "
        + orjson.dumps(usage)
        + b"\n\ndata: [DONE]\n\n"
    )


def sized(body: bytes, stream: bool, status: str = "200 OK", extra: bytes = b"", version: bytes = b"1.1") -> bytes:
    kind = b"text/event-stream" if stream else b"application/json"
    head = b"HTTP/%s %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n" % (version, status.encode(), kind, len(body))
    return head + extra + b"\r\n" + body


def chunked(body: bytes, stream: bool, pieces: int = 3) -> bytes:
    kind = b"text/event-stream" if stream else b"application/json"
    out = b"HTTP/1.1 200 OK\r\nContent-Type: %s\r\nTransfer-Encoding: chunked\r\n\r\n" % kind
    step = max(1, len(body) // pieces)
    for start in range(0, len(body), step):
        part = body[start : start + step]
        out += b"%x\r\n%s\r\n" % (len(part), part)
    return out + b"0\r\n\r\n"


@dataclass
class Plan:
    """What the upstream sends for one request: `answer` (split at random points inside it),
    then `after` in the same write as its last byte, `late` a few milliseconds later (only where
    the answer itself says the connection cannot carry another request), then `end`: keep the
    connection, close it (FIN) or reset it (RST). `early`: answer before reading the body."""

    answer: bytes
    after: bytes = b""
    end: str = "keep"
    early: bool = False
    late: bytes = b""


def _own(owner: str, stream: bool) -> bytes:
    return events(owner) if stream else completion(owner)


def _leftover(owner: str, stream: bool) -> bytes:
    return sized(_own(f"{owner}~leftover", stream), stream)


# Each behaviour: (request id, stream, random) -> Plan.
Behaviour = Callable[[str, bool, random.Random], Plan]


def _garbage(rng: random.Random) -> bytes:
    return rng.choice([b"\r\n", b"HTTP/1.1 2", b"\x00\xff garbage \r\n\r\n", rng.randbytes(rng.randint(1, 64))])


BEHAVIOURS: dict[str, Behaviour] = {
    # Well-formed answers: the client must read them as the request's own.
    "clean": lambda rid, s, r: Plan(sized(_own(rid, s), s)),
    "chunked": lambda rid, s, r: Plan(chunked(_own(rid, s), s, r.randint(1, 5))),
    "interim": lambda rid, s, r: Plan(b"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n" + sized(_own(rid, s), s)),
    # Not to be kept, and then bytes after all a little later.
    "connection_close": lambda rid, s, r: Plan(
        sized(_own(rid, s), s, extra=b"Connection: close\r\n"), end="close", late=_leftover(rid, s)
    ),
    "http10": lambda rid, s, r: Plan(sized(_own(rid, s), s, version=b"1.0"), late=_leftover(rid, s)),
    "until_close": lambda rid, s, r: Plan(sized(_own(rid, s), s).replace(b"Content-Length", b"X-Length"), end="close"),
    "closed_after": lambda rid, s, r: Plan(sized(_own(rid, s), s), end="close"),
    "reset_after": lambda rid, s, r: Plan(sized(_own(rid, s), s), end="reset"),
    # Bytes after a whole answer: a second answer nobody asked for, or garbage.
    "extra_answer": lambda rid, s, r: Plan(sized(_own(rid, s), s), _leftover(rid, s)),
    "extra_chunked": lambda rid, s, r: Plan(chunked(_own(rid, s), s), _leftover(rid, s)),
    "connection_close_extra": lambda rid, s, r: Plan(
        sized(_own(rid, s), s, extra=b"Connection: close\r\n"), _leftover(rid, s), end="close"
    ),
    "http10_extra": lambda rid, s, r: Plan(sized(_own(rid, s), s, version=b"1.0"), _leftover(rid, s)),
    "extra_garbage": lambda rid, s, r: Plan(sized(_own(rid, s), s), _garbage(r)),
    "length_short": lambda rid, s, r: Plan(_short(_own(rid, s), s, r), _leftover(rid, s)),
    # Answers that never have a body, with one (or a length) anyway.
    "no_content": lambda rid, s, r: _then(b"HTTP/1.1 204 No Content\r\n\r\n", _leftover(rid, s), r),
    "no_content_length": lambda rid, s, r: _then(
        b"HTTP/1.1 204 No Content\r\nContent-Length: %d\r\n\r\n" % len(_leftover(rid, s)), _leftover(rid, s), r
    ),
    "not_modified_length": lambda rid, s, r: _then(
        b"HTTP/1.1 304 Not Modified\r\nContent-Length: %d\r\n\r\n" % len(_leftover(rid, s)), _leftover(rid, s), r
    ),
    # 1xx oddities.
    "interim_body": lambda rid, s, r: Plan(b"HTTP/1.1 100 Continue\r\nContent-Length: 2\r\n\r\nxx" + _leftover(rid, s)),
    "switch": lambda rid, s, r: _then(
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n", _leftover(rid, s), r
    ),
    # Framing that is wrong.
    "bad_chunk": lambda rid, s, r: Plan(_bad_chunk(_own(rid, s), s), _leftover(rid, s)),
    "chunk_overrun": lambda rid, s, r: Plan(_overrun(_own(rid, s), s), _leftover(rid, s)),
    "chunks_cut": lambda rid, s, r: Plan(chunked(_own(rid, s), s)[:-5], end="close"),
    "two_lengths": lambda rid, s, r: Plan(_two_lengths(_own(rid, s), s, r.random() < 0.5), _leftover(rid, s)),
    "length_and_chunks": lambda rid, s, r: Plan(
        chunked(_own(rid, s), s).replace(b"Transfer-Encoding", b"Content-Length: 7\r\nTransfer-Encoding"),
        _leftover(rid, s),
    ),
    "length_not_a_number": lambda rid, s, r: Plan(
        sized(_own(rid, s), s).replace(b"Content-Length: ", b"Content-Length: +", 1), _leftover(rid, s)
    ),
    "length_long_closed": lambda rid, s, r: Plan(_long(_own(rid, s), s), end="close"),
    "not_http": lambda rid, s, r: Plan(b"SSH-2.0-OpenSSH_9.6\r\n", _leftover(rid, s)),
    # Connections that break.
    "reset_mid_body": lambda rid, s, r: Plan(_half(sized(_own(rid, s), s), r), end="reset"),
    "closed_mid_body": lambda rid, s, r: Plan(_half(sized(_own(rid, s), s), r), end="close"),
    "reset_at_once": lambda rid, s, r: Plan(b"", end="reset"),
    # Answers before the request was read.
    "early": lambda rid, s, r: Plan(sized(_own(rid, s), s), early=True),
    "early_closed": lambda rid, s, r: Plan(sized(_own(rid, s), s), early=True, end="close"),
    "early_extra": lambda rid, s, r: Plan(sized(_own(rid, s), s), _leftover(rid, s), early=True),
}

# The behaviours whose answer is well-formed and the request's own: a client should read them.
WELL_FORMED = frozenset({"clean", "chunked", "interim", "connection_close", "http10", "until_close", "closed_after"})


def _then(answer: bytes, leftover: bytes, rng: random.Random, end: str = "keep") -> Plan:
    """`leftover` with the answer, or a little later (as a server writing a 204's body after
    its head does): either way the client must not read it as another request's answer."""
    return Plan(answer, leftover, end) if rng.random() < 0.5 else Plan(answer, end=end, late=leftover)


def _short(body: bytes, stream: bool, rng: random.Random) -> bytes:
    cut = rng.randint(1, len(body) - 1)
    return sized(body[:cut], stream) + body[cut:]


def _bad_chunk(body: bytes, stream: bool) -> bytes:
    framed = chunked(body, stream, 2)
    second = framed.index(b"\r\n", framed.index(b"\r\n\r\n") + 4) + 2  # after the first chunk's size line
    second = framed.index(b"\r\n", second) + 2  # after its data: the next size line is broken
    return framed[:second] + b"zz" + framed[second:]


def _overrun(body: bytes, stream: bool) -> bytes:
    kind = b"text/event-stream" if stream else b"application/json"
    head = b"HTTP/1.1 200 OK\r\nContent-Type: %s\r\nTransfer-Encoding: chunked\r\n\r\n" % kind
    return head + b"%x\r\n%s\r\n0\r\n\r\n" % (len(body) // 2, body)  # the chunk runs past its size


def _two_lengths(body: bytes, stream: bool, same: bool) -> bytes:
    other = len(body) if same else len(body) // 2
    return sized(body, stream, extra=b"Content-Length: %d\r\n" % other)


def _long(body: bytes, stream: bool) -> bytes:
    return sized(body, stream).replace(b"Content-Length: %d" % len(body), b"Content-Length: %d" % (len(body) + 40), 1)


def _half(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randint(1, len(data) - 1)]


class HostileUpstream:
    """The server. `requests` counts what it read; `served` maps each request id to the
    behaviour it was answered with."""

    def __init__(self, seed: int = 0, slot: int = 0, ssl_context: ssl.SSLContext | None = None) -> None:
        self.rng = random.Random(seed)
        self.slot = slot
        self.ssl_context = ssl_context
        self.requests = 0
        self.served: dict[str, str] = {}
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._thread = threading.Thread(target=self._loop.run_forever, name="hostile-upstream", daemon=True)

    @property
    def base_url(self) -> str:
        scheme = "http" if self.ssl_context is None else "https"
        return f"{scheme}://127.0.0.1:{self.port}/v1"

    def start(self) -> HostileUpstream:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(10)
        return self

    def stop(self) -> None:
        async def close() -> None:
            if self._server is not None:
                self._server.close()
            for handler in self._handlers:
                handler.cancel()
            await asyncio.gather(*self._handlers, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.ssl_context)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handler = asyncio.current_task()
        assert handler is not None
        self._handlers.add(handler)
        try:
            while await self._one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ssl.SSLError):
            pass
        finally:
            writer.transport.abort()
            self._handlers.discard(handler)

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        found = re.search(rb"(?im)^content-length:\s*(\d+)", head)
        length = int(found.group(1)) if found else 0
        first = await reader.readexactly(min(length, 4096))
        self.requests += 1
        marked = TAG.search(first)
        if marked is None:  # a request that scripts nothing (a probe of /models): plain 200
            await reader.readexactly(length - len(first))
            writer.write(sized(b'{"object":"list","data":[]}', False))
            return True
        request_id, behaviours = marked.group(1).decode(), marked.group(2).decode().split("+")
        behaviour = behaviours[min(self.slot, len(behaviours) - 1)]
        stream = b'"stream":true' in first
        plan = BEHAVIOURS[behaviour](request_id, stream, self.rng)
        self.served[request_id] = behaviour
        if not plan.early:
            await reader.readexactly(length - len(first))
        await self._send(writer, plan)
        if plan.end == "reset":
            # SO_LINGER 0: closing sends RST, not FIN.
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return False
        if plan.end == "close":
            writer.close()
            return False
        if plan.early:
            await reader.readexactly(length - len(first))
        return True

    async def _send(self, writer: asyncio.StreamWriter, plan: Plan) -> None:
        answer = plan.answer
        cuts = (
            sorted({self.rng.randint(1, len(answer) - 1) for _ in range(self.rng.randint(0, 2))})
            if len(answer) > 1
            else []
        )
        pieces = [answer[a:b] for a, b in zip([0, *cuts], [*cuts, len(answer)], strict=True)]
        pieces[-1] += plan.after
        for number, piece in enumerate(pieces):
            if number:
                await asyncio.sleep(self.rng.choice([0, 0, 0.001, 0.003]))
            writer.write(piece)
            await writer.drain()
        if plan.late:
            await asyncio.sleep(self.rng.uniform(0.002, 0.02))
            writer.write(plan.late)
            await writer.drain()

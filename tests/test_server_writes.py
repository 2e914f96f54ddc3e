"""The server writes a whole response's head and body in one write (router/server.py
`JoinedCycle`), and a stream's head at once; what goes out is what uvicorn wrote in two.

Driven through the gateway's own protocol with a transport that records its writes (the
system calls a real socket would make), so that the count of writes is what is tested."""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.server import ServerState

from router.config.limits import LimitSettings
from router.server import BoundedHttpToolsProtocol, server_config


class RecordingTransport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 5000), "sockname": ("127.0.0.1", 8000)}.get(name, default)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def _whole(scope: Any, receive: Any, send: Any) -> None:
    body = b'{"ok": true}'
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _streamed(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
    await send({"type": "http.response.body", "body": b"data: 1\n\n", "more_body": True})
    await send({"type": "http.response.body", "body": b"data: [DONE]\n\n"})


async def _serve(app: Any, request: bytes) -> RecordingTransport:
    config = server_config(app, LimitSettings(), lifespan="off", log_level="warning")
    config.load()
    protocol = BoundedHttpToolsProtocol(config, ServerState(), {})
    transport = RecordingTransport()
    protocol.connection_made(transport)
    protocol.data_received(request)
    for _ in range(20):
        await asyncio.sleep(0)
    protocol.connection_lost(None)
    return transport


GET = b"GET / HTTP/1.1\r\nhost: x\r\n\r\n"


async def test_a_whole_response_goes_out_in_one_write() -> None:
    transport = await _serve(_whole, GET)
    assert len(transport.writes) == 1
    head, _, body = transport.writes[0].partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"content-length: 12" in head
    assert body == b'{"ok": true}'


async def test_two_pipelined_requests_are_answered_in_order_one_write_each() -> None:
    transport = await _serve(_whole, GET + GET)
    assert len(transport.writes) == 2
    assert all(w.startswith(b"HTTP/1.1 200 OK\r\n") and w.endswith(b'{"ok": true}') for w in transport.writes)


async def test_a_head_request_gets_its_head_alone() -> None:
    transport = await _serve(_whole, b"HEAD / HTTP/1.1\r\nhost: x\r\n\r\n")
    assert len(transport.writes) == 1
    assert transport.writes[0].startswith(b"HTTP/1.1 200 OK\r\n")
    assert transport.writes[0].endswith(b"\r\n\r\n")


async def test_a_stream_sends_its_head_at_once_then_each_chunk() -> None:
    transport = await _serve(_streamed, GET)
    assert len(transport.writes) == 3
    assert transport.writes[0].startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"transfer-encoding: chunked" in transport.writes[0]
    assert transport.writes[1] == b"9\r\ndata: 1\n\n\r\n"
    assert transport.writes[2] == b"e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n"

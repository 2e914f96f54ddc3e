"""A stream's idle timeout (`StreamSource.chunks`): it bounds each wait for the upstream's next
bytes, not the time the client takes between reads nor a whole stream of steady chunks; one
timer serves a stream. Against a real TCP server on 127.0.0.1 sending scripted bytes."""

from __future__ import annotations

import asyncio
import time

import pytest

from router.config.limits import LimitSettings
from router.stream_source import StreamSource
from router.transport.http1 import Http1Session
from tests import test_http1
from tests.test_http1 import ByteServer, Script

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


def chunk(data: bytes) -> bytes:
    return b"%x\r\n" % len(data) + data + b"\r\n"


def paced(pauses: list[float], end: bool = True) -> Script:
    """A chunk, then after each pause another; the end chunk after the last unless `end` is off
    (the connection then stays open, silent)."""

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: object) -> bool:
        writer.write(HEAD + chunk(b"data: 0\n\n"))
        await writer.drain()
        for number, pause in enumerate(pauses, start=1):
            await asyncio.sleep(pause)
            writer.write(chunk(b"data: %d\n\n" % number))
            await writer.drain()
        if end:
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        await reader.read()
        return False

    return script


# The scripted byte server of the HTTP/1.1 client's tests, one a test.
server = test_http1.server


async def open_stream(server: ByteServer, idle_s: float) -> StreamSource:
    session = Http1Session(f"http://127.0.0.1:{server.port}/v1", 4, connect_timeout=2.0)
    response = await session.post(server.url, data=b"{}", headers={})
    first = await response.content.readany()
    return StreamSource(response, first, idle_s, LimitSettings(), lambda kind: None)


async def read_all(source: StreamSource) -> list[bytes]:
    parts = [source.first_chunk]
    while part := await source.chunks():
        parts.append(part)
    return parts


async def test_steady_chunks_outlast_the_idle_timeout(server: ByteServer) -> None:
    server.scripts = [paced([0.05] * 8)]  # 0.4 s in all, no gap of 0.15 s
    source = await open_stream(server, idle_s=0.15)
    parts = await read_all(source)
    assert b"".join(parts).count(b"data: ") == 9
    source.close()
    assert source._watchdog is None


async def test_a_silent_upstream_times_out_after_the_idle_gap(server: ByteServer) -> None:
    server.scripts = [paced([0.05, 5.0], end=False)]
    source = await open_stream(server, idle_s=0.2)
    assert await source.chunks() == b"data: 1\n\n"
    started = time.perf_counter()
    with pytest.raises(TimeoutError):
        await source.chunks()
    assert 0.18 <= time.perf_counter() - started < 1.0
    task = asyncio.current_task()
    assert task is not None and task.cancelling() == 0  # the timer's cancellation was taken back
    source.close()


async def test_time_the_client_takes_between_reads_is_not_idle(server: ByteServer) -> None:
    server.scripts = [paced([0.01, 0.01])]
    source = await open_stream(server, idle_s=0.1)
    await asyncio.sleep(0.3)  # a slow client: the chunks wait for it
    parts = await read_all(source)
    assert b"".join(parts).count(b"data: ") == 3
    source.close()


async def test_a_cancelled_read_stays_a_cancellation(server: ByteServer) -> None:
    server.scripts = [paced([5.0], end=False)]
    source = await open_stream(server, idle_s=0.1)
    reading = asyncio.ensure_future(source.chunks())
    await asyncio.sleep(0.02)
    reading.cancel()  # the client left, before the idle timeout
    with pytest.raises(asyncio.CancelledError):
        await reading
    source.close()
    assert source._watchdog is None


async def test_a_cancellation_at_the_deadline_is_not_taken_for_the_timeout(server: ByteServer) -> None:
    server.scripts = [paced([5.0], end=False)]
    source = await open_stream(server, idle_s=0.1)
    reading = asyncio.ensure_future(source.chunks())
    await asyncio.sleep(0.02)
    loop = asyncio.get_running_loop()
    # Cancelled by someone else in the same turn of the loop as the timer cancels it.
    loop.call_at(source._deadline, reading.cancel)
    with pytest.raises(asyncio.CancelledError):
        await reading
    source.close()

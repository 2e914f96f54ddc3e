"""`Upstream.send(..., sent=work)`: the work runs once the request is on its way, in either
transport (the built-in HTTP/1.1 client, aiohttp, each chosen by the `client` setting),
against a real TCP server on 127.0.0.1; a failure of the work gives the call up; a timeout cuts
the work short like the wait for the answer."""

from __future__ import annotations

import asyncio
import time

import pytest

from router.config.upstream import Timeouts
from router.upstream import Upstream, UpstreamFailure
from tests import test_http1
from tests.test_http1 import ByteServer, answer, hang
from tests.transport_suite.transports import TRANSPORTS, started

ANSWER = b'{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}'


# The scripted byte server of the HTTP/1.1 client's tests, one a test.
server = test_http1.server


async def upstream_for(server: ByteServer, client: str, first_byte: float = 10.0) -> Upstream:
    base_url = f"http://127.0.0.1:{server.port}/v1"
    return await started(client, base_url=base_url, timeouts=Timeouts(first_byte=first_byte))


@pytest.mark.parametrize("client", TRANSPORTS)
async def test_the_work_runs_while_the_upstream_reads_the_request(server: ByteServer, client: str) -> None:
    server.scripts = [answer(ANSWER, delay=0.1)]
    upstream = await upstream_for(server, client)
    seen: list[int] = []

    async def work() -> None:
        for _ in range(200):  # until the request is there (aiohttp writes from its own task)
            if server.requests:
                break
            await asyncio.sleep(0.005)
        seen.append(len(server.requests))
        done.append(time.perf_counter())

    done: list[float] = []
    reply = await upstream.send(b'{"model":"m","messages":[]}', stream=False, sent=work)
    answered = time.perf_counter()
    assert reply.status == 200 and reply.body == ANSWER
    assert seen == [1]
    # The work was over well before the answer (sent 0.1 s after the request): it ran beside
    # the upstream, not after its answer.
    assert done[0] < answered - 0.05
    await upstream.close()


@pytest.mark.parametrize("client", TRANSPORTS)
async def test_work_that_fails_gives_the_call_up(server: ByteServer, client: str) -> None:
    server.scripts = [hang]
    upstream = await upstream_for(server, client)

    async def broken() -> None:
        await asyncio.sleep(0.05)
        raise RuntimeError("broken")

    with pytest.raises(RuntimeError, match="broken"):
        async with asyncio.timeout(5):
            await upstream.send(b"{}", stream=False, sent=broken)
    async with asyncio.timeout(5):
        await server.all_closed.wait()  # the hanging call was dropped, not left waiting
    await upstream.close()


async def test_the_first_byte_timeout_bounds_the_work_too(server: ByteServer) -> None:
    server.scripts = [hang]
    upstream = await upstream_for(server, "builtin", first_byte=0.2)
    cut: list[str] = []

    async def slow() -> None:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cut.append("cancelled")
            raise

    with pytest.raises(UpstreamFailure) as failure:
        async with asyncio.timeout(5):
            await upstream.send(b"{}", stream=False, sent=slow)
    assert failure.value.kind == "timeout" and cut == ["cancelled"]
    await upstream.close()

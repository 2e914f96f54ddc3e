"""Canaries for aiohttp's private internals the aiohttp transport relies on
(router/transport/aiohttp_transport.py; pyproject.toml bounds aiohttp below its next minor
version): the connector's step that takes an idle connection from the pool (`_get`, wrapped so
that only a quiet connection is taken), the protocol factory it makes connections with
(`_factory`), and what the connection protocol (`ResponseHandler`) holds and does that the
transport's protocol reads or overrides. Each fails naming the internal that moved, and a real
exchange shows the overrides are still on the path aiohttp takes. The hostile suite
(test_hostile_upstream.py) and tests/test_connection_reuse.py hold the behaviour itself."""

from __future__ import annotations

import inspect
from typing import Any

import aiohttp
import pytest
from aiohttp.client_proto import ResponseHandler

from router.config.upstream import Timeouts
from router.transport import Request
from router.transport.aiohttp_transport import AiohttpTransport, QuietConnector, _Handler
from tests.fake_upstream import FakeUpstream
from tests.test_fences import fence

READER = "router/transport/aiohttp_transport.py"


def test_the_connector_takes_idle_connections_in_one_overridable_step() -> None:
    step = getattr(aiohttp.TCPConnector, "_get", None)
    fence(inspect.iscoroutinefunction(step), "aiohttp TCPConnector._get (a coroutine)", READER)
    parameters = list(inspect.signature(step).parameters) if step is not None else []
    fence(parameters == ["self", "key", "traces"], f"aiohttp TCPConnector._get{parameters}", READER)


def test_the_connection_protocol_has_what_the_transport_reads_and_overrides() -> None:
    for name in ("feed_data", "data_received", "force_close", "exception"):
        fence(callable(getattr(ResponseHandler, name, None)), f"aiohttp ResponseHandler.{name}", READER)
    fence(
        isinstance(inspect.getattr_static(ResponseHandler, "should_close", None), property),
        "aiohttp ResponseHandler.should_close (a property)",
        READER,
    )
    parameters = list(inspect.signature(ResponseHandler.feed_data).parameters)
    fence(parameters[:2] == ["self", "data"], f"aiohttp ResponseHandler.feed_data{parameters}", READER)


async def test_a_real_exchange_goes_through_the_transports_connector_and_protocol(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The overrides are watched (each still does its work), so a version of aiohttp that no
    # longer calls them shows here, not as a connection quietly reused.
    taken: list[bool] = []
    fed: list[tuple[int, bool]] = []
    take, feed = QuietConnector._get, _Handler.feed_data

    async def watched_take(self: QuietConnector, key: Any, traces: Any) -> Any:
        connection = await take(self, key, traces)
        taken.append(connection is not None)
        return connection

    def watched_feed(self: _Handler, data: Any, size: int = 0) -> None:
        fed.append((getattr(data[0], "code", -1), hasattr(self, "_payload")))
        feed(self, data, size)

    monkeypatch.setattr(QuietConnector, "_get", watched_take)
    monkeypatch.setattr(_Handler, "feed_data", watched_feed)
    upstream = FakeUpstream("fence").start()
    transport = AiohttpTransport(4, Timeouts().connect)
    try:
        for _ in range(2):
            response = await transport.send(Request("GET", f"{upstream.base_url}/models", {}))
            while await response.read_some():
                pass
            response.release()
    finally:
        await transport.close()
        upstream.stop()
    # The second call took the first's idle connection through `_get`; both answers were fed
    # through the transport's protocol (the connector's `_factory` made it), which has the body
    # reader (`_payload`) where it reads it.
    fence(taken == [False, True], f"aiohttp TCPConnector._get (taking idle connections: {taken})", READER)
    fence(
        fed == [(200, True)] * 2, f"aiohttp TCPConnector._factory / ResponseHandler.feed_data, _payload ({fed})", READER
    )

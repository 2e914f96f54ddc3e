"""A small forward proxy on 127.0.0.1 (asyncio, in its own thread and loop), as a site's egress
proxy behaves: a CONNECT tunnel for https, an absolute-form request (`POST http://host/path`)
for plain HTTP, Basic credentials required when `credentials` is given (407 otherwise). It
records what it saw of each request (`seen`), so a test can assert that a call went through it,
how, and with which credentials.

Names in `hosts` resolve to the address given, for the proxy alone: an upstream on 127.0.0.1
named `cloud.test` is reachable only through the proxy, as a cloud is from a closed site.
"""

from __future__ import annotations

import asyncio
import base64
import socket
import threading
from dataclasses import dataclass, field
from urllib.parse import urlsplit

HEAD_LIMIT = 64 * 1024


@dataclass
class Seen:
    method: str
    target: str
    headers: dict[str, str]  # names in lower case


@dataclass
class ForwardProxy:
    credentials: tuple[str, str] | None = None
    hosts: dict[str, str] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    port: int = 0

    def __post_init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="forward-proxy", daemon=True)
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def targets(self) -> list[tuple[str, str]]:
        """What was asked of the proxy for the hosts it knows (the tests' `.test` names, loopback):
        a test that names the proxy in the environment names it for every library in the process,
        and another's background request (a client library's telemetry) may pass through too."""
        known = (*self.hosts, "127.0.0.1", "localhost")
        return [(seen.method, seen.target) for seen in self.seen if _host(seen.target) in known]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url_with(self, login: str, password: str) -> str:
        return f"http://{login}:{password}@127.0.0.1:{self.port}"

    def start(self) -> ForwardProxy:
        sock = socket.create_server(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        self._thread.start()

        async def serve() -> None:
            self._server = await asyncio.start_server(self._client, sock=sock, limit=HEAD_LIMIT)

        asyncio.run_coroutine_threadsafe(serve(), self._loop).result(10)
        return self

    def stop(self) -> None:
        async def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            for task in list(self._tasks):
                task.cancel()

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._one(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        request_line, *lines = head.split("\r\n")
        method, target, _ = request_line.split(" ", 2)
        pairs = [line.split(":", 1) for line in lines if line]
        headers = {name.strip().lower(): value.strip() for name, value in pairs}
        self.seen.append(Seen(method, target, headers))
        if not self._authorised(headers):
            writer.write(
                b'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\n'
                b"Content-Length: 0\r\nConnection: close\r\n\r\n"
            )
            await writer.drain()
            return
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            up_reader, up_writer = await asyncio.open_connection(self._address(host.strip("[]")), int(port))
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
            return
        parts = urlsplit(target)
        if parts.scheme != "http" or not parts.hostname:  # a proxy takes absolute-form only
            writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        up_reader, up_writer = await asyncio.open_connection(self._address(parts.hostname), parts.port or 80)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        hop = {"proxy-authorization", "proxy-connection", "connection", "keep-alive"}
        kept = [f"{name}:{value}" for name, value in pairs if name.strip().lower() not in hop]
        # One request a client connection: the answer is relayed until the upstream closes.
        fields = "".join(f"{line}\r\n" for line in kept)
        up_writer.write(f"{method} {path} HTTP/1.1\r\n{fields}Connection: close\r\n\r\n".encode("latin-1") + body)
        await _pipe(up_reader, writer)
        up_writer.close()

    def _authorised(self, headers: dict[str, str]) -> bool:
        if self.credentials is None:
            return True
        login, password = self.credentials
        expected = "Basic " + base64.b64encode(f"{login}:{password}".encode()).decode()
        return headers.get("proxy-authorization") == expected

    def _address(self, host: str) -> str:
        return self.hosts.get(host, host)


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    except OSError:
        pass
    finally:
        sink.close()


def _host(target: str) -> str:
    """The host a request's target names: `host:port` (CONNECT) or an absolute URL."""
    authority = target.split("://", 1)[1].split("/", 1)[0] if "://" in target else target
    return authority.rsplit(":", 1)[0] if ":" in authority else authority

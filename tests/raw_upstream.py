"""Upstreams that misbehave, on 127.0.0.1, over plain HTTP or, given an `ssl.SSLContext`, TLS
(`tls_certificate` makes one a client can be told to trust):

- `RawUpstream`: a real aiohttp server whose handlers the test writes (an answer too big, a
  stream that never ends an event, a 401);
- `ByteUpstream`: a TCP server that reads each request and answers it with the bytes the test
  gives (a status line that is nonsense, bytes that are not HTTP at all, a body cut short),
  then closes the connection.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import socket
import ssl
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class RawUpstream:
    def __init__(self, routes: dict[tuple[str, str], Handler], ssl_context: ssl.SSLContext | None = None) -> None:
        self.routes = routes
        self.ssl_context = ssl_context
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, name="raw-upstream", daemon=True)

    @property
    def base_url(self) -> str:
        scheme = "http" if self.ssl_context is None else "https"
        return f"{scheme}://127.0.0.1:{self.port}/v1"

    def start(self) -> RawUpstream:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._serve(sock), self._loop).result(10)
        return self

    async def _serve(self, sock: socket.socket) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        for (method, path), handler in self.routes.items():
            app.router.add_route(method, path, handler)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1)
        await self._runner.setup()
        await web.SockSite(self._runner, sock, ssl_context=self.ssl_context).start()

    def stop(self) -> None:
        runner = self._runner
        if runner is not None:
            asyncio.run_coroutine_threadsafe(runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


async def stream_bytes(request: web.Request, parts: list[bytes] | Callable[[], list[bytes]]) -> web.StreamResponse:
    """Send `parts` as a text/event-stream answer, one write each."""
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    for part in parts() if callable(parts) else parts:
        await response.write(part)
    await response.write_eof()
    return response


class ByteUpstream:
    """Reads each request's head and body, writes `answer` and closes; a thread a connection.
    Over TLS when given `ssl_context`; `requests` counts the requests read whole."""

    def __init__(self, answer: bytes, ssl_context: ssl.SSLContext | None = None) -> None:
        self.answer = answer
        self.ssl_context = ssl_context
        self.requests = 0
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True, name="byte-upstream").start()

    @property
    def base_url(self) -> str:
        scheme = "http" if self.ssl_context is None else "https"
        return f"{scheme}://127.0.0.1:{self.port}/v1"

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        try:
            if self.ssl_context is not None:
                connection = self.ssl_context.wrap_socket(connection, server_side=True)
            with connection:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = connection.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, _, body = data.partition(b"\r\n\r\n")
                lengths = [
                    line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
                ]
                length = int(lengths[0]) if lengths else 0
                while len(body) < length:
                    body += connection.recv(65536)
                self.requests += 1
                connection.sendall(self.answer)
        except OSError:  # a client that gave up (or refused the certificate)
            return

    def stop(self) -> None:
        self._server.close()


def tls_certificate(directory: Path, names: tuple[str, ...] = ()) -> tuple[ssl.SSLContext, Path]:
    """A certificate authority made here, and a server certificate it signs for 127.0.0.1,
    localhost and `names`: the server's TLS context, and the CA's file for a client to trust
    (an upstream's ca_file, SSL_CERT_FILE)."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"tandem test CA {directory.name}")])
    ca = _signed(x509.CertificateBuilder().subject_name(ca_name), ca_name, ca_key.public_key(), ca_key, ca=True)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "tandem test upstream")])
    alternatives: list[x509.GeneralName] = [
        x509.DNSName("localhost"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
    ]
    alternatives += [x509.DNSName(extra) for extra in names]
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .add_extension(x509.SubjectAlternativeName(alternatives), critical=False)
    )
    certificate = _signed(builder, ca_name, key.public_key(), ca_key, ca=False)
    ca_file = directory / "upstream-ca.pem"
    cert_file = directory / "upstream-cert.pem"
    key_file = directory / "upstream-key.pem"
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    return context, ca_file


def _signed(
    builder: x509.CertificateBuilder,
    issuer: x509.Name,
    public_key: ec.EllipticCurvePublicKey,
    signer: ec.EllipticCurvePrivateKey,
    ca: bool,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    return (
        builder.issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .sign(signer, hashes.SHA256())
    )

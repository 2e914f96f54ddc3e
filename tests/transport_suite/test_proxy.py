"""Egress proxies, for each transport, through a real forward proxy on 127.0.0.1
(tests/forward_proxy.py): a CONNECT tunnel for an https upstream (TLS verified end to end through
it), the absolute-form request line for an http one, Basic credentials from the proxy's URL as
Proxy-Authorization and nowhere else; the proxy taken from an upstream's `proxy` setting or from
the environment (either case of the variables), except for loopback hosts and what NO_PROXY
names. The upstreams the environment cases call are named `*.test`: a name only the proxy
resolves, so an answer proves the call went through it."""

from __future__ import annotations

import base64
import logging
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from router.config.upstream import Timeouts
from router.upstream import UpstreamFailure
from tests.fake_upstream import FakeUpstream, free_port
from tests.forward_proxy import ForwardProxy
from tests.gateway_server import chat, serve_process
from tests.raw_upstream import tls_certificate
from tests.transport_suite.transports import TRANSPORTS, started

LOGIN, PASSWORD = "alice", "pr0xy-s3cret"
BASIC = "Basic " + base64.b64encode(f"{LOGIN}:{PASSWORD}".encode()).decode()
BODY = orjson.dumps({"model": "edge-model", "messages": [{"role": "user", "content": "hi"}]})
STREAMED = orjson.dumps({"model": "edge-model", "messages": [{"role": "user", "content": "hi"}], "stream": True})
TIMEOUTS = Timeouts(connect=2, first_byte=5, idle=2)
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def authority(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    return tls_certificate(tmp_path_factory.mktemp("proxy-ca"), names=("cloud.test",))


@pytest.fixture(scope="module")
def plain() -> Iterator[FakeUpstream]:
    upstream = FakeUpstream("plain").start()
    yield upstream
    upstream.stop()


@pytest.fixture(scope="module")
def tls(authority: tuple[Any, Path]) -> Iterator[FakeUpstream]:
    upstream = FakeUpstream("tls", ssl_context=authority[0]).start()
    yield upstream
    upstream.stop()


@pytest.fixture()
def proxy() -> Iterator[ForwardProxy]:
    made = ForwardProxy(credentials=(LOGIN, PASSWORD), hosts={"cloud.test": "127.0.0.1", "edge.test": "127.0.0.1"})
    made.start()
    yield made
    made.stop()


async def answered(upstream: Any, stream: bool = False) -> bytes:
    """One call's whole answer (a plain body, or a stream's bytes)."""
    try:
        reply = await upstream.send(STREAMED if stream else BODY, stream=stream)
        if reply.stream is None:
            return bytes(reply.body)
        data = reply.stream.first_chunk
        while part := await reply.stream.chunks():
            data += part
        reply.stream.close()
        return bytes(data)
    finally:
        await upstream.close()


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
async def test_an_http_upstream_is_called_in_absolute_form(
    transport: str, stream: bool, proxy: ForwardProxy, plain: FakeUpstream
) -> None:
    plain.reset()
    upstream = await started(
        transport, base_url=plain.base_url, proxy=proxy.url_with(LOGIN, PASSWORD), timeouts=TIMEOUTS
    )
    data = await answered(upstream, stream)
    assert (b"data: [DONE]" if stream else b"hello from plain") in data, data[:200]
    [seen] = proxy.seen
    assert (seen.method, seen.target) == ("POST", f"{plain.base_url}/chat/completions")
    assert seen.headers["proxy-authorization"] == BASIC
    # The credentials are the proxy's: the upstream never sees them.
    [received] = plain.received
    assert not any(name.lower() == "proxy-authorization" for name in received.headers)


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
async def test_an_https_upstream_is_reached_through_a_tunnel(
    transport: str, stream: bool, proxy: ForwardProxy, tls: FakeUpstream, authority: tuple[Any, Path]
) -> None:
    tls.reset()
    upstream = await started(
        transport,
        base_url=tls.base_url,
        proxy=proxy.url_with(LOGIN, PASSWORD),
        ca_file=authority[1],
        timeouts=TIMEOUTS,
    )
    await answered(upstream, stream)
    [seen] = proxy.seen
    assert (seen.method, seen.target) == ("CONNECT", f"127.0.0.1:{tls.port}")
    assert seen.headers["proxy-authorization"] == BASIC
    assert len(tls.received) == 1  # the request went in the tunnel, TLS verified end to end


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("variable", ["HTTPS_PROXY", "https_proxy"])
async def test_the_environment_names_the_proxy_of_an_https_upstream(
    transport: str,
    variable: str,
    proxy: ForwardProxy,
    tls: FakeUpstream,
    authority: tuple[Any, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(variable, proxy.url_with(LOGIN, PASSWORD))
    monkeypatch.setenv("NO_PROXY", "example.com,.internal")  # names other hosts
    base_url = f"https://cloud.test:{tls.port}/v1"
    upstream = await started(transport, base_url=base_url, ca_file=authority[1], timeouts=TIMEOUTS)
    assert b"hello from" in await answered(upstream)
    assert proxy.targets() == [("CONNECT", f"cloud.test:{tls.port}")]


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy"])
async def test_the_environment_names_the_proxy_of_an_http_upstream(
    transport: str, variable: str, proxy: ForwardProxy, plain: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(variable, proxy.url_with(LOGIN, PASSWORD))
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")  # the other scheme's: not used
    upstream = await started(transport, base_url=f"http://edge.test:{plain.port}/v1", timeouts=TIMEOUTS)
    assert b"hello from" in await answered(upstream)
    assert proxy.targets() == [("POST", f"http://edge.test:{plain.port}/v1/chat/completions")]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_loopback_and_no_proxy_hosts_go_direct(
    transport: str,
    proxy: ForwardProxy,
    tls: FakeUpstream,
    authority: tuple[Any, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", proxy.url_with(LOGIN, PASSWORD))
    monkeypatch.setenv("no_proxy", "other.example, .test")
    # A loopback upstream: straight to it, whatever HTTPS_PROXY says.
    upstream = await started(transport, base_url=tls.base_url, ca_file=authority[1], timeouts=TIMEOUTS)
    assert b"hello from" in await answered(upstream)
    # A host NO_PROXY names: straight too, so its name (known only to the proxy) is not found.
    upstream = await started(
        transport, base_url=f"https://cloud.test:{tls.port}/v1", ca_file=authority[1], timeouts=TIMEOUTS
    )
    with pytest.raises(UpstreamFailure):
        await answered(upstream)
    assert proxy.targets() == []


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("scheme", ["http", "https"])
@pytest.mark.parametrize("proxy_down", [False, True], ids=["refused", "down"])
async def test_proxy_credentials_are_never_shown(
    transport: str,
    scheme: str,
    proxy_down: bool,
    proxy: ForwardProxy,
    plain: FakeUpstream,
    tls: FakeUpstream,
    authority: tuple[Any, Path],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A proxy that refuses the credentials (407) or is not there: a connect failure that names
    the proxy by its address, with no credential in it nor in any log line."""
    wrong = "wr0ng-pa55word"
    address = "http://127.0.0.1:9" if proxy_down else proxy.url
    url = address.replace("http://", f"http://{LOGIN}:{wrong}@")
    fake = tls if scheme == "https" else plain
    extra = {"ca_file": authority[1]} if scheme == "https" else {}
    caplog.set_level(logging.DEBUG)
    upstream = await started(transport, base_url=fake.base_url, proxy=url, timeouts=TIMEOUTS, **extra)
    with pytest.raises(UpstreamFailure) as failure:
        await answered(upstream)
    assert failure.value.kind == "connect", failure.value
    shown = f"{failure.value!s} {failure.value.detail} {failure.value.__cause__!r} {caplog.text}"
    assert address in shown, shown
    assert "407" in shown or proxy_down, shown
    for secret in (wrong, f"{LOGIN}:", base64.b64encode(f"{LOGIN}:{wrong}".encode()).decode()):
        assert secret not in shown, shown
    assert repr(upstream.egress.proxy).count(wrong) == 0 and wrong not in str(upstream.egress)


def test_a_gateway_reaches_its_cloud_through_the_sites_proxy(
    proxy: ForwardProxy, tls: FakeUpstream, authority: tuple[Any, Path], tmp_path: Path
) -> None:
    """`tandem serve` as a closed site runs it: HTTPS_PROXY with credentials in the environment,
    the cloud's name known only to the proxy, its certificate checked against `ca_file`; the
    edge on loopback goes direct. A step to the cloud is answered; with the proxy's credentials
    wrong, the step gets a 503 that names the proxy. No output of the gateway, at debug level,
    holds the credentials."""
    tls.reset()
    edge = FakeUpstream("edge").start()
    config = tmp_path / "tandem.yaml"
    config.write_text(
        f"""
upstreams:
  edge:  {{base_url: "{edge.base_url}", model: edge-model, timeouts: {{connect: 2, first_byte: 5}}}}
  cloud: {{base_url: "https://cloud.test:{tls.port}/v1", model: cloud-model, ca_file: "{authority[1]}",
           timeouts: {{connect: 2, first_byte: 5}}}}
routes:
  tandem/cloud: {{strategy: cloud, failover: false}}
  tandem/edge: {{strategy: edge, failover: false}}
log_level: debug
"""
    )
    outputs = []
    for password in (PASSWORD, "wr0ng-pa55word"):
        env = {**os.environ, "HTTPS_PROXY": proxy.url_with(LOGIN, password), "NO_PROXY": "example.com"}
        port = free_port()
        process = serve_process(config, port, env)
        try:
            with httpx.Client(timeout=10) as client:
                cloud = chat(client, f"http://127.0.0.1:{port}", model="tandem/cloud")
                local = chat(client, f"http://127.0.0.1:{port}", model="tandem/edge")
        finally:
            process.send_signal(signal.SIGTERM)
            output, _ = process.communicate(timeout=15)
        outputs.append(output + cloud.text)
        assert local.status_code == 200, local.text  # the loopback edge: direct
        if password == PASSWORD:
            assert cloud.status_code == 200, cloud.text
            assert cloud.headers["x-tandem-target"] == "cloud"
        else:
            assert cloud.status_code == 503, cloud.text
            assert f"127.0.0.1:{proxy.port}" in cloud.json()["error"]["message"]
    edge.stop()
    # Every call to the cloud (steps, and any readiness probe) went through the proxy, none else.
    assert {(seen.method, seen.target) for seen in proxy.seen} == {("CONNECT", f"cloud.test:{tls.port}")}
    assert len(proxy.seen) >= 2 and len(tls.received) == 1
    for output in outputs:
        for secret in (PASSWORD, "wr0ng-pa55word", f"{LOGIN}:"):
            assert secret not in output, secret

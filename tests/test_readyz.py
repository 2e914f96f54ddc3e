"""`/readyz` needs no key: it must show no credential, and it tells "reachable" from "authorised"."""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from aiohttp import web

from router.cli import main
from router.settings import ConfigError, load_settings
from tests.fake_upstream import FakeUpstream, free_port
from tests.gateway_server import GatewayServer, chat, serve_process, wait_until
from tests.raw_upstream import RawUpstream, tls_certificate


def test_readyz_shows_no_credentials(
    make_gateway: Callable[..., GatewayServer],
    edge: FakeUpstream,
    cloud: FakeUpstream,
    client: httpx.Client,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("READYZ_TEST_KEY", "sk-readyz-secret")
    server = make_gateway(
        routes={"tandem": {"strategy": "edge"}},
        edge_url=f"http://probe-user:edge-password@127.0.0.1:{edge.port}/v1",
        cloud_url=f"{cloud.base_url}?token=query-secret",
        upstream_overrides={"cloud": {"api_key_env": "READYZ_TEST_KEY"}},
    )
    response = client.get(f"{server.url}/readyz")
    assert response.status_code == 200
    for secret in ("probe-user", "edge-password", "query-secret", "sk-readyz-secret"):
        assert secret not in response.text, secret
    upstreams = response.json()["upstreams"]
    assert upstreams["edge"]["base_url"] == edge.base_url
    assert upstreams["cloud"]["base_url"] == cloud.base_url
    assert upstreams["edge"]["reachable"] is True


def test_credentials_in_a_url_beside_a_key_stop_the_start(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    upstreams = {
        "edge": {"base_url": "http://127.0.0.1:8000/v1", "model": "small"},
        "cloud": {"base_url": "https://user:pw@api.example.com/v1", "model": "big", "api_key_env": "SOME_KEY"},
    }
    with pytest.raises(ConfigError, match=r"upstreams\.cloud: base_url carries credentials"):
        load_settings(upstreams=upstreams)
    # Credentials in the URL alone are a way to authenticate, and fine.
    upstreams["cloud"].pop("api_key_env")
    assert load_settings(upstreams=upstreams).upstreams["cloud"].base_url.startswith("https://user:pw@")
    config = tmp_path / "tandem.yaml"
    config.write_text(
        """
upstreams:
  edge: {base_url: "http://127.0.0.1:8000/v1", model: small}
  cloud: {base_url: "https://user:pw@api.example.com/v1", model: big, api_key_file: key.txt}
"""
    )
    assert main(["serve", "--config", str(config)]) == 2
    assert "upstreams.cloud" in capsys.readouterr().err


@pytest.fixture()
def refusing_cloud() -> Iterator[RawUpstream]:
    """A cloud that answers, but takes no key: 401 on everything."""

    async def unauthorised(request: web.Request) -> web.StreamResponse:
        await request.read()
        body = {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}
        return web.json_response(body, status=401)

    upstream = RawUpstream(
        {("GET", "/v1/models"): unauthorised, ("POST", "/v1/chat/completions"): unauthorised}
    ).start()
    yield upstream
    upstream.stop()


def test_an_unauthorised_cloud_is_reachable_not_authorised_and_the_pod_stays_ready(
    make_gateway: Callable[..., GatewayServer],
    refusing_cloud: RawUpstream,
    client: httpx.Client,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="tandem")
    server = make_gateway(routes={"tandem": {"strategy": "edge"}}, cloud_url=refusing_cloud.base_url)

    def logged() -> bool:
        return any("upstream cloud is reachable but NOT authorised" in r.getMessage() for r in caplog.records)

    assert wait_until(logged), [r.getMessage() for r in caplog.records]
    assert any("upstream edge is reachable and authorised" in r.getMessage() for r in caplog.records)
    response = client.get(f"{server.url}/readyz")
    assert response.status_code == 200
    report = response.json()
    assert report["ready"] is True
    assert report["upstreams"]["cloud"]["reachable"] is True
    assert report["upstreams"]["cloud"]["authorised"] is False
    assert report["upstreams"]["edge"]["authorised"] is True
    metrics = client.get(f"{server.url}/metrics").text
    assert 'tandem_upstream_authorised{upstream="cloud"} 0.0' in metrics
    assert 'tandem_upstream_authorised{upstream="edge"} 1.0' in metrics
    assert 'tandem_upstream_reachable{upstream="cloud"} 1.0' in metrics
    # Edge steps still work while the cloud refuses the key.
    assert chat(client, server.url).status_code == 200


def test_a_missing_cloud_key_is_not_authorised_even_where_the_cloud_answers_without_one(
    make_gateway: Callable[..., GatewayServer],
    client: httpx.Client,
    cloud: FakeUpstream,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The fake cloud answers /models whatever the key: only the gateway knows its key is gone.
    monkeypatch.delenv("READYZ_MISSING_KEY", raising=False)
    server = make_gateway(
        routes={"tandem": {"strategy": "edge"}}, upstream_overrides={"cloud": {"api_key_env": "READYZ_MISSING_KEY"}}
    )
    report = client.get(f"{server.url}/readyz").json()
    assert report["ready"] is True
    cloud_state = report["upstreams"]["cloud"]
    assert cloud_state["reachable"] is True and cloud_state["authorised"] is False
    assert "READYZ_MISSING_KEY (api_key_env) is not set" in cloud_state["detail"]
    metrics = client.get(f"{server.url}/metrics").text
    # TandemUpstreamUnauthorised fires on this (deploy/prometheus/alerts.test.yaml).
    assert 'tandem_upstream_authorised{upstream="cloud"} 0.0' in metrics
    assert 'tandem_upstream_reachable{upstream="cloud"} 1.0' in metrics
    # With the key there, the same cloud is authorised.
    monkeypatch.setenv("READYZ_MISSING_KEY", "sk-present")
    keyed = make_gateway(
        routes={"tandem": {"strategy": "edge"}}, upstream_overrides={"cloud": {"api_key_env": "READYZ_MISSING_KEY"}}
    )
    assert client.get(f"{keyed.url}/readyz").json()["upstreams"]["cloud"]["authorised"] is True


def test_scrapes_keep_the_readiness_gauges_current_without_a_readyz_caller(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client
) -> None:
    own_cloud = FakeUpstream(name="cloud", model="cloud-model").start()
    try:
        server = make_gateway(routes={"tandem": {"strategy": "edge"}}, cloud_url=own_cloud.base_url)

        def gauge() -> str:
            text = client.get(f"{server.url}/metrics").text
            # "" until the first scrape has set it (the series appears then).
            return next(
                (line for line in text.splitlines() if line.startswith('tandem_upstream_reachable{upstream="cloud"}')),
                "",
            )

        assert wait_until(lambda: gauge().endswith(" 1.0"))
    finally:
        own_cloud.stop()
    # The cloud went away; nobody calls /readyz: the scrapes themselves see it.
    assert wait_until(lambda: gauge().endswith(" 0.0"), timeout=15), gauge()


def test_an_unreachable_upstream_has_unknown_authorisation(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "edge"}}, cloud_url="http://127.0.0.1:1/v1")
    report = client.get(f"{server.url}/readyz").json()
    assert report["ready"] is True
    assert report["upstreams"]["cloud"]["reachable"] is False
    assert report["upstreams"]["cloud"]["authorised"] is None


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_an_upstream_that_redirects_elsewhere_is_not_reachable_and_the_redirect_is_not_followed(
    scheme: str, tmp_path: Path, edge: FakeUpstream
) -> None:
    # The cloud's base URL answers every call with a redirect to another host. The probe must
    # not follow it (the key would go there, and the other host's 200 would read as a healthy
    # cloud): the cloud is not reachable, with the status said. Over TLS the gateway (a real
    # `tandem serve`, whose https client is aiohttp) trusts the test certificate.
    reached_elsewhere: list[str | None] = []

    async def elsewhere(request: web.Request) -> web.StreamResponse:
        reached_elsewhere.append(request.headers.get("Authorization"))
        return web.json_response({"object": "list", "data": []})

    other = RawUpstream({("GET", "/v1/models"): elsewhere, ("POST", "/v1/chat/completions"): elsewhere}).start()

    async def redirect(request: web.Request) -> web.StreamResponse:
        return web.Response(status=302, headers={"Location": f"http://localhost:{other.port}{request.path}"})

    context, certificate = tls_certificate(tmp_path) if scheme == "https" else (None, None)
    cloud = RawUpstream({("GET", "/v1/models"): redirect}, ssl_context=context).start()
    assert cloud.base_url.startswith(f"{scheme}://")
    config = tmp_path / "tandem.yaml"
    config.write_text(
        f"""
upstreams:
  edge:  {{base_url: "{edge.base_url}", model: small}}
  cloud: {{base_url: "{cloud.base_url}", model: big, api_key_env: READYZ_REDIRECT_KEY}}
log_level: info
"""
    )
    env = {**os.environ, "READYZ_REDIRECT_KEY": "sk-redirect-secret"}
    if certificate is not None:
        env["SSL_CERT_FILE"] = str(certificate)
    port = free_port()
    process = serve_process(config, port, env)
    try:
        response = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=10)
        report = response.json()
        metrics = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=15)
        cloud.stop()
        other.stop()
    state = report["upstreams"]["cloud"]
    assert state["reachable"] is False and state["authorised"] is None, state
    assert state["detail"].startswith("HTTP 302: the upstream redirects (not followed)"), state
    assert reached_elsewhere == []  # neither the probe nor its key went to the other host
    assert 'tandem_upstream_reachable{upstream="cloud"} 0.0' in metrics
    assert "upstream cloud is not reachable (HTTP 302" in output
    # The edge answers: the pod stays ready.
    assert response.status_code == 200 and report["ready"] is True
    assert report["upstreams"]["edge"]["reachable"] is True

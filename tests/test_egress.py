"""How calls leave the gateway for an upstream (router/transport/choose.py, proxy.py, tls.py): the
client each upstream gets, the proxy the environment or its `proxy` setting names (NO_PROXY's
forms, loopback hosts, either case of the variables), and the errors at start-up that name the
setting or variable at fault without quoting a credential. The wire side is in
tests/transport_suite/test_proxy.py and test_wire.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from router.config.base import ConfigError
from router.config.upstream import UpstreamSettings
from router.transport.aiohttp_transport import AiohttpTransport
from router.transport.choose import egress_for, transport_for
from router.transport.http1 import Http1Session
from router.transport.proxy import Proxy, bypassed, is_loopback, proxy_for

PROXY = "http://10.1.2.3:3128"


def settings(base_url: str, **extra: object) -> UpstreamSettings:
    return UpstreamSettings(base_url=base_url, model="m", **extra)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("base_url", "client", "chosen"),
    [
        ("http://edge:8000/v1", "auto", "builtin"),
        ("https://api.example.com/v1", "auto", "aiohttp"),
        ("https://api.example.com/v1", "builtin", "builtin"),
        ("http://edge:8000/v1", "aiohttp", "aiohttp"),
    ],
)
async def test_the_client_follows_the_scheme_unless_one_is_named(base_url: str, client: str, chosen: str) -> None:
    upstream = settings(base_url, client=client)
    egress = egress_for(upstream, "edge", environ={})
    assert egress.client == chosen
    assert (egress.tls is not None) == base_url.startswith("https://")
    transport = transport_for(upstream, egress)
    try:
        assert isinstance(transport, Http1Session if chosen == "builtin" else AiohttpTransport)
    finally:
        await transport.close()


@pytest.mark.parametrize(
    ("host", "port", "no_proxy", "bypass"),
    [
        ("api.example.com", 443, "*", True),
        ("api.example.com", 443, "example.com", True),
        ("api.example.com", 443, ".example.com", True),
        ("example.com", 443, ".example.com", True),
        ("notexample.com", 443, "example.com", False),
        ("api.example.com", 443, "other.org, api.example.com:8443", False),
        ("api.example.com", 8443, "other.org, api.example.com:8443", True),
        ("10.4.5.6", 80, "10.0.0.0/8", True),
        ("11.4.5.6", 80, "10.0.0.0/8", False),
        ("fd00::1", 80, "fd00::/8", True),
        ("fd00::1", 80, "[fd00::1]:80", True),
        ("API.Example.COM", 443, "api.example.com", True),
        ("api.example.com", 443, "", False),
    ],
)
def test_no_proxy_forms(host: str, port: int, no_proxy: str, bypass: bool) -> None:
    assert bypassed(host, port, no_proxy) is bypass


@pytest.mark.parametrize("host", ["localhost", "vllm.localhost", "127.0.0.1", "127.8.9.10", "::1", "[::1]"])
def test_loopback_hosts(host: str) -> None:
    assert is_loopback(host)
    in_url = f"[{host}]" if ":" in host and not host.startswith("[") else host
    assert proxy_for(f"https://{in_url}:8000/v1", "env", "proxy", {"HTTPS_PROXY": PROXY}) is None


def test_the_variable_of_the_upstreams_scheme_is_read_lower_case_first() -> None:
    environ = {"HTTPS_PROXY": "http://upper:1", "https_proxy": "http://lower:2", "HTTP_PROXY": "http://plain:3"}
    assert proxy_for("https://api.example.com/v1", "env", "proxy", environ) == Proxy("lower", 2)
    assert proxy_for("http://api.example.com/v1", "env", "proxy", environ) == Proxy("plain", 3)
    assert proxy_for("http://api.example.com/v1", "env", "proxy", {"HTTPS_PROXY": PROXY}) is None
    assert proxy_for("https://api.example.com/v1", "env", "proxy", {"https_proxy": "10.1.2.3:3128"}) == Proxy(
        "10.1.2.3", 3128
    )


def test_all_proxy_is_read_after_the_schemes_own_when_it_names_an_http_proxy() -> None:
    assert proxy_for("https://api.example.com/v1", "env", "proxy", {"ALL_PROXY": "http://all:3128"}) == Proxy(
        "all", 3128
    )
    assert proxy_for("http://api.example.com/v1", "env", "proxy", {"all_proxy": "all:3128"}) == Proxy("all", 3128)
    both = {"ALL_PROXY": "http://all:3128", "HTTPS_PROXY": PROXY}
    assert proxy_for("https://api.example.com/v1", "env", "proxy", both) == proxy_for(
        "https://api.example.com/v1", "env", "proxy", {"HTTPS_PROXY": PROXY}
    )
    # A SOCKS proxy there is another tool's: passed over, never a reason not to start.
    assert proxy_for("https://api.example.com/v1", "env", "proxy", {"ALL_PROXY": "socks5://s:1080"}) is None
    assert (
        proxy_for(
            "https://api.example.com/v1", "env", "proxy", {"ALL_PROXY": "http://all:3128", "NO_PROXY": "example.com"}
        )
        is None
    )
    assert proxy_for("http://127.0.0.1:8000/v1", "env", "proxy", {"ALL_PROXY": "http://all:3128"}) is None


def test_no_proxy_in_either_case_is_read() -> None:
    for name in ("NO_PROXY", "no_proxy"):
        environ = {"HTTPS_PROXY": PROXY, name: "api.example.com"}
        assert proxy_for("https://api.example.com/v1", "env", "proxy", environ) is None


def test_the_upstream_setting_wins_over_the_environment() -> None:
    environ = {"HTTPS_PROXY": PROXY, "NO_PROXY": "*"}
    named = proxy_for("https://api.example.com/v1", "http://u:p@proxy.corp:8080", "proxy", environ)
    assert named == Proxy("proxy.corp", 8080, "u", "p") and named.authorization == "Basic dTpw"
    # Named explicitly, a proxy is used even for a loopback host; `direct` never uses one.
    assert proxy_for("http://127.0.0.1:8000/v1", "http://proxy.corp:8080", "proxy", {}) is not None
    assert proxy_for("https://api.example.com/v1", "direct", "proxy", environ) is None


def test_a_proxy_never_shows_its_credentials() -> None:
    proxy = proxy_for("https://a.example/v1", "http://alice:s%3Acret@proxy.corp:8080", "proxy", {})
    assert proxy is not None and proxy.password == "s:cret"
    for shown in (repr(proxy), str(proxy), proxy.shown):
        assert "alice" not in shown and "cret" not in shown, shown


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("socks5://alice:secret-pw@proxy.corp:1080", "a socks5:// proxy is not supported"),
        ("https://alice:secret-pw@proxy.corp:443", "a https:// proxy is not supported"),
        ("http://alice:secret-pw@proxy.corp:port", "is not a proxy URL"),
        ("http://alice:secret-pw@:3128", "names no proxy host"),
    ],
)
def test_a_bad_proxy_stops_the_start_naming_where_it_was_set(value: str, said: str) -> None:
    upstream = settings("https://api.example.com/v1")
    with pytest.raises(ConfigError) as from_environment:
        egress_for(upstream, "cloud", environ={"https_proxy": value})
    assert said in str(from_environment.value) and "https_proxy environment variable" in str(from_environment.value)
    with pytest.raises(ConfigError) as from_setting:
        egress_for(settings("https://api.example.com/v1", proxy=value), "cloud", environ={})
    assert "upstreams.cloud.proxy" in str(from_setting.value)
    for error in (from_environment.value, from_setting.value):
        assert "secret-pw" not in str(error) and "alice" not in str(error)


def test_a_ca_file_that_cannot_be_used_stops_the_start(tmp_path: Path) -> None:
    missing = tmp_path / "missing.pem"
    with pytest.raises(ConfigError, match=r"upstreams.cloud.ca_file .*missing.pem: No such file"):
        egress_for(settings("https://api.example.com/v1", ca_file=missing), "cloud", environ={})
    not_pem = tmp_path / "not.pem"
    not_pem.write_text("not a certificate")
    with pytest.raises(ConfigError, match=r"upstreams.cloud.ca_file .*not.pem"):
        egress_for(settings("https://api.example.com/v1", ca_file=not_pem), "cloud", environ={})


def test_a_ca_file_on_a_plain_http_upstream_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="ca_file is set, but this upstream is not https"):
        settings("http://edge:8000/v1", ca_file=tmp_path / "ca.pem")

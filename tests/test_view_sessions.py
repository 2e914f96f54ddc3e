"""The operator's view's sign-in over real HTTP: the cookie's Secure flag behind a TLS proxy (its
`X-Forwarded-Proto` believed from `server.trusted_proxies` only, or `ui.secure_cookie`), sessions
ended on the server by signing out (on every replica with Redis), and sign-out and sign-in
refused from another origin, in a real browser too."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from tests.gateway_server import GatewayServer
from tests.test_operator_view import ADMIN_KEY, chromium

MakeGateway = Callable[..., GatewayServer]
SAME_ORIGIN = {"Sec-Fetch-Site": "same-origin"}


def view_gateway(make: MakeGateway, **overrides: Any) -> GatewayServer:
    return make(ui={"enabled": True, **overrides.pop("ui", {})}, admin_api_keys=[ADMIN_KEY], **overrides)


def sign_in(client: httpx.Client, server: GatewayServer, headers: dict[str, str] | None = None) -> httpx.Response:
    return client.post(f"{server.url}/ui/login", data={"key": ADMIN_KEY}, headers={**SAME_ORIGIN, **(headers or {})})


def cookie_of(login: httpx.Response) -> str:
    assert login.status_code == 303, login.text
    return login.headers["set-cookie"].split(";")[0].split("=", 1)[1]


def attributes(login: httpx.Response) -> set[str]:
    return {part.strip().split("=")[0].lower() for part in login.headers["set-cookie"].split(";")[1:]}


def sign_out(server: GatewayServer, cookie: str, headers: dict[str, str]) -> httpx.Response:
    """The sign-out form posted by a browser holding `cookie`, with the headers it sends."""
    with httpx.Client(cookies={"tandem_ui": cookie}) as browser:
        return browser.post(f"{server.url}/ui/logout", headers=headers)


def opens(server: GatewayServer, cookie: str) -> bool:
    with httpx.Client(cookies={"tandem_ui": cookie}) as browser:
        status = browser.get(f"{server.url}/ui").status_code
    assert status in (200, 401)
    return status == 200


def test_the_cookie_is_secure_over_https_through_a_trusted_proxy_only(
    make_gateway: MakeGateway, client: httpx.Client
) -> None:
    https = {"X-Forwarded-Proto": "https"}
    behind = view_gateway(make_gateway, server={"trusted_proxies": ["127.0.0.1/32"]})
    assert "secure" in attributes(sign_in(client, behind, https))
    assert "secure" in attributes(sign_in(client, behind, {"X-Forwarded-Proto": "http, https"}))  # the nearest's
    assert "secure" not in attributes(sign_in(client, behind, {"X-Forwarded-Proto": "https, http"}))
    assert "secure" not in attributes(sign_in(client, behind))  # plain HTTP to the proxy
    # From a peer that is no trusted proxy the header is anyone's word: ignored.
    for trusted in ([], ["10.0.0.0/8"]):
        direct = view_gateway(make_gateway, server={"trusted_proxies": trusted})
        assert "secure" not in attributes(sign_in(client, direct, https))
    # TLS ends at a proxy the gateway does not know: the setting forces the flag.
    forced = view_gateway(make_gateway, ui={"secure_cookie": True})
    login = sign_in(client, forced)
    assert {"secure", "httponly", "samesite"} <= attributes(login) and "SameSite=strict" in login.headers["set-cookie"]


def test_a_bad_trusted_proxy_is_a_config_error(make_gateway: MakeGateway) -> None:
    with pytest.raises(Exception, match="trusted_proxies"):
        view_gateway(make_gateway, server={"trusted_proxies": ["not-a-network"]})


@pytest.fixture(params=["memory", "redis"])
def either_store(request: pytest.FixtureRequest, make_gateway: MakeGateway) -> MakeGateway:
    """`make_gateway` with its sessions in memory, then in a real redis-server."""
    if request.param == "memory":
        return make_gateway
    redis_url = request.getfixturevalue("redis_url")
    return lambda **overrides: make_gateway(redis_url=redis_url, **overrides)


class TestSignOut:
    def test_signing_out_ends_the_session_on_the_server(self, either_store: MakeGateway, client: httpx.Client) -> None:
        server = view_gateway(either_store)
        kept, ended = cookie_of(sign_in(client, server)), cookie_of(sign_in(client, server))
        assert opens(server, kept) and opens(server, ended)
        logout = sign_out(server, ended, SAME_ORIGIN)
        assert logout.status_code == 303 and logout.headers["location"] == "/ui/login"
        assert 'tandem_ui=""' in logout.headers["set-cookie"] or "Max-Age=0" in logout.headers["set-cookie"]
        # The old cookie, kept by whoever copied it, opens nothing; the other session stays.
        assert not opens(server, ended)
        assert opens(server, kept)

    def test_sign_out_refused_from_another_origin(self, either_store: MakeGateway, client: httpx.Client) -> None:
        server = view_gateway(either_store)
        cookie = cookie_of(sign_in(client, server))
        for headers in (
            {"Sec-Fetch-Site": "cross-site"},
            {"Sec-Fetch-Site": "same-site"},  # another port of this host: same site, not same origin
            {"Origin": "http://evil.example"},  # a browser too old for Sec-Fetch-Site
            {"Origin": "null"},
        ):
            refused = sign_out(server, cookie, headers)
            assert refused.status_code == 403, headers
            assert refused.json()["error"]["code"] == "ui_cross_origin" and "set-cookie" not in refused.headers
        assert opens(server, cookie)
        # Nor can another site sign a browser in (into a session of its choosing).
        assert sign_in(client, server, {"Sec-Fetch-Site": "cross-site"}).status_code == 403
        own = {"Origin": f"http://127.0.0.1:{server.port}"}
        assert sign_out(server, cookie, own).status_code == 303
        assert not opens(server, cookie)


def test_signing_out_on_one_replica_ends_the_session_on_another(
    make_gateway: MakeGateway, client: httpx.Client, redis_url: str
) -> None:
    first, second = (view_gateway(make_gateway, redis_url=redis_url) for _ in range(2))
    cookie = cookie_of(sign_in(client, first))
    assert opens(second, cookie)  # the session is shared through Redis
    assert sign_out(second, cookie, SAME_ORIGIN).status_code == 303
    assert not opens(first, cookie)


@pytest.fixture()
def other_origin() -> Iterator[Callable[[str], str]]:
    """A page on another port of this host (same site, another origin) whose form posts to a
    URL as soon as it loads: what a hostile page would do."""
    pages: dict[str, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = pages.get(self.path, b"")
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def page(action: str) -> str:
        pages["/"] = (
            f'<!doctype html><form method=post action="{action}"></form><script>document.forms[0].submit()</script>'
        ).encode()
        return f"http://127.0.0.1:{server.server_address[1]}/"

    yield page
    server.shutdown()
    server.server_close()


def test_in_a_real_browser_another_origin_cannot_sign_out_and_the_button_can(
    make_gateway: MakeGateway, client: httpx.Client, other_origin: Callable[[str], str]
) -> None:
    from tests.devtools import Browser

    server = view_gateway(make_gateway)
    browser = Browser(chromium())
    try:
        browser.send("Network.enable")
        browser.open(f"{server.url}/ui/login")
        browser.wait_for("document.getElementById('key') !== null")
        browser.act(f"document.getElementById('key').value = {ADMIN_KEY!r}; document.forms[0].submit()")
        browser.wait_for("document.getElementById('trajectories') !== null || !!document.querySelector('table, p')")
        assert browser.evaluate("location.pathname") == "/ui"
        (cookie,) = [c["value"] for c in browser.send("Network.getCookies")["cookies"] if c["name"] == "tandem_ui"]
        # A hostile page on another port posts the sign-out form: refused, the session stands.
        browser.open(other_origin(f"{server.url}/ui/logout"))
        browser.wait_for("location.pathname === '/ui/logout' && document.body.innerText.includes('ui_cross_origin')")
        assert opens(server, cookie)
        browser.open(f"{server.url}/ui")
        browser.wait_for("location.pathname === '/ui' && document.body.innerText.includes('Recent trajectories')")
        # The page's own Sign out button ends the session: the copied cookie opens nothing.
        browser.act("document.querySelector('form[action=\"/ui/logout\"] button').click()")
        browser.wait_for("location.pathname === '/ui/login' && document.getElementById('key') !== null")
        assert not opens(server, cookie)
        assert not [c for c in browser.send("Network.getCookies")["cookies"] if c["name"] == "tandem_ui"]
    finally:
        browser.close()

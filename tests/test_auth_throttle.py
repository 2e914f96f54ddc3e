"""Keys cannot be guessed at speed: past `auth_throttle.max_failures` failed key checks from one
client address, its requests get 429 with Retry-After, whatever key they carry, until the window
has passed; failures and refusals are counted from 0 in /metrics and logged without the key.
The address comes from X-Forwarded-For only behind `server.trusted_proxies`. Real gateway, real
HTTP; the throttle reads a clock the test moves.

    pytest -s tests/test_auth_throttle.py -k burst   # prints how many guesses a burst gets
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from typing import Any

import httpx
import openai
import pytest

from router.settings import ConfigError
from tests.fake_clock import FakeClock
from tests.gateway_server import GatewayServer

MakeGateway = Callable[..., GatewayServer]
KEY, ADMIN_KEY = "client-key-right", "admin-key-right"
GUESS = "guessed-key-0123456789"


def metric(client: httpx.Client, server: GatewayServer, name: str, kind: str) -> float:
    text = client.get(f"{server.url}/metrics").text
    found = re.search(rf'^{name}{{key_kind="{kind}"}} (\S+)$', text, re.MULTILINE)
    assert found is not None, f"{name}{{key_kind={kind!r}}} is not in /metrics"
    return float(found.group(1))


def ask(client: httpx.Client, server: GatewayServer, key: str | None, **headers: str) -> httpx.Response:
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    return client.post(
        f"{server.url}/v1/chat/completions",
        json={"model": "tandem", "messages": [{"role": "user", "content": "hi"}]},
        headers=headers,
    )


@pytest.fixture()
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture()
def make_throttled(make_gateway: MakeGateway, clock: FakeClock) -> MakeGateway:
    def make(**overrides: Any) -> GatewayServer:
        overrides.setdefault("routes", {"tandem": {"strategy": "edge"}})
        overrides.setdefault("client_api_keys", [KEY])
        overrides.setdefault("auth_throttle", {"max_failures": 5, "window_s": 60})
        server = make_gateway(**overrides)
        server.app.state.auth_throttle.clock = clock
        return server

    return make


def test_an_address_that_guesses_is_refused_then_let_back(
    make_throttled: MakeGateway, client: httpx.Client, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    server = make_throttled()
    for kind in ("client", "admin"):  # the series exist from the start, at 0
        assert metric(client, server, "tandem_auth_failures_total", kind) == 0
        assert metric(client, server, "tandem_auth_throttled_total", kind) == 0
    with caplog.at_level(logging.WARNING, logger="tandem.auth"):
        assert ask(client, server, None).status_code == 401  # a missing key counts too
        assert [ask(client, server, GUESS).status_code for _ in range(4)] == [401] * 4
        refused = ask(client, server, KEY)  # the right key too: it must not stand out
    assert refused.status_code == 429
    error = refused.json()["error"]
    assert error["type"] == "rate_limit_error" and error["code"] == "too_many_auth_failures"
    assert refused.headers["retry-after"] == "60"
    assert metric(client, server, "tandem_auth_failures_total", "client") == 5
    assert metric(client, server, "tandem_auth_throttled_total", "client") == 1
    logged = [record.getMessage() for record in caplog.records if record.name == "tandem.auth"]
    assert len(logged) == 1 and "5 failed client key checks from 127.0.0.1" in logged[0]
    assert GUESS not in caplog.text and KEY not in caplog.text
    # The OpenAI SDK sees its own RateLimitError (and is told when to come back).
    sdk = openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)
    with pytest.raises(openai.RateLimitError):
        sdk.chat.completions.create(model="tandem", messages=[{"role": "user", "content": "hi"}])
    clock.advance(59)
    assert ask(client, server, KEY).headers["retry-after"] == "1"
    clock.advance(1)  # the window has passed: the address starts afresh
    assert ask(client, server, KEY).status_code == 200
    assert ask(client, server, GUESS).status_code == 401
    assert ask(client, server, KEY).status_code == 200  # one failure is far from five


def test_a_burst_of_guesses_gets_only_the_allowed_few(make_throttled: MakeGateway, client: httpx.Client) -> None:
    server = make_throttled(auth_throttle={"max_failures": 20, "window_s": 60})
    codes = [ask(client, server, f"{GUESS}-{i}").status_code for i in range(200)]
    checked = codes.count(401)
    print(f"\n{checked} of 200 guesses checked in a burst from one address ({codes.count(429)} refused with 429)")
    assert checked == 20 and codes.count(429) == 180
    assert metric(client, server, "tandem_auth_throttled_total", "client") == 180


def test_admin_keys_of_the_trajectory_api_are_throttled(make_throttled: MakeGateway, client: httpx.Client) -> None:
    server = make_throttled(admin_api_keys=[ADMIN_KEY])
    headers = {"Authorization": f"Bearer {GUESS}"}
    codes = [client.get(f"{server.url}/v1/trajectories", headers=headers).status_code for _ in range(6)]
    assert codes == [401] * 5 + [429]
    right = client.get(f"{server.url}/v1/trajectories", headers={"Authorization": f"Bearer {ADMIN_KEY}"})
    assert right.status_code == 429
    assert metric(client, server, "tandem_auth_failures_total", "admin") == 5
    assert metric(client, server, "tandem_auth_throttled_total", "admin") == 2
    assert metric(client, server, "tandem_auth_failures_total", "client") == 0


def test_forwarded_for_is_believed_only_from_a_trusted_proxy(make_throttled: MakeGateway, client: httpx.Client) -> None:
    # No trusted proxy: the header is the client's own words, and changing it escapes nothing.
    direct = make_throttled()
    codes = [ask(client, direct, GUESS, **{"X-Forwarded-For": f"198.51.100.{i}"}).status_code for i in range(6)]
    assert codes == [401] * 5 + [429]
    # Behind a trusted proxy (this test's loopback), each forwarded client counts alone: the
    # rightmost address the proxy did not add itself, whatever the client put before it.
    proxied = make_throttled(server={"trusted_proxies": ["127.0.0.0/8"]})
    guesser = {"X-Forwarded-For": "192.0.2.1, 203.0.113.5"}
    assert [ask(client, proxied, GUESS, **guesser).status_code for _ in range(6)] == [401] * 5 + [429]
    spoofed = {"X-Forwarded-For": "10.9.9.9, 203.0.113.5, 127.0.0.1"}  # a second trusted hop
    assert ask(client, proxied, KEY, **spoofed).status_code == 429
    assert ask(client, proxied, KEY, **{"X-Forwarded-For": "203.0.113.6"}).status_code == 200
    assert ask(client, proxied, KEY, **{"X-Forwarded-For": "192.0.2.1"}).status_code == 200
    # An IPv6 client is counted by its /64: a fresh address in it escapes nothing.
    for index in range(5):
        assert ask(client, proxied, GUESS, **{"X-Forwarded-For": f"2001:db8:1:2::{index + 1}"}).status_code == 401
    assert ask(client, proxied, KEY, **{"X-Forwarded-For": "2001:db8:1:2::ffff"}).status_code == 429
    assert ask(client, proxied, KEY, **{"X-Forwarded-For": "2001:db8:1:3::1"}).status_code == 200


def test_a_bad_trusted_proxy_is_refused_at_start(make_gateway: MakeGateway) -> None:
    with pytest.raises(ConfigError, match="trusted_proxies"):
        make_gateway(server={"trusted_proxies": ["not-a-network"]})


def test_the_operator_views_sign_in_is_throttled(make_throttled: MakeGateway, client: httpx.Client) -> None:
    server = make_throttled(admin_api_keys=[ADMIN_KEY], ui={"enabled": True})
    assert client.get(f"{server.url}/ui").status_code == 401  # no key shown: the challenge, not a guess
    wrong = httpx.BasicAuth("operator", GUESS)
    assert [client.get(f"{server.url}/ui", auth=wrong).status_code for _ in range(3)] == [401] * 3
    form = [client.post(f"{server.url}/ui/login", data={"key": GUESS}).status_code for _ in range(2)]
    assert form == [401, 401]
    # Five failures: the right key is refused too, by Basic auth and by the form.
    assert client.get(f"{server.url}/ui", auth=httpx.BasicAuth("operator", ADMIN_KEY)).status_code == 429
    assert client.post(f"{server.url}/ui/login", data={"key": ADMIN_KEY}).status_code == 429
    assert metric(client, server, "tandem_auth_failures_total", "admin") == 5
    assert metric(client, server, "tandem_auth_throttled_total", "admin") == 2


def refused_soon(client: httpx.Client, server: GatewayServer) -> bool:
    """Whether the right key is refused within 3 s (a shared count arrives off the path; on a
    loaded machine a step's record and the count's round trip take their time)."""
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:
        if ask(client, server, KEY).status_code == 429:
            return True
        time.sleep(0.02)
    return False


def test_replicas_sharing_redis_count_an_addresss_failures_together(
    make_gateway: MakeGateway, client: httpx.Client, redis_url: str
) -> None:
    # Two replicas (or workers) of one deployment: each alone would let 5 guesses through.
    settings: dict[str, Any] = {
        "routes": {"tandem": {"strategy": "edge"}},
        "client_api_keys": [KEY],
        # (A window long enough that five requests fit it on a loaded machine.)
        "auth_throttle": {"max_failures": 5, "window_s": 6},
        "redis_url": redis_url,
    }
    first, second = make_gateway(**settings), make_gateway(**settings)
    assert [ask(client, first, GUESS).status_code for _ in range(3)] == [401] * 3
    assert [ask(client, second, GUESS).status_code for _ in range(2)] == [401] * 2
    # The fifth failure, counted in Redis, reaches the bound: the replica whose count reached it
    # refuses. (Each count is sent off the request's path: which of the two replicas' counts
    # comes fifth is a race.)
    deadline = time.monotonic() + 3.0
    refusing = None
    while refusing is None and time.monotonic() < deadline:
        refusing = next((server for server in (second, first) if ask(client, server, KEY).status_code == 429), None)
    assert refusing is not None
    other = first if refusing is second else second
    # The other learns it at the address's next failure there: one guess more, not five.
    assert ask(client, other, KEY).status_code == 200
    assert ask(client, other, GUESS).status_code == 401
    assert refused_soon(client, other)
    assert ask(client, first, GUESS).status_code == 429 and ask(client, second, GUESS).status_code == 429
    # The window (6 s here) runs from the last failure that counted, then both let it back.
    time.sleep(6.2)
    assert ask(client, first, KEY).status_code == 200 and ask(client, second, KEY).status_code == 200

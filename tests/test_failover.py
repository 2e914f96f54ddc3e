"""Failover before the first byte, errors relayed unchanged, and streams that fail visibly."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx
import openai
import orjson
import pytest

from router.fault_log import FAULTS
from tests.fake_upstream import FakeUpstream, free_port
from tests.gateway_server import GatewayServer, chat, wait_until
from tests.test_chat import sse_events


def test_connection_refused_fails_over_to_the_other_target(
    make_gateway: object, client: httpx.Client, cloud: FakeUpstream
) -> None:
    server = make_gateway(
        routes={"tandem": {"strategy": "edge", "failover": True}}, edge_url=f"http://127.0.0.1:{free_port()}/v1"
    )  # type: ignore[operator]
    response = chat(client, server.url, fake={"text": "from the cloud"})
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["content"] == "from the cloud"
    assert response.headers["x-tandem-target"] == "cloud"
    assert response.headers["x-tandem-fallback"] == "true"
    assert response.headers["x-tandem-reason"] == "route_fixed"
    metrics = client.get(f"{server.url}/metrics").text
    assert 'tandem_fallbacks_total{from_target="edge",kind="connect",route="tandem",to_target="cloud"} 1.0' in metrics


def test_streamed_step_fails_over_when_the_stream_dies_before_its_first_byte(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    edge.push({"kind": "drop", "after": 0})
    cloud.push({"text": "rescued"})
    response = chat(client, gateway.url, stream=True)
    assert response.headers["x-tandem-fallback"] == "true"
    assert "rescued" in response.text and sse_events(response.text)[-1] == "[DONE]"


def test_first_byte_timeout_fails_over(
    make_gateway: object, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    server = make_gateway(  # type: ignore[operator]
        routes={"tandem": {"strategy": "edge", "failover": True}},
        upstream_overrides={"edge": {"timeouts": {"connect": 1, "first_byte": 0.4, "idle": 1}}},
    )
    edge.push({"kind": "hang"})
    started = time.monotonic()
    response = chat(client, server.url)
    assert response.status_code == 200 and response.headers["x-tandem-fallback"] == "true"
    assert 0.35 < time.monotonic() - started < 3
    assert wait_until(lambda: edge.received[0].disconnected), "the hung upstream request was not cancelled"


def test_client_errors_pass_through_unchanged_without_failover(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    body = {
        "error": {
            "message": "This model's maximum context length is 2048 tokens. However, your prompt contains 4000",
            "type": "BadRequestError",
            "param": "input_tokens",
            "code": 400,
        }
    }
    edge.push({"kind": "error", "status": 400, "body": body})
    response = chat(client, gateway.url)
    assert response.status_code == 400
    assert response.json() == body
    assert response.headers["x-tandem-target"] == "edge"
    assert not cloud.received


# Upstream errors in other shapes than OpenAI's: relayed as they were, no client could read them.
OTHER_SHAPES = {
    "plain text": (
        500,
        "text/plain",
        "boom",
        "upstream answered HTTP 500 with no error object: boom",
        "server_error",
        None,
    ),
    "a page": (
        502,
        "text/html",
        "<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>",
        "upstream answered HTTP 502 with no error object: 502 Bad Gateway Bad Gateway",
        "server_error",
        None,
    ),
    "error as text": (400, "application/json", '{"error": "bad thing"}', "bad thing", "invalid_request_error", None),
    "vllm top level": (
        400,
        "application/json",
        '{"object": "error", "message": "bad request", "type": "BadRequestError", "code": 400}',
        "bad request",
        "BadRequestError",
        400,
    ),
    "empty": (429, "application/json", "", "upstream answered HTTP 429", "rate_limit_error", "rate_limit_exceeded"),
    "a list": (
        400,
        "application/json",
        '["x"]',
        'upstream answered HTTP 400 with no error object: ["x"]',
        "invalid_request_error",
        None,
    ),
}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("shape", sorted(OTHER_SHAPES))
def test_an_upstream_error_in_another_shape_reaches_the_client_in_openai_shape(
    make_gateway: object, client: httpx.Client, edge: FakeUpstream, shape: str, stream: bool
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "edge", "failover": False}})  # type: ignore[operator]
    status, content_type, body, message, kind, code = OTHER_SHAPES[shape]
    edge.push({"kind": "raw", "status": status, "content_type": content_type, "body": body})
    response = chat(client, server.url, stream=stream)
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"error": {"message": message, "type": kind, "code": code, "param": None}}
    assert response.headers["x-tandem-target"] == "edge"


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("status", "code", "setting"),
    [
        (401, "upstream_auth_failed", "upstreams.cloud.api_key_env or api_key_file"),
        (403, "upstream_auth_failed", "upstreams.cloud.api_key_env or api_key_file"),
        (404, "upstream_model_not_found", "upstreams.cloud.model"),
    ],
)
def test_an_upstream_refusing_the_gateways_own_settings_is_its_failure_not_the_clients(
    make_gateway: Callable[..., GatewayServer],
    client: httpx.Client,
    edge: FakeUpstream,
    cloud: FakeUpstream,
    status: int,
    code: str,
    setting: str,
    stream: bool,
) -> None:
    """The cloud refuses the gateway's key (401/403) or has no such model (404): relayed, a 401
    told the client its own key was bad. It is a failure of that upstream: failed over where
    the route allows it, else a 502 naming the setting to mend; the record keeps the failure."""
    said = '{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}'
    for failover in (True, False):
        server = make_gateway(routes={"tandem": {"strategy": "cloud", "failover": failover}})
        cloud.push({"kind": "raw", "status": status, "content_type": "application/json", "body": said})
        edge.push({"text": "the edge answered"})
        session = f"refused-{status}-{stream}-{failover}"
        response = chat(client, f"{server.url}/s/{session}", stream=stream)
        if failover:
            assert response.status_code == 200
            assert response.headers["x-tandem-target"] == "edge" and response.headers["x-tandem-fallback"] == "true"
        else:
            assert response.status_code == 502
            error = response.json()["error"]
            assert error["code"] == code and setting in error["message"], error
            # A refused key's message is not quoted (providers quote part of the key).
            assert ("Incorrect API key provided" in error["message"]) == (status == 404)
        record = client.get(f"{server.url}/v1/trajectories/{session}").json()["records"][0]
        assert record["failures"][0] == {"target": "cloud", "kind": "status", "http_status": 502}, record
        edge.reset()
        cloud.reset()


NOT_A_STREAM = {
    "a whole completion": (
        "application/json",
        '{"choices":[{"index":0,"message":{"role":"assistant","content":"x"},"finish_reason":"stop"}]}',
    ),
    "a page": ("text/html", "<html><body>502 Bad Gateway</body></html>"),
    "json without its type": ("text/plain", '{"id": "x"}'),
}


@pytest.mark.parametrize("answer", sorted(NOT_A_STREAM))
def test_a_streamed_step_answered_with_no_event_stream_fails_over_or_is_a_502(
    make_gateway: object, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream, answer: str
) -> None:
    """Its bytes were relayed as the stream (lines no client reads as events), then an error
    event, though no byte had reached the client and the other target could still answer."""
    content_type, body = NOT_A_STREAM[answer]
    fails_over = make_gateway(routes={"tandem": {"strategy": "edge", "failover": True}})  # type: ignore[operator]
    edge.push({"kind": "raw", "status": 200, "content_type": content_type, "body": body})
    cloud.push({"text": "rescued"})
    response = chat(client, fails_over.url, stream=True)
    assert response.status_code == 200 and response.headers["x-tandem-fallback"] == "true"
    assert "rescued" in response.text and sse_events(response.text)[-1] == "[DONE]"
    assert body not in response.text

    edge_only = make_gateway(routes={"tandem": {"strategy": "edge", "failover": False}})  # type: ignore[operator]
    edge.push({"kind": "raw", "status": 200, "content_type": content_type, "body": body})
    response = chat(client, edge_only.url, stream=True)
    assert response.status_code == 502
    error = response.json()["error"]
    assert error["code"] == "upstream_invalid_answer" and "not an event stream" in error["message"]
    assert f"Content-Type {content_type}" in error["message"]


def test_failover_off_relays_the_upstream_error_with_retry_after(
    make_gateway: object, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "edge", "failover": False}})  # type: ignore[operator]
    upstream_body = {"error": {"message": "slow down", "type": "rate_limit", "code": "rate_limited"}}
    edge.push({"kind": "error", "status": 429, "body": upstream_body, "retry_after": "7"})
    response = chat(client, server.url)
    assert response.status_code == 429
    assert response.json() == upstream_body
    assert response.headers["retry-after"] == "7"
    assert not cloud.received


@pytest.mark.parametrize(
    ("sent", "relayed"),
    [("-5", None), ("soon, 3", None), ("99999999999999999999999", "86400"), ("Wed, 21 Oct 2026 07:28:00 GMT", None)],
)
def test_a_retry_after_the_client_cannot_read_is_not_relayed(
    make_gateway: object, client: httpx.Client, edge: FakeUpstream, sent: str, relayed: str | None
) -> None:
    """Whole seconds (at most a day) or an HTTP date, as the upstream wrote it; anything else is
    left out (an SDK sleeps for what it is told, or fails to parse it)."""
    server = make_gateway(routes={"tandem": {"strategy": "edge", "failover": False}})  # type: ignore[operator]
    edge.push({"kind": "error", "status": 429, "body": {"error": {"message": "slow down"}}, "retry_after": sent})
    response = chat(client, server.url)
    assert response.status_code == 429
    expected = sent if relayed is None and sent.endswith("GMT") else relayed
    assert response.headers.get("retry-after") == expected


def test_both_targets_down_gives_503_with_retry_after(make_gateway: object, client: httpx.Client) -> None:
    server = make_gateway(  # type: ignore[operator]
        edge_url=f"http://127.0.0.1:{free_port()}/v1", cloud_url=f"http://127.0.0.1:{free_port()}/v1"
    )
    response = chat(client, server.url, stream=True)
    assert response.status_code == 503
    assert response.headers["retry-after"] == "5"
    error = response.json()["error"]
    assert error["code"] == "upstream_unavailable"
    assert "edge" in error["message"] and "cloud" in error["message"]
    assert response.headers["x-tandem-fallback"] == "true"
    ready = client.get(f"{server.url}/readyz")
    assert ready.status_code == 503 and ready.json()["ready"] is False


def test_upstream_key_reaches_the_upstream_but_never_the_client(
    make_gateway: object, client: httpx.Client, cloud: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_CLOUD_KEY", "sk-secret-cloud-key")
    server = make_gateway(  # type: ignore[operator]
        routes={"tandem": {"strategy": "cloud"}},
        upstream_overrides={"cloud": {"api_key_env": "TEST_CLOUD_KEY"}},
    )
    cloud.push(
        {
            "kind": "error",
            "status": 401,
            "body": {"error": {"message": "bad key", "type": "auth", "code": None}},
        }
    )
    response = chat(client, server.url)
    assert cloud.received[0].headers["Authorization"] == "Bearer sk-secret-cloud-key"
    assert "sk-secret" not in response.text and "sk-secret" not in str(response.headers)
    assert "sk-secret" not in client.get(f"{server.url}/readyz").text


def test_mid_stream_failure_ends_with_an_error_event_then_done(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream
) -> None:
    edge.push({"kind": "drop", "after": 2, "text": "a b c d e f"})
    response = chat(client, gateway.url, stream=True)
    events = sse_events(response.text)
    assert events[-1] == "[DONE]"
    error = orjson.loads(events[-2])["error"]
    assert error["code"] == "upstream_stream_failed" and "edge" in error["message"]
    trajectory = client.get(f"{gateway.url}/v1/trajectories/{response.headers['x-tandem-trajectory']}").json()
    assert trajectory["records"][0]["status"] == "error"


@pytest.mark.parametrize("kind", ["drop", "eof"])
def test_an_upstream_that_breaks_off_inside_an_event_leaves_no_half_event(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream, kind: str
) -> None:
    """The half event is not relayed (ended by the gateway's error event, it reached the openai
    SDK as JSON it could not parse: a JSONDecodeError, not the APIError an error event raises)."""
    edge.push({"kind": kind, "after": 2, "partial": True, "text": "a b c d e f"})
    response = chat(client, gateway.url, stream=True)
    events = sse_events(response.text)
    assert events[-1] == "[DONE]"
    assert all(isinstance(orjson.loads(event), dict) for event in events[:-1]), response.text
    error = orjson.loads(events[-2])["error"]
    assert error["code"] in ("upstream_stream_failed", "upstream_stream_incomplete")
    edge.push({"kind": kind, "after": 2, "partial": True, "text": "a b c d e f"})
    sdk = openai.OpenAI(base_url=f"{gateway.url}/v1", api_key="unused", max_retries=0)
    with pytest.raises(openai.APIError):
        for _chunk in sdk.chat.completions.create(
            model="tandem", messages=[{"role": "user", "content": "hi"}], stream=True
        ):
            pass


def test_idle_gap_ends_the_stream_with_an_error_event(
    make_gateway: object, client: httpx.Client, edge: FakeUpstream
) -> None:
    server = make_gateway(  # type: ignore[operator]
        routes={"tandem": {"strategy": "edge"}},
        upstream_overrides={"edge": {"timeouts": {"connect": 1, "first_byte": 2, "idle": 0.3}}},
    )
    edge.push({"kind": "stall", "after": 2})
    response = chat(client, server.url, stream=True)
    events = sse_events(response.text)
    assert events[-1] == "[DONE]"
    assert orjson.loads(events[-2])["error"]["code"] == "upstream_idle_timeout"


def _upstream_errors(client: httpx.Client, server: GatewayServer, kind: str) -> float:
    for line in client.get(f"{server.url}/metrics").text.splitlines():
        if line.startswith(f'tandem_upstream_errors_total{{kind="{kind}",upstream="edge"}}'):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


@pytest.mark.parametrize(
    ("how", "kind"),
    [("drop", "disconnected"), ("eof", "disconnected"), ("stall", "timeout"), ("not json", "invalid_answer")],
)
def test_an_upstream_failing_mid_stream_is_a_failed_call_counted_recorded_and_logged(
    make_gateway: Callable[..., GatewayServer],
    client: httpx.Client,
    edge: FakeUpstream,
    how: str,
    kind: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A stream the upstream broke off after its answer began was a failed step, but no failed
    call: not in `tandem_upstream_errors_total` (an edge that crashes in every stream showed
    nothing there, and its alert could not fire), not in the record's `failures`, not logged."""
    server = make_gateway(
        routes={"tandem": {"strategy": "edge"}},
        upstream_overrides={"edge": {"timeouts": {"connect": 1, "first_byte": 2, "idle": 0.3}}},
    )
    before = _upstream_errors(client, server, kind)
    if how == "not json":
        good = 'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"a"}}]}\n\n'
        edge.push({"kind": "raw", "content_type": "text/event-stream", "body": good + "data: {oops\n\n"})
    else:
        edge.push({"kind": how, "after": 2, "text": "a b c d e f"})
    FAULTS.clear()  # a line a kind every few seconds: this one's is said
    with caplog.at_level("WARNING", logger="tandem.upstream"):
        response = chat(client, f"{server.url}/s/mid-{how.replace(' ', '-')}", stream=True)
        assert sse_events(response.text)[-1] == "[DONE]"
        record = client.get(f"{server.url}/v1/trajectories/mid-{how.replace(' ', '-')}").json()["records"][0]
    assert record["status"] == "error"
    assert record["failures"] == [{"target": "edge", "kind": kind, "http_status": None}], record
    assert _upstream_errors(client, server, kind) == before + 1
    lines = [r.getMessage() for r in caplog.records if r.name == "tandem.upstream"]
    assert any(f"kind={kind}" in line and "mid-stream" in line for line in lines), lines


PARTIAL_ENDS = [
    ("drop", "upstream_stream_failed"),
    ("eof", "upstream_stream_incomplete"),
    ("stall", "upstream_idle_timeout"),
]


@pytest.mark.parametrize(("kind", "code"), PARTIAL_ENDS, ids=[kind for kind, _ in PARTIAL_ENDS])
@pytest.mark.parametrize("surface", ["chat", "messages", "responses"])
def test_an_upstream_that_stops_inside_an_event_gives_the_client_an_error_event_of_its_own(
    make_gateway: object, client: httpx.Client, edge: FakeUpstream, kind: str, code: str, surface: str
) -> None:
    """Half an event went out, then the upstream failed: the error is an event the client can
    read (chat), and the translated surfaces end with their error event, never as a finished
    answer."""
    server = make_gateway(  # type: ignore[operator]
        routes={"tandem": {"strategy": "edge"}},
        upstream_overrides={"edge": {"timeouts": {"connect": 1, "first_byte": 2, "idle": 0.3}}},
    )
    edge.push({"kind": kind, "after": 2, "partial": True})
    user = {"role": "user", "content": "hi"}
    headers = {"X-Session-ID": f"partial-{surface}-{kind}"}
    if surface == "chat":
        response = chat(client, server.url, stream=True)
        events = sse_events(response.text)
        assert events[-1] == "[DONE]"
        assert orjson.loads(events[-2])["error"]["code"] == code
    elif surface == "messages":
        body = {"model": "tandem", "max_tokens": 50, "stream": True, "messages": [user]}
        response = client.post(f"{server.url}/v1/messages", json=body, headers=headers)
        datas = [orjson.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ")]
        assert datas[-1]["type"] == "error", datas[-3:]
        assert not any(d["type"] == "message_stop" for d in datas)
    else:
        body = {"model": "tandem", "stream": True, "input": "hi"}
        response = client.post(f"{server.url}/v1/responses", json=body, headers=headers)
        datas = [orjson.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ")]
        kinds = [d["type"] for d in datas]
        assert "response.completed" not in kinds and kinds[-1] in ("response.failed", "error"), kinds[-3:]
    assert response.status_code == 200


def test_client_disconnect_cancels_the_upstream_stream(
    gateway: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    edge.push({"kind": "text", "text": "w " * 200, "chunk_delay": 0.05})
    with (
        httpx.Client(timeout=10) as http,
        http.stream(
            "POST",
            f"{gateway.url}/v1/chat/completions",
            json={"model": "tandem", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
            headers={"X-Session-ID": "leaver"},
        ) as response,
    ):
        for _ in response.iter_bytes():
            break
    assert wait_until(lambda: edge.received and edge.received[0].disconnected), "upstream kept generating"
    assert wait_until(
        lambda: (
            client.get(f"{gateway.url}/v1/trajectories/leaver").json()["records"][:1]
            and client.get(f"{gateway.url}/v1/trajectories/leaver").json()["records"][0]["status"] == "cancelled"
        )
    ), "the cancelled step was not recorded"


def test_readyz_reports_each_upstream(make_gateway: object, client: httpx.Client) -> None:
    server = make_gateway(edge_url=f"http://127.0.0.1:{free_port()}/v1")  # type: ignore[operator]
    response = client.get(f"{server.url}/readyz")
    assert response.status_code == 200
    body = response.json()
    assert body["ready"] is True
    assert body["upstreams"]["edge"]["reachable"] is False
    assert body["upstreams"]["cloud"]["reachable"] is True
    assert client.get(f"{server.url}/healthz").json() == {"status": "ok"}

"""Trust in the step pipeline (issue 11): a client that leaves cancels the upstream call, the
route's privacy policy and constraints outrank the target header, edge-only routes never fail
over to the cloud unless told, every begun step ends with a record, and upstream answers and
client fields are checked. Each test runs a real gateway against scripted real upstreams."""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import httpx
import orjson
import pytest

from router.api.http import chat_response
from router.protocol.chat import parse_chat_request
from router.result import StepMeta
from tests.fake_upstream import FakeUpstream, free_port
from tests.gateway_server import GatewayServer, wait_until

MakeGateway = Callable[..., GatewayServer]
HI = [{"role": "user", "content": "hi"}]


def ask(
    client: httpx.Client,
    server: GatewayServer,
    session: str = "s",
    messages: list[dict[str, Any]] | None = None,
    target: str | None = None,
    model: str = "tandem",
    **body: Any,
) -> httpx.Response:
    headers = {"X-Session-ID": session}
    if target is not None:
        headers["x-tandem-target"] = target
    payload = {"model": model, "messages": messages or HI, **body}
    return client.post(f"{server.url}/v1/chat/completions", json=payload, headers=headers)


def records(client: httpx.Client, server: GatewayServer, session: str) -> list[dict[str, Any]]:
    response = client.get(f"{server.url}/v1/trajectories/{session}")
    if response.status_code != 200:
        return []
    found: list[dict[str, Any]] = response.json()["records"]
    return found


# -- item 4: a client that leaves before the first byte ---------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_client_leaving_before_the_first_byte_cancels_the_upstream_at_once(
    make_gateway: MakeGateway, client: httpx.Client, edge: FakeUpstream, stream: bool
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "edge"}})
    edge.push({"kind": "text", "delay": 4})
    session = f"leaver-{stream}"
    with httpx.Client(timeout=0.5) as impatient, pytest.raises(httpx.ReadTimeout):
        ask(impatient, server, session, stream=stream)
    left = time.monotonic()
    # The upstream sees its connection closed well before it would have answered (4 s).
    assert wait_until(lambda: bool(edge.received) and edge.received[0].disconnected, timeout=2.0)
    assert time.monotonic() - left < 1.5
    assert wait_until(lambda: bool(records(client, server, session)), timeout=2.0)
    (record,) = records(client, server, session)
    assert record["status"] == "cancelled" and record["target"] == "edge"
    # Nothing reported by the upstream: the prompt is charged as an estimate, flagged as such.
    assert record["usage_estimated"] is True and record["usage"]["completion_tokens"] == 0
    assert record["usage"]["prompt_tokens"] > 0 and record["cost_usd"] > 0
    # The gateway still serves: the cancellation did not leave anything behind.
    assert ask(client, server, "after").status_code == 200


def test_watching_for_a_client_that_leaves_costs_no_task_per_request(
    make_gateway: MakeGateway, client: httpx.Client, edge: FakeUpstream
) -> None:
    """Issue 16: the server's own protocol tells the step that its client left (a callback from
    the lost connection); the watch is not a task of its own beside each request's."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    server = make_gateway(routes={"tandem": {"strategy": "edge"}})
    edge.push({"kind": "text", "delay": 1.0})

    async def tasks() -> list[str]:
        return [getattr(t.get_coro(), "__qualname__", "") for t in asyncio.all_tasks()]

    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(ask, client, server, "watched")
        assert wait_until(lambda: bool(edge.received))
        running = server.run(tasks())
        assert pending.result().status_code == 200
    assert "RequestResponseCycle.run_asgi" in running  # the request was in flight
    assert not [name for name in running if "ClientWatch" in name], running


def test_a_stream_is_relayed_in_its_request_task_alone(
    make_gateway: MakeGateway, client: httpx.Client, edge: FakeUpstream
) -> None:
    """Issue 16: a stream is relayed by the request's own task, its client watched by the
    connection's callback; no second task waits for the disconnect beside each stream."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    server = make_gateway(routes={"tandem": {"strategy": "edge"}})
    edge.push({"kind": "text", "text": "w " * 40, "chunk_delay": 0.05})

    async def tasks() -> list[str]:
        return [getattr(t.get_coro(), "__qualname__", "") for t in asyncio.all_tasks()]

    def streamed() -> bytes:
        with httpx.Client(timeout=10) as http:
            body = {"model": "tandem", "stream": True, "messages": HI}
            response = http.post(f"{server.url}/v1/chat/completions", json=body, headers={"X-Session-ID": "relay"})
            return response.content

    idle = Counter(server.run(tasks()))
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(streamed)
        assert wait_until(lambda: bool(edge.received))
        time.sleep(0.2)  # chunks are being relayed
        running = Counter(server.run(tasks()))
        assert pending.result().endswith(b"data: [DONE]\n\n")
    assert running - idle == Counter({"RequestResponseCycle.run_asgi": 1}), running - idle
    assert wait_until(lambda: bool(records(client, server, "relay")))
    assert records(client, server, "relay")[0]["status"] == "ok"


def test_client_leaving_mid_stream_is_charged_an_estimate_when_no_usage_came(
    make_gateway: MakeGateway, client: httpx.Client, edge: FakeUpstream
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "edge"}})
    edge.push({"kind": "text", "text": "w " * 200, "chunk_delay": 0.05})
    with (
        httpx.Client(timeout=10) as http,
        http.stream(
            "POST",
            f"{server.url}/v1/chat/completions",
            json={"model": "tandem", "stream": True, "messages": HI},
            headers={"X-Session-ID": "mid"},
        ) as response,
    ):
        for _ in response.iter_bytes():
            break
    assert wait_until(lambda: bool(edge.received) and edge.received[0].disconnected)
    assert wait_until(lambda: bool(records(client, server, "mid")))
    (record,) = records(client, server, "mid")
    assert record["status"] == "cancelled"
    assert record["usage_estimated"] is True and record["cost_usd"] > 0


def test_a_stream_whose_client_left_before_it_began_is_closed_and_recorded(
    make_gateway: MakeGateway, client: httpx.Client, edge: FakeUpstream
) -> None:
    """The client leaves in the instant between the step's first byte and the relay's start.
    A server on ASGI 2.4 then fails the first `send` with OSError, and Starlette never starts
    the body: nothing inside the relay runs, so the response itself must close the step."""
    server = make_gateway(routes={"tandem": {"strategy": "edge"}})
    edge.push({"kind": "text", "text": "w " * 100, "chunk_delay": 0.05})
    body = orjson.dumps({"model": "tandem", "stream": True, "messages": HI})

    async def answer_a_client_already_gone() -> None:
        from router.api.auth import namespace_of

        engine = server.gateway
        request = parse_chat_request(body)
        result = await engine.run(request, StepMeta({"x-session-id": "gone"}, namespace_of(None)))
        response = chat_response(result)

        async def receive() -> dict[str, str]:
            return {"type": "http.disconnect"}

        async def send(message: Any) -> None:
            raise OSError("the client closed the connection")

        with contextlib.suppress(Exception):
            await response({"type": "http", "asgi": {"spec_version": "2.4"}}, receive, send)

    server.run(answer_a_client_already_gone())
    assert wait_until(lambda: bool(edge.received) and edge.received[0].disconnected, timeout=2.0)
    assert wait_until(lambda: bool(records(client, server, "gone")))
    (record,) = records(client, server, "gone")
    assert record["status"] == "cancelled" and record["usage_estimated"] is True


# -- item 5: privacy, then constraints, then the header, then the strategy --------------------------
# In process: tests/test_engine_decisions.py (and the privacy block's record:
# tests/test_engine_privacy.py).


# -- item 6: edge-only means the data never leaves -------------------------------------------------


@pytest.mark.parametrize("model", ["tandem", "tandem/edge"])
def test_edge_routes_do_not_fail_over_to_the_cloud_by_default(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream, model: str
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "edge"}}, edge_url=f"http://127.0.0.1:{free_port()}/v1")
    response = ask(client, server, f"edge-down-{model}", model=model)
    assert response.status_code == 503
    assert response.headers["x-tandem-target"] == "edge"
    assert not cloud.received


def test_edge_route_with_failover_true_fails_over(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream
) -> None:
    server = make_gateway(
        routes={"tandem": {"strategy": "edge", "failover": True}}, edge_url=f"http://127.0.0.1:{free_port()}/v1"
    )
    response = ask(client, server)
    assert response.status_code == 200 and response.headers["x-tandem-fallback"] == "true"
    assert len(cloud.received) == 1


# -- item 10: deep JSON is a 400, and every begun step ends with a record -----------------------------


def nested(depth: int) -> bytes:
    """A chat request whose JSON is `depth` levels deep (the top-level object is level 1)."""
    inner = b"[" * (depth - 1) + b"]" * (depth - 1)
    return b'{"model": "tandem", "messages": [{"role": "user", "content": "x"}], "deep": ' + inner + b"}"


@pytest.mark.parametrize("depth", [129, 300, 1000, 5000])
def test_json_nested_deeper_than_the_limit_is_a_400(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream, depth: int
) -> None:
    response = client.post(
        f"{gateway.url}/v1/chat/completions", content=nested(depth), headers={"content-type": "application/json"}
    )
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "json_too_deep" and "max_json_depth" in error["message"] and "128" in error["message"]
    assert not edge.received


def test_json_at_the_depth_limit_is_served(gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream) -> None:
    response = client.post(
        f"{gateway.url}/v1/chat/completions", content=nested(128), headers={"content-type": "application/json"}
    )
    assert response.status_code == 200, response.text
    assert len(edge.received) == 1


def test_the_depth_limit_is_the_configured_one(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client, edge: FakeUpstream
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "edge"}}, limits={"max_json_depth": 12})
    headers = {"content-type": "application/json"}
    deep = client.post(f"{server.url}/v1/chat/completions", content=nested(13), headers=headers)
    assert deep.status_code == 400 and "12 levels" in deep.json()["error"]["message"], deep.text
    translated = client.post(
        f"{server.url}/v1/messages",
        content=b'{"model":"tandem","max_tokens":8,"messages":[{"role":"user","content":"x"}],"metadata":'
        + b"[" * 12
        + b"]" * 12
        + b"}",
        headers=headers,
    )
    assert translated.status_code == 400 and "12 levels" in translated.text, translated.text
    assert client.post(f"{server.url}/v1/chat/completions", content=nested(12), headers=headers).status_code == 200


@pytest.mark.parametrize("depth", [129, 300, 5000])
@pytest.mark.parametrize(
    ("path", "head"),
    [
        ("messages", b'{"model": "tandem", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}], '),
        ("responses", b'{"model": "tandem", "input": "x", '),
    ],
    ids=["messages", "responses"],
)
def test_deep_json_on_the_translated_surfaces_is_a_400(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream, path: str, head: bytes, depth: int
) -> None:
    # Tool schemas are kept by the translation, so their depth reaches the re-serialised request.
    inner = b"[" * (depth - 4) + b"]" * (depth - 4)
    tool = (
        b'{"name": "t", "input_schema": {"deep": '
        if path == "messages"
        else b'{"type": "function", "name": "t", "parameters": {"deep": '
    )
    content = head + b'"tools": [' + tool + inner + b"}}]}"
    response = client.post(f"{gateway.url}/v1/{path}", content=content, headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text
    assert "max_json_depth" in response.text
    counted = client.get(f"{gateway.url}/metrics").text
    assert 'tandem_bad_requests_total{code="json_too_deep"} 1.0' in counted
    assert not edge.received


def test_client_leaving_a_messages_request_cancels_the_upstream(
    make_gateway: MakeGateway, client: httpx.Client, edge: FakeUpstream
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "edge"}})
    edge.push({"kind": "text", "delay": 4})
    body = {"model": "tandem", "max_tokens": 5, "messages": HI}
    with httpx.Client(timeout=0.5) as impatient, pytest.raises(httpx.ReadTimeout):
        impatient.post(f"{server.url}/v1/messages", json=body, headers={"X-Session-ID": "leaver-messages"})
    assert wait_until(lambda: bool(edge.received) and edge.received[0].disconnected, timeout=1.5)
    assert wait_until(lambda: bool(records(client, server, "leaver-messages")))
    assert records(client, server, "leaver-messages")[0]["status"] == "cancelled"


# -- item 12: upstream answers that are not answers; mistyped standard fields --------------------------


@pytest.mark.parametrize(
    "behaviour",
    [
        {"kind": "error", "status": 200, "body": {"error": {"message": "overloaded", "type": "server_error"}}},
        {"kind": "raw", "status": 200, "body": "<html>Bad gateway</html>", "content_type": "text/html"},
        {"kind": "raw", "status": 200, "body": '{"choices": [', "content_type": "application/json"},
    ],
)
def test_a_200_that_is_not_an_answer_fails_over_and_is_not_charged(
    make_gateway: MakeGateway, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream, behaviour: dict[str, Any]
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "edge", "failover": True}})
    edge.push(behaviour)
    response = ask(client, server, "bad-200")
    assert response.status_code == 200 and response.headers["x-tandem-fallback"] == "true"
    assert response.headers["x-tandem-target"] == "cloud" and len(cloud.received) == 1
    metrics = client.get(f"{server.url}/metrics").text
    assert 'tandem_upstream_errors_total{kind="invalid_answer",upstream="edge"} 1.0' in metrics

    server = make_gateway(routes={"tandem": {"strategy": "edge"}})
    edge.push(behaviour)
    response = ask(client, server, "bad-200-alone")
    assert response.status_code == 502, response.text
    assert response.json()["error"]["code"] == "upstream_invalid_answer"
    assert wait_until(lambda: bool(records(client, server, "bad-200-alone")))
    (record,) = records(client, server, "bad-200-alone")
    assert (record["status"], record["http_status"], record["cost_usd"], record["usage"]) == ("error", 502, 0.0, None)


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("max_tokens", "x", "an integer"),
        ("max_tokens", True, "an integer"),
        ("max_tokens", 1.5, "an integer"),
        ("max_completion_tokens", "10", "an integer"),
        ("n", [], "an integer"),
        ("n", 0, "between 1 and 128"),
        ("temperature", "hot", "a number"),
        ("top_p", [0.9], "a number"),
        ("stop", 5, "a string or an array of strings"),
        ("stop", ["a", 1], "a string or an array of strings"),
        ("tools", [1], "an array of objects"),
        ("tool_choice", 3, '"required" or an object'),
        ("logprobs", "yes", "a boolean"),
        ("top_logprobs", 2.5, "an integer"),
        ("stream_options", [], "an object"),
        ("seed", "42", "a 64-bit integer"),
        ("response_format", "json", "an object"),
        ("user", 7, "a string"),
        ("presence_penalty", "0", "a number"),
        ("parallel_tool_calls", 1, "a boolean"),
        ("metadata", "m", "an object"),
    ],
)
def test_mistyped_standard_fields_get_a_400_naming_field_and_type(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream, field: str, value: Any, expected: str
) -> None:
    response = ask(client, gateway, **{field: value})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["param"] == field and f"'{field}'" in error["message"] and expected in error["message"]
    assert not edge.received


@pytest.mark.parametrize(
    ("tools", "where", "expected"),
    [
        ([{"type": "function", "function": True}], "tools[0].function", "an object, got boolean"),
        ([{"type": "function", "function": "bash"}], "tools[0].function", "an object, got string"),
        ([{"type": "function", "function": {"name": "a"}}, {"function": [1]}], "tools[1].function", "got array"),
        ([{"type": "function", "function": {"parameters": {}}}], "tools[0].function.name", "is required"),
        ([{"type": "function", "function": {"name": ""}}], "tools[0].function.name", "an empty string"),
        ([{"type": "function", "function": {"name": 7}}], "tools[0].function.name", "got number"),
    ],
)
def test_a_malformed_function_tool_gets_a_400_naming_where(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream, tools: Any, where: str, expected: str
) -> None:
    """A function tool the upstream cannot read is the client's mistake: said by the gateway,
    not left to the upstream (whose error or crash would come back instead)."""
    response = ask(client, gateway, tools=tools)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["param"] == where and where in error["message"] and expected in error["message"]
    assert not edge.received


def test_tools_of_other_kinds_pass_unchanged(gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream) -> None:
    tools = [{"type": "custom", "custom": {"name": "apply_patch"}}, {"type": "web_search"}]
    assert ask(client, gateway, tools=tools).status_code == 200
    assert edge.received[0].body["tools"] == tools


def test_well_typed_standard_and_unknown_fields_pass_unchanged(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream
) -> None:
    fields: dict[str, Any] = {
        "max_tokens": 10,
        "max_completion_tokens": None,
        "n": 1,
        "temperature": 0,
        "top_p": 0.5,
        "stop": ["END"],
        "tool_choice": {"type": "function", "function": {"name": "bash"}},
        "tools": [{"type": "function", "function": {"name": "bash"}}],
        "logprobs": False,
        "top_logprobs": 0,
        "seed": 3,
        "response_format": {"type": "text"},
        "user": "u",
        "frequency_penalty": -0.5,
        "vendor_extension": {"x": [1, "y"]},
        "top_k": "not ours to check",
    }
    assert ask(client, gateway, **fields).status_code == 200
    received = edge.received[0].body
    assert {key: received[key] for key in fields} == fields
    assert orjson.dumps(received["vendor_extension"]) == b'{"x":[1,"y"]}'


@pytest.mark.parametrize("limit", [1, 10, 128, 200, 254])
def test_the_depth_check_is_exact_for_every_limit(limit: int) -> None:
    """It leans on orjson's recursion limit (254 levels): if orjson ever changes it, this fails."""
    from router.errors import GatewayError
    from router.protocol.fields import check_depth

    def deep(levels: int) -> Any:
        value: Any = []
        for _ in range(levels - 1):
            value = [value]
        return value

    check_depth(deep(limit), limit)
    with pytest.raises(GatewayError, match="max_json_depth"):
        check_depth(deep(limit + 1), limit)

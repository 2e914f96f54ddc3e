"""Chat completions through the real gateway to scripted upstreams: what goes up, what comes back."""

from __future__ import annotations

import httpx
import orjson

from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, chat


def sse_events(text: str) -> list[str]:
    return [line[len("data: ") :] for line in text.split("\n") if line.startswith("data: ")]


def test_plain_completion_is_relayed_with_decision_headers(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    response = chat(client, gateway.url, fake={"text": "four words right here"})
    assert response.status_code == 200
    body = response.json()
    assert body["choices"][0]["message"]["content"] == "four words right here"
    assert body["usage"]["prompt_tokens"] == 20
    assert response.headers["x-tandem-target"] == "edge"
    assert response.headers["x-tandem-route"] == "tandem"
    assert response.headers["x-tandem-reason"] == "route_fixed"
    assert response.headers["x-tandem-step"] == "1"
    assert response.headers["x-tandem-trajectory"].startswith("traj-")
    assert "x-tandem-fallback" not in response.headers
    assert len(edge.received) == 1 and not cloud.received


def test_unknown_fields_pass_through_and_model_is_rewritten(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream
) -> None:
    extra = {
        "tools": [{"type": "function", "function": {"name": "bash", "strict": True, "parameters": {}}}],
        "tool_choice": "required",
        "reasoning_effort": "high",
        "prompt_cache_key": "pc-1",
        "return_token_ids": True,
        "messages": [
            {"role": "system", "content": "be brief"},
            {
                "role": "user",
                "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
            },
        ],
        "metadata": {"anything": ["goes", 1]},
        "seed": 7,
        "stop": ["</function"],
    }
    response = chat(client, gateway.url, **extra)
    assert response.status_code == 200
    received = edge.received[0].body
    assert received["model"] == "edge-model"
    for key, value in extra.items():
        assert received[key] == value, key
    assert "stream_options" not in received


def test_streaming_adds_include_usage_and_relays_every_event(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream
) -> None:
    response = chat(
        client,
        gateway.url,
        stream=True,
        stream_options={"continuous_usage_stats": False},
        fake={"text": "one two three four five"},
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-tandem-target"] == "edge"
    events = sse_events(response.text)
    assert events[-1] == "[DONE]"
    chunks = [orjson.loads(e) for e in events[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert text == "one two three four five"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 5
    assert edge.received[0].body["stream_options"] == {"continuous_usage_stats": False, "include_usage": True}


def test_drop_params_are_removed_for_that_upstream_only(
    make_gateway: object, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    server = make_gateway(  # type: ignore[operator]
        routes={"tandem": {"strategy": "cloud"}},
        upstream_overrides={"cloud": {"drop_params": ["return_token_ids", "session_id"]}},
    )
    response = chat(client, server.url, return_token_ids=True, session_id="s-1", seed=3)
    assert response.status_code == 200
    received = cloud.received[0].body
    assert "return_token_ids" not in received and "session_id" not in received
    assert received["seed"] == 3
    metrics = client.get(f"{server.url}/metrics").text
    assert 'tandem_dropped_params_total{param="return_token_ids",upstream="cloud"} 1.0' in metrics
    # The same keys reach the edge, which has no drop_params.
    response = chat(client, server.url, model="tandem/edge", return_token_ids=True)
    assert edge.received[0].body["return_token_ids"] is True


def test_tool_call_survives_streaming(gateway: GatewayServer, client: httpx.Client) -> None:
    arguments = '{"command": "sed -i \'s/a/b/\' x.py", "nested": {"k": [1, 2]}}'
    response = chat(
        client, gateway.url, stream=True, fake={"kind": "tool_call", "name": "bash", "arguments": arguments}
    )
    chunks = [orjson.loads(e) for e in sse_events(response.text)[:-1]]
    calls = [tc for c in chunks if c["choices"] for tc in c["choices"][0]["delta"].get("tool_calls", [])]
    assert calls[0]["function"]["name"] == "bash" and calls[0]["id"] == "call_1"
    assert "".join(tc["function"]["arguments"] for tc in calls) == arguments


def test_session_id_names_the_trajectory_and_steps_count(gateway: GatewayServer, client: httpx.Client) -> None:
    for expected_step in (1, 2, 3):
        history = [{"role": "user", "content": "hi"}, *[{"role": "assistant", "content": "ok"}] * (expected_step - 1)]
        response = client.post(
            f"{gateway.url}/v1/chat/completions",
            json={"model": "tandem", "messages": history},
            headers={"X-Session-ID": "run-42"},
        )
        assert response.headers["x-tandem-trajectory"] == "run-42"
        assert response.headers["x-tandem-step"] == str(expected_step)
    trajectory = client.get(f"{gateway.url}/v1/trajectories/run-42").json()
    assert trajectory["steps"] == 3 and len(trajectory["records"]) == 3
    assert trajectory["records"][0]["usage"]["prompt_tokens"] == 20


def test_the_first_of_repeated_step_headers_counts_as_before(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    # The engine reads the step's headers from a dict made once per request: a repeated name
    # still means its first value (Starlette's `Headers.get`), whatever the case of the name;
    # x-tandem-target repeated must agree (tests/test_bad_input.py).
    body = orjson.dumps({"model": "tandem", "messages": [{"role": "user", "content": "hi"}]})
    headers = [
        ("Content-Type", "application/json"),
        ("X-Session-ID", "first-run"),
        ("x-session-id", "second-run"),
        ("X-Tandem-Target", "cloud"),
        ("x-tandem-target", "cloud"),
    ]
    response = client.post(f"{gateway.url}/v1/chat/completions", content=body, headers=headers)
    assert response.status_code == 200
    assert response.headers["x-tandem-trajectory"] == "first-run"
    assert response.headers["x-tandem-target"] == "cloud"
    assert response.headers["x-tandem-reason"] == "header_forced"
    assert len(cloud.received) == 1 and not edge.received


def test_session_in_path_and_paths_without_v1(gateway: GatewayServer, client: httpx.Client) -> None:
    body = {"model": "tandem", "messages": [{"role": "user", "content": "hi"}]}
    response = client.post(f"{gateway.url}/s/abc/v1/chat/completions", json=body)
    assert response.status_code == 200 and response.headers["x-tandem-trajectory"] == "abc"
    response = client.post(f"{gateway.url}/chat/completions", json=body)
    assert response.status_code == 200
    for path in ("/v1/models", "/models", "/s/abc/v1/models"):
        models = client.get(f"{gateway.url}{path}").json()
        assert {m["id"] for m in models["data"]} == {"tandem", "tandem/edge", "tandem/cloud"}


def test_forced_targets_by_model_name_and_header(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    response = chat(client, gateway.url, model="tandem/cloud")
    assert response.headers["x-tandem-target"] == "cloud" and response.headers["x-tandem-route"] == "tandem/cloud"
    response = client.post(
        f"{gateway.url}/v1/chat/completions",
        json={"model": "tandem", "messages": [{"role": "user", "content": "hi"}]},
        headers={"x-tandem-target": "cloud"},
    )
    assert response.headers["x-tandem-target"] == "cloud"
    assert response.headers["x-tandem-reason"] == "header_forced"
    assert len(cloud.received) == 2 and not edge.received


def test_target_header_can_be_disabled(make_gateway: object, client: httpx.Client) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "edge"}}, allow_target_header=False)  # type: ignore[operator]
    response = client.post(
        f"{server.url}/v1/chat/completions",
        json={"model": "tandem", "messages": [{"role": "user", "content": "hi"}]},
        headers={"x-tandem-target": "cloud"},
    )
    assert response.headers["x-tandem-target"] == "edge"


def test_model_info_for_litellm_proxy_clients(gateway: GatewayServer, client: httpx.Client) -> None:
    """OpenHands asks `litellm_proxy/` models for /v1/model/info."""
    info = client.get(f"{gateway.url}/v1/model/info").json()["data"]
    assert {m["model_name"] for m in info} == {"tandem", "tandem/edge", "tandem/cloud"}
    tandem = next(m for m in info if m["model_name"] == "tandem")
    assert tandem["model_info"]["mode"] == "chat" and tandem["model_info"]["input_cost_per_token"] == 2.5e-6

"""The gateway in front of a real vLLM server as the edge (and the scripted fake as the cloud)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import litellm
import openai
import pytest

from sim.vllm_edge import VLLMServer, live_process_group_members
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer
from tests.vllm.test_vllm_smoke import WEATHER_TOOL

pytestmark = pytest.mark.vllm
MakeGateway = Callable[..., GatewayServer]


@pytest.fixture()
def edge_vllm(make_gateway: MakeGateway, vllm_server: VLLMServer) -> GatewayServer:
    """The `tandem` route is edge-only, with the real vLLM as the edge; it fails over to the
    cloud when the edge is down (edge routes do not by default), and `tandem/edge` does not."""
    return make_gateway(
        routes={"tandem": {"strategy": "edge", "failover": True}},
        edge_url=vllm_server.base_url,
        upstream_overrides={
            "edge": {"model": vllm_server.model, "timeouts": {"connect": 2, "first_byte": 60, "idle": 30}}
        },
    )


@pytest.fixture()
def sdk(edge_vllm: GatewayServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=edge_vllm.base_url, api_key="unused", max_retries=0) as client:
        yield client


def ask(**fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "tandem",
        "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
        "max_tokens": 8,
        "temperature": 0,
    }
    body.update(fields)
    return body


def trajectory(server: GatewayServer, trajectory_id: str) -> dict[str, Any]:
    with httpx.Client() as http:
        result: dict[str, Any] = http.get(f"{server.url}/v1/trajectories/{trajectory_id}").json()
        return result


def test_plain_completion_and_usage_recorded(
    edge_vllm: GatewayServer, sdk: openai.OpenAI, vllm_server: VLLMServer
) -> None:
    raw = sdk.chat.completions.with_raw_response.create(**ask())
    completion = raw.parse()
    assert raw.headers["x-tandem-target"] == "edge"
    assert completion.model == vllm_server.model
    assert completion.usage is not None and completion.usage.prompt_tokens > 0
    record = trajectory(edge_vllm, raw.headers["x-tandem-trajectory"])["records"][0]
    assert record["usage"]["source"] == "upstream"
    assert record["usage"]["prompt_tokens"] == completion.usage.prompt_tokens
    assert record["usage"]["completion_tokens"] == completion.usage.completion_tokens


def test_stream_usage_comes_from_vllms_final_chunk(edge_vllm: GatewayServer, sdk: openai.OpenAI) -> None:
    raw = sdk.chat.completions.with_raw_response.create(**ask(stream=True, max_tokens=12))
    chunks = list(raw.parse())
    usage_chunks = [c for c in chunks if c.usage is not None]
    assert len(usage_chunks) == 1 and usage_chunks[0].choices == []
    record = trajectory(edge_vllm, raw.headers["x-tandem-trajectory"])["records"][0]
    assert record["usage"]["source"] == "upstream"
    assert record["usage"]["completion_tokens"] == usage_chunks[0].usage.completion_tokens > 0  # type: ignore[union-attr]


def test_strict_tool_call_streams_through_intact(edge_vllm: GatewayServer, sdk: openai.OpenAI) -> None:
    stream = sdk.chat.completions.create(
        **ask(stream=True, max_tokens=64, tools=[WEATHER_TOOL], tool_choice="required", parallel_tool_calls=False)
    )
    calls: dict[int, dict[str, str]] = {}
    finish = None
    for chunk in stream:
        for choice in chunk.choices:
            finish = choice.finish_reason or finish
            for delta in choice.delta.tool_calls or []:
                call = calls.setdefault(delta.index, {"name": "", "arguments": ""})
                if delta.function and delta.function.name:
                    call["name"] += delta.function.name
                if delta.function and delta.function.arguments:
                    call["arguments"] += delta.function.arguments
    assert finish == "tool_calls"
    assert [c["name"] for c in calls.values()] == ["get_weather"]
    assert json.loads(calls[0]["arguments"])["city"] in ("Paris", "Tokyo")


def test_assistant_tool_call_turn_and_tool_message_are_accepted(sdk: openai.OpenAI) -> None:
    messages = [
        {"role": "user", "content": "What is the weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 21 C"},
    ]
    completion = sdk.chat.completions.create(**ask(messages=messages, tools=[WEATHER_TOOL]))
    assert completion.choices[0].finish_reason in ("stop", "length")


def test_logprobs_for_the_entropy_probe_pass_through(sdk: openai.OpenAI) -> None:
    completion = sdk.chat.completions.create(**ask(max_tokens=1, logprobs=True, top_logprobs=20))
    content = completion.choices[0].logprobs.content  # type: ignore[union-attr]
    assert content is not None and len(content) == 1
    assert len(content[0].top_logprobs) == 20
    assert all(entry.logprob <= 0 for entry in content[0].top_logprobs)


def test_context_length_error_passes_unchanged_and_litellm_recognises_it(
    edge_vllm: GatewayServer, vllm_server: VLLMServer
) -> None:
    long = "word " * 3000
    with httpx.Client(timeout=30) as http:
        direct = http.post(
            f"{vllm_server.base_url}/chat/completions",
            json={**ask(messages=[{"role": "user", "content": long}]), "model": vllm_server.model},
        )
        through = http.post(
            f"{edge_vllm.base_url}/chat/completions", json=ask(messages=[{"role": "user", "content": long}])
        )
    assert through.status_code == direct.status_code == 400
    assert through.json() == direct.json()
    assert "maximum context length" in through.json()["error"]["message"]
    with pytest.raises(litellm.exceptions.ContextWindowExceededError):
        litellm.completion(
            model="openai/tandem",
            api_base=edge_vllm.base_url,
            api_key="unused",
            messages=[{"role": "user", "content": long}],
            max_tokens=8,
            num_retries=0,
        )


def test_killed_vllm_fails_over_to_the_cloud_and_readyz_follows(
    edge_vllm: GatewayServer, vllm_server: VLLMServer, cloud: FakeUpstream
) -> None:
    with httpx.Client(timeout=30) as http:
        ready = http.get(f"{edge_vllm.url}/readyz").json()
        assert ready["upstreams"]["edge"]["reachable"] is True
        pid = vllm_server.pid
        assert pid is not None
        vllm_server.kill()  # a crash: the engine process goes too
        try:
            assert not Path(f"/proc/{pid}").exists() and live_process_group_members(pid) == []
            edge_only = http.post(f"{edge_vllm.base_url}/chat/completions", json={**ask(), "model": "tandem/edge"})
            assert edge_only.status_code == 503, "edge-only never answers from the cloud"
            response = http.post(f"{edge_vllm.base_url}/chat/completions", json=ask())
            assert response.status_code == 200
            assert response.headers["x-tandem-target"] == "cloud"
            assert response.headers["x-tandem-fallback"] == "true"
            assert cloud.received[-1].body["model"] == "cloud-model"
            import time

            time.sleep(2.1)  # past /readyz's probe cache
            ready = http.get(f"{edge_vllm.url}/readyz").json()
            assert ready["ready"] is True and ready["upstreams"]["edge"]["reachable"] is False
        finally:
            vllm_server.start()  # back on the same port for whatever runs next
        response = http.post(f"{edge_vllm.base_url}/chat/completions", json=ask())
        assert response.headers["x-tandem-target"] == "edge" and "x-tandem-fallback" not in response.headers

"""Strategies through the real gateway where the wire matters (an SDK reading a prepared answer
as a stream), and strategy configuration. Each strategy's decision path, what the cloud
received and the record are tested in process: tests/test_engine_strategies.py (constraints
and context modes: tests/test_engine_decisions.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import openai
import pytest

from router.settings import ConfigError, load_settings
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

MakeGateway = Callable[..., GatewayServer]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
        },
    }
]
TASK = {"role": "user", "content": "Fix the failing test in calc.py"}


def ask(
    client: httpx.Client,
    server: GatewayServer,
    session: str = "s",
    messages: list[dict[str, Any]] | None = None,
    **body: Any,
) -> httpx.Response:
    body = {"model": "tandem", "messages": messages or [TASK], "tools": TOOLS, **body}
    return client.post(f"{server.url}/v1/chat/completions", json=body, headers={"X-Session-ID": session})


def route(make_gateway: MakeGateway, **strategy: Any) -> GatewayServer:
    return make_gateway(routes={"tandem": strategy})


def test_prepared_answers_stream_as_sse(make_gateway: MakeGateway, edge: FakeUpstream) -> None:
    server = route(make_gateway, strategy="draft_verify")
    edge.push({"kind": "tool_call", "arguments": '{"command": "ls"}', "completion_tokens": 9}, {"text": "1"})
    sdk = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    with sdk.chat.completions.stream(model="tandem", messages=[TASK], tools=TOOLS) as stream:  # type: ignore[arg-type]
        final = stream.get_final_completion()
    assert final.choices[0].message.tool_calls[0].function.arguments == '{"command": "ls"}'  # type: ignore[index]
    assert final.usage is not None and final.usage.completion_tokens == 9


# -- configuration ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("route_settings", "words"),
    [
        ({"strategy": "telepathy"}, ["routes.tandem", "telepathy"]),
        ({"strategy": "entropy", "threshold": -1}, ["routes.tandem.entropy.threshold"]),
        ({"strategy": "cloud", "constraints": {"budget_usd": -1}}, ["routes.tandem.cloud.constraints.budget_usd"]),
        ({"strategy": "llm_judge", "judge": "oracle"}, ["routes.tandem", "oracle"]),
        ({"strategy": "task", "cloud_if_matches": "(["}, ["routes.tandem.task.cloud_if_matches", "regular expression"]),
        ({"strategy": "random", "probability": 0.3}, ["routes.tandem.random.probability"]),
    ],
)
def test_misconfigured_strategies_name_the_route_and_key(route_settings: dict[str, Any], words: list[str]) -> None:
    with pytest.raises(ConfigError) as raised:
        load_settings(routes={"tandem": route_settings})
    for word in words:
        assert word in str(raised.value)


def test_flattened_transcripts_keep_every_call_and_mark_cuts() -> None:
    from router.context import flatten

    long_text = {
        "role": "assistant",
        "content": "x" * 5000,
        "tool_calls": [{"id": "1", "type": "function", "function": {"name": "run_tests", "arguments": "{}"}}],
    }
    assert "[calls run_tests({})]" in flatten([long_text], 20_000)
    big = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "2", "type": "function", "function": {"name": "write_file", "arguments": "y" * 6000}}],
    }
    flat = flatten([big], 20_000)
    assert "more chars)" in flat and flat.endswith(")]")

"""Drop-in use: the real openai and litellm SDKs and mini-swe-agent, pointed at the gateway."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import openai
import pytest

from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("MSWEA_CONFIGURED", "true")
os.environ.setdefault("MSWEA_COST_TRACKING", "ignore_errors")

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "strict": True,
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string"}},
                "required": ["command"],
                "additionalProperties": False,
            },
        },
    }
]


def sdk(gateway: GatewayServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=gateway.base_url, api_key="unused", max_retries=0)


def test_openai_sdk_plain_with_tools(gateway: GatewayServer, edge: FakeUpstream) -> None:
    edge.push({"kind": "tool_call", "name": "bash", "arguments": '{"command": "pytest -q"}'})
    raw = sdk(gateway).chat.completions.with_raw_response.create(
        model="tandem",
        messages=[{"role": "user", "content": "run the tests"}],
        tools=TOOLS,
        tool_choice="required",
    )
    completion = raw.parse()
    call = completion.choices[0].message.tool_calls[0]
    assert call.function.name == "bash" and call.function.arguments == '{"command": "pytest -q"}'
    assert completion.usage.prompt_tokens == 20
    assert raw.headers["x-tandem-target"] == "edge"
    assert edge.received[0].body["tools"] == TOOLS


def test_openai_sdk_streaming_text_and_usage(gateway: GatewayServer, edge: FakeUpstream) -> None:
    edge.push({"text": "streamed through the gateway", "completion_tokens": 4})
    stream = sdk(gateway).chat.completions.create(
        model="tandem",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "streamed through the gateway"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 4


@pytest.mark.parametrize("usage", [False, None], ids=["no usage", "usage null"])
def test_a_plain_answer_without_usage_reaches_the_client_with_the_ledgers_estimate(
    gateway: GatewayServer, edge: FakeUpstream, usage: bool | None
) -> None:
    """A client reads a plain answer's usage (smolagents fails on `usage: null`): where the
    upstream sent none, the estimate the ledger charged, marked as one, as streams get it."""
    edge.push({"text": "four words of answer", "usage": usage})
    completion = sdk(gateway).chat.completions.create(model="tandem", messages=[{"role": "user", "content": "hi"}])
    assert completion.choices[0].message.content == "four words of answer"
    assert completion.usage is not None
    assert completion.usage.prompt_tokens > 0 and completion.usage.completion_tokens > 0
    assert completion.usage.total_tokens == completion.usage.prompt_tokens + completion.usage.completion_tokens
    assert (completion.usage.model_extra or {}).get("tandem_estimated") is True


def test_openai_sdk_streamed_tool_call(gateway: GatewayServer, edge: FakeUpstream) -> None:
    edge.push({"kind": "tool_call", "name": "bash", "arguments": '{"command": "cat README.md"}'})
    with sdk(gateway).chat.completions.stream(
        model="tandem", messages=[{"role": "user", "content": "read"}], tools=TOOLS
    ) as stream:
        final = stream.get_final_completion()
    call = final.choices[0].message.tool_calls[0]
    assert call.function.name == "bash" and call.function.parsed_arguments == {"command": "cat README.md"}


def test_openai_sdk_raises_on_a_mid_stream_failure(gateway: GatewayServer, edge: FakeUpstream) -> None:
    edge.push({"kind": "drop", "after": 2, "text": "a b c d"})
    stream = sdk(gateway).chat.completions.create(
        model="tandem", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    with pytest.raises(openai.APIError, match="failed mid-stream"):
        for _ in stream:
            pass


def test_openai_sdk_sees_upstream_errors_with_their_status(gateway: GatewayServer, edge: FakeUpstream) -> None:
    message = "This model's maximum context length is 2048 tokens. However, you requested 5000 tokens"
    edge.push(
        {
            "kind": "error",
            "status": 400,
            "body": {
                "error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                }
            },
        }
    )
    with pytest.raises(openai.BadRequestError) as raised:
        sdk(gateway).chat.completions.create(model="tandem", messages=[{"role": "user", "content": "hi"}])
    assert raised.value.code == "context_length_exceeded"
    with pytest.raises(openai.NotFoundError, match="tandem/edge"):
        sdk(gateway).chat.completions.create(model="nope", messages=[{"role": "user", "content": "hi"}])


def test_openai_sdk_lists_models(gateway: GatewayServer) -> None:
    assert {m.id for m in sdk(gateway).models.list()} == {"tandem", "tandem/edge", "tandem/cloud"}


def test_litellm_plain_stream_and_context_window_error(gateway: GatewayServer, edge: FakeUpstream) -> None:
    import litellm

    edge.push({"text": "via litellm"}, {"text": "streamed litellm"})
    response = litellm.completion(
        model="openai/tandem",
        api_base=gateway.base_url,
        api_key="unused",
        messages=[{"role": "user", "content": "hi"}],
        extra_headers={"X-Session-ID": "lite-1"},
    )
    assert response.choices[0].message.content == "via litellm"
    chunks = list(
        litellm.completion(
            model="openai/tandem",
            api_base=gateway.base_url,
            api_key="unused",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            extra_headers={"X-Session-ID": "lite-1"},
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "streamed litellm"
    with httpx.Client() as http:
        assert http.get(f"{gateway.url}/v1/trajectories/lite-1").json()["steps"] == 2
    edge.push(
        {
            "kind": "error",
            "status": 400,
            "body": {
                "error": {
                    "message": "This model's maximum context length is 2048 tokens. However, your prompt contains at least "
                    "2049 input tokens",
                    "type": "BadRequestError",
                    "param": "input_tokens",
                    "code": 400,
                }
            },
        }
    )
    with pytest.raises(litellm.exceptions.ContextWindowExceededError):
        litellm.completion(
            model="openai/tandem",
            api_base=gateway.base_url,
            api_key="unused",
            messages=[{"role": "user", "content": "hi"}],
            num_retries=0,
        )


def test_mini_swe_agent_completes_a_task_through_the_gateway(
    make_gateway: object, edge: FakeUpstream, cloud: FakeUpstream, tmp_path: Path
) -> None:
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.environments.local import LocalEnvironment
    from minisweagent.models.litellm_model import LitellmModel

    server = make_gateway(routes={"tandem": {"strategy": "random", "p": 0.5, "seed": 3}})  # type: ignore[operator]
    script = {
        "kind": "agent",
        "commands": [
            "printf 'def add(a, b):\\n    return a + b\\n' > calc.py",
            "python -c 'import calc; assert calc.add(2, 3) == 5' && echo ok",
            "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",
        ],
    }
    edge.default = cloud.default = script
    model = LitellmModel(
        model_name="openai/tandem",
        model_kwargs={
            "api_base": server.base_url,
            "api_key": "unused",
            "extra_headers": {"X-Session-ID": "mini-run"},
        },
        cost_tracking="ignore_errors",
    )
    agent = DefaultAgent(
        model,
        LocalEnvironment(cwd=str(tmp_path)),
        system_template="You are a helpful assistant.",
        instance_template="{{task}}",
        step_limit=8,
    )
    result = agent.run(task="Create calc.py with add(a, b)")
    assert result["exit_status"] == "Submitted", result
    assert (tmp_path / "calc.py").read_text().startswith("def add")
    with httpx.Client() as http:
        trajectory = http.get(f"{server.url}/v1/trajectories/mini-run").json()
    assert trajectory["steps"] == 3
    targets = [r["target"] for r in trajectory["records"]]
    assert len(edge.received) == targets.count("edge") and len(cloud.received) == targets.count("cloud")
    # Tool results from earlier steps reached the upstream of the last step.
    last = edge.received + cloud.received
    assert any(m.get("role") == "tool" for r in last for m in r.body["messages"])


def test_mini_swe_agent_without_a_session_is_stitched_into_one_trajectory(
    make_gateway: object, edge: FakeUpstream, tmp_path: Path
) -> None:
    """mini-swe-agent sends no session id by default: the message history ties its steps."""
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.environments.local import LocalEnvironment
    from minisweagent.models.litellm_model import LitellmModel

    server = make_gateway(routes={"tandem": {"strategy": "edge"}})  # type: ignore[operator]
    edge.default = {"kind": "agent", "commands": ["ls", "echo hi", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"]}
    model = LitellmModel(
        model_name="openai/tandem",
        model_kwargs={"api_base": server.base_url, "api_key": "unused"},
        cost_tracking="ignore_errors",
    )
    agent = DefaultAgent(
        model, LocalEnvironment(cwd=str(tmp_path)), system_template="sys", instance_template="{{task}}", step_limit=6
    )
    assert agent.run(task="say hi")["exit_status"] == "Submitted"
    with httpx.Client() as http:
        listed = http.get(f"{server.url}/v1/trajectories").json()["data"]
    assert [t["steps"] for t in listed] == [3]
    assert listed[0]["task"] == "say hi"

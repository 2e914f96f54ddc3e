"""The translated surfaces as real clients read them (issue 14): errors keep their type and code
in each surface's shape, one assistant turn stays one message, streamed usage is complete,
system text is joined as the target expects, and mistyped or unsupported fields are refused.
Real gateway, scripted upstream, the real openai and anthropic SDKs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anthropic
import httpx
import openai
import orjson
import pytest

from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

OVERFLOW = "This model's maximum context length is 2048 tokens. However, you requested 5000 tokens (4900 in the messages, 100 in the completion)."
# vLLM's own shape: its code is the status, not context_length_exceeded.
VLLM_OVERFLOW = {"error": {"message": OVERFLOW, "type": "BadRequestError", "param": None, "code": 400}}
RATE_LIMIT = {
    "error": {"message": "Rate limit reached", "type": "requests", "param": None, "code": "rate_limit_exceeded"}
}
TOOLS = [
    {
        "type": "function",
        "name": "shell",
        "description": "run a command",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
    }
]


@pytest.fixture()
def strict(make_gateway: Callable[..., GatewayServer]) -> GatewayServer:
    """Edge only, no failover: the edge's error is the answer."""
    return make_gateway(routes={"tandem": {"strategy": "edge", "failover": False}})


def oai(server: GatewayServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)


def ant(server: GatewayServer) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.url, api_key="unused", max_retries=0)


# --- /v1/responses ---------------------------------------------------------------------------


def test_responses_keeps_the_upstream_error_type_code_and_param(strict: GatewayServer, edge: FakeUpstream) -> None:
    edge.push({"kind": "error", "status": 429, "body": RATE_LIMIT, "retry_after": 3})
    with pytest.raises(openai.RateLimitError) as limited:
        oai(strict).responses.create(model="tandem", input="hi")
    assert limited.value.code == "rate_limit_exceeded" and limited.value.type == "requests"
    assert limited.value.response.headers["retry-after"] == "3"
    edge.push({"kind": "error", "status": 400, "body": VLLM_OVERFLOW})
    with pytest.raises(openai.BadRequestError) as overflow:
        oai(strict).responses.create(model="tandem", input="hi")
    assert overflow.value.code == "context_length_exceeded"
    assert "maximum context length" in overflow.value.message


def test_responses_streamed_context_overflow_is_a_failed_response_codex_recognises(
    strict: GatewayServer, edge: FakeUpstream
) -> None:
    edge.push({"kind": "error", "status": 400, "body": VLLM_OVERFLOW})
    events = list(oai(strict).responses.create(model="tandem", input="hi", stream=True))
    assert [e.type for e in events] == ["response.created", "response.failed"]
    error = events[-1].response.error  # type: ignore[union-attr]
    assert error is not None and error.code == "context_length_exceeded"


def test_responses_text_and_function_call_stay_one_assistant_message(
    gateway: GatewayServer, edge: FakeUpstream
) -> None:
    oai(gateway).responses.create(
        model="tandem",
        tools=TOOLS,
        input=[  # type: ignore[arg-type]
            {"role": "user", "content": "list files"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "I will run ls."}]},
            {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": '{"command":"ls"}'},
            {"type": "function_call_output", "call_id": "c1", "output": "a.py"},
        ],
    )
    sent = edge.received[0].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[1]["content"] == "I will run ls." and sent[1]["tool_calls"][0]["id"] == "c1"


def test_responses_allowed_tools_in_its_own_shape_reach_the_model_in_chats(
    gateway: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    allowed = {"type": "allowed_tools", "mode": "required", "tools": [{"type": "function", "name": "shell"}]}
    oai(gateway).responses.create(model="tandem", tools=TOOLS, input="list files", tool_choice=allowed)  # type: ignore[arg-type]
    chosen = {"mode": "required", "tools": [{"type": "function", "function": {"name": "shell"}}]}
    assert edge.received[0].body["tool_choice"] == {"type": "allowed_tools", "allowed_tools": chosen}
    # Its mode is one of the two Responses takes; its tools are objects.
    for wrong, param in (
        ({**allowed, "mode": "often"}, "tool_choice.mode"),
        ({**allowed, "tools": "shell"}, "tool_choice.tools"),
    ):
        body = {"model": "tandem", "input": "hi", "tools": TOOLS, "tool_choice": wrong}
        response = client.post(f"{gateway.url}/v1/responses", json=body)
        assert response.status_code == 400 and response.json()["error"]["param"] == param, response.text


def test_responses_steps_without_a_session_stitch_into_one_trajectory(
    gateway: GatewayServer, edge: FakeUpstream
) -> None:
    # The client resends the function call the model made (its id and arguments identify the run).
    edge.push({"kind": "tool_call", "name": "shell", "arguments": "{}", "call_id": "c1"})
    history: list[dict[str, Any]] = [{"role": "user", "content": "list files"}]
    first = oai(gateway).responses.with_raw_response.create(model="tandem", input=history)  # type: ignore[arg-type]
    history += [
        {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "a.py"},
    ]
    second = oai(gateway).responses.with_raw_response.create(model="tandem", input=history)  # type: ignore[arg-type]
    assert second.headers["x-tandem-trajectory"] == first.headers["x-tandem-trajectory"]
    assert second.headers["x-tandem-step"] == "2"


@pytest.mark.parametrize(
    ("field", "value", "session"),
    [
        ("session_id", "run-7", "run-7"),
        ("litellm_session_id", "run-8", "run-8"),
        ("metadata", {"session_id": "run-9"}, "run-9"),
        ("prompt_cache_key", "run-10", "run-10"),
    ],
)
def test_responses_body_session_names_the_trajectory_as_on_chat(
    gateway: GatewayServer, edge: FakeUpstream, field: str, value: Any, session: str
) -> None:
    """A session the Responses body names (as litellm, OpenHands V0 and harnesses send it) names
    the trajectory; only what the chat API takes goes on to the model."""
    edge.reset()
    made = oai(gateway).responses.with_raw_response.create(model="tandem", input="hi", extra_body={field: value})
    chat = httpx.post(
        f"{gateway.url}/v1/chat/completions",
        json={"model": "tandem", "messages": [{"role": "user", "content": "hi"}], field: value},
    )
    assert made.headers["x-tandem-trajectory"] == chat.headers["x-tandem-trajectory"] == session
    sent = edge.received[0].body
    assert "session_id" not in sent and "litellm_session_id" not in sent and "metadata" not in sent
    assert sent.get("prompt_cache_key") == (value if field == "prompt_cache_key" else None)


def test_responses_runs_of_two_users_with_the_same_words_stay_apart(gateway: GatewayServer, edge: FakeUpstream) -> None:
    """`user` scopes stitching on the Responses surface as on chat: the same history sent for
    two users is two runs; each user's second step joins that user's run, whichever comes first."""
    runs = {}
    for user in ("alice", "bob"):
        edge.push({"kind": "tool_call", "name": "shell", "arguments": "{}", "call_id": "c1"})
        first = oai(gateway).responses.with_raw_response.create(model="tandem", input="list files", user=user)
        runs[user] = first.headers["x-tandem-trajectory"]
    assert runs["alice"] != runs["bob"]
    for user in ("bob", "alice"):  # unscoped, bob's step would join the run given the answer first
        history: list[dict[str, Any]] = [
            {"role": "user", "content": "list files"},
            {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "a.py"},
        ]
        second = oai(gateway).responses.with_raw_response.create(model="tandem", input=history, user=user)  # type: ignore[arg-type]
        assert second.headers["x-tandem-trajectory"] == runs[user]
        assert second.headers["x-tandem-step"] == "2"


def test_codex_developer_messages_become_one_leading_system_message(gateway: GatewayServer, edge: FakeUpstream) -> None:
    oai(gateway).responses.create(
        model="tandem",
        instructions="You are Codex.",
        input=[  # type: ignore[arg-type]
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "<permissions>"}]},
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "<skills>"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix the bug"}]},
        ],
    )
    assert edge.received[0].body["messages"] == [
        {"role": "system", "content": "You are Codex.\n\n<permissions>\n\n<skills>"},
        {"role": "user", "content": "fix the bug"},
    ]


def test_an_unknown_previous_response_id_is_refused_not_ignored(gateway: GatewayServer, edge: FakeUpstream) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        oai(gateway).responses.create(model="tandem", input="and then?", previous_response_id="resp_1")
    assert refused.value.param == "previous_response_id" and "not kept" in refused.value.message
    assert edge.received == []


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("stream", "yes"),
        ("max_output_tokens", "x"),
        ("temperature", "hot"),
        ("tools", {}),
        ("input", 3),
        ("instructions", ["a"]),
        ("parallel_tool_calls", "no"),
    ],
)
def test_responses_mistyped_fields_are_a_400_naming_the_field(
    gateway: GatewayServer, edge: FakeUpstream, client: httpx.Client, field: str, value: Any
) -> None:
    body = {"model": "tandem", "input": "hi", field: value}
    response = client.post(f"{gateway.url}/v1/responses", json=body)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"] == field and f"'{field}'" in response.json()["error"]["message"]
    assert edge.received == []


# --- /v1/messages ----------------------------------------------------------------------------


def test_messages_stream_reports_input_tokens(gateway: GatewayServer, edge: FakeUpstream, client: httpx.Client) -> None:
    edge.push({"text": "one two", "prompt_tokens": 1200, "cached_tokens": 200, "completion_tokens": 7})
    body = {"model": "tandem", "max_tokens": 64, "stream": True, "messages": [{"role": "user", "content": "x" * 400}]}
    with client.stream("POST", f"{gateway.url}/v1/messages", json=body) as response:
        events = [orjson.loads(line[5:]) for line in response.iter_lines() if line.startswith("data:")]
    start = next(e for e in events if e["type"] == "message_start")
    delta = next(e for e in events if e["type"] == "message_delta")
    assert start["message"]["usage"]["input_tokens"] >= 100  # an estimate before the upstream says
    assert delta["usage"] == {"input_tokens": 1000, "output_tokens": 7, "cache_read_input_tokens": 200}
    edge.push({"text": "one two", "prompt_tokens": 1200, "completion_tokens": 7})
    with ant(gateway).messages.stream(model="tandem", max_tokens=64, messages=[{"role": "user", "content": "hi"}]) as s:
        final = s.get_final_message()
    assert final.usage.input_tokens == 1200 and final.usage.output_tokens == 7


def test_messages_context_overflow_is_worded_as_claude_code_expects(strict: GatewayServer, edge: FakeUpstream) -> None:
    edge.push({"kind": "error", "status": 400, "body": VLLM_OVERFLOW})
    with pytest.raises(anthropic.BadRequestError) as overflow:
        ant(strict).messages.create(model="tandem", max_tokens=8, messages=[{"role": "user", "content": "hi"}])
    error = overflow.value.body["error"]  # type: ignore[index]
    assert error == {"type": "invalid_request_error", "message": "prompt is too long: 5000 tokens > 2048 maximum"}
    edge.push({"kind": "error", "status": 529, "body": {"error": {"message": "busy", "type": "server_error"}}})
    with pytest.raises(anthropic.APIStatusError) as busy:
        ant(strict).messages.create(model="tandem", max_tokens=8, messages=[{"role": "user", "content": "hi"}])
    assert busy.value.status_code == 529 and busy.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]


def test_claude_code_system_blocks_are_joined_with_a_separator(gateway: GatewayServer, edge: FakeUpstream) -> None:
    ant(gateway).messages.create(
        model="tandem",
        max_tokens=8,
        messages=[{"role": "user", "content": "hi"}],
        system=[
            {"type": "text", "text": "You are Claude Code."},
            {"type": "text", "text": "Be concise.", "cache_control": {"type": "ephemeral"}},
        ],
    )
    assert edge.received[0].body["messages"][0] == {"role": "system", "content": "You are Claude Code.\n\nBe concise."}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("stream", "yes"),
        ("max_tokens", "64"),
        ("max_tokens", True),
        ("temperature", "hot"),
        ("tools", {}),
        ("system", 5),
        ("stop_sequences", "END"),
    ],
)
def test_messages_mistyped_fields_are_a_400_naming_the_field(
    gateway: GatewayServer, edge: FakeUpstream, client: httpx.Client, field: str, value: Any
) -> None:
    body = {"model": "tandem", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}], field: value}
    response = client.post(f"{gateway.url}/v1/messages", json=body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error" and f"'{field}'" in error["message"]
    assert edge.received == []


def test_claude_code_reachability_checks_answer(gateway: GatewayServer, client: httpx.Client) -> None:
    for path in ("/", "/api/hello"):
        assert client.head(f"{gateway.url}{path}").status_code == 200
    listed = client.get(f"{gateway.url}/v1/models", params={"limit": 1000}, headers={"anthropic-version": "2023-06-01"})
    body = listed.json()
    assert body["has_more"] is False and body["first_id"] == body["data"][0]["id"]
    assert all(m["type"] == "model" and m["display_name"] for m in body["data"])


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("conversation", "conv_68af"),
        ("conversation", {"id": "conv_68af"}),
        ("prompt", {"id": "pmpt_1", "version": "2"}),
    ],
)
def test_what_openai_keeps_on_its_side_is_refused_not_dropped(
    gateway: GatewayServer, edge: FakeUpstream, field: str, value: Any
) -> None:
    with httpx.Client(timeout=10) as http:
        refused = http.post(f"{gateway.url}/v1/responses", json={"model": "tandem", "input": "and?", field: value})
        assert refused.status_code == 400
        error = refused.json()["error"]
        assert error["param"] == field and "not supported" in error["message"]
        # null is the field's absence, as OpenAI reads it
        assert http.post(f"{gateway.url}/v1/responses", json={"model": "tandem", "input": "hi", field: None}).is_success
    assert len(edge.received) == 1


# --- every surface: a refused value is named, never echoed whole ------------------------------

_HUGE = "Z" * 50_000
_BODIES: dict[str, dict[str, Any]] = {
    "/v1/chat/completions": {
        "model": "tandem",
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "out"},
        ],
        "tool_choice": "auto",
        "response_format": {"type": "text"},
    },
    "/v1/messages": {
        "model": "tandem",
        "max_tokens": 8,
        "system": [{"type": "text", "text": "sys"}],
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {}}]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "o"}]}],
            },
        ],
        "tool_choice": {"type": "auto"},
    },
    "/v1/responses": {
        "model": "tandem",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "function_call", "call_id": "c1", "name": "bash", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        ],
        "text": {"format": {"type": "text"}},
        "store": False,
    },
}


def _string_places(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in _string_places(item, (*at, key))]
    if isinstance(value, list):
        return [p for index, item in enumerate(value) for p in _string_places(item, (*at, index))]
    return [at] if isinstance(value, str) else []


@pytest.mark.parametrize("path", sorted(_BODIES))
def test_a_refused_value_of_any_length_gets_a_short_message(
    gateway: GatewayServer, edge: FakeUpstream, client: httpx.Client, path: str
) -> None:
    """Each string of a valid body replaced by 50,000 characters: refused or answered, a refusal
    names the field in a message of bounded length."""
    refused = 0
    for place in _string_places(_BODIES[path]):
        body = orjson.loads(orjson.dumps(_BODIES[path]))
        parent = body
        for key in place[:-1]:
            parent = parent[key]
        parent[place[-1]] = _HUGE
        edge.push({"text": "ok"})
        response = client.post(f"{gateway.url}{path}", json=body)
        assert response.status_code < 500, (place, response.text[:300])
        if response.status_code >= 400:
            refused += 1
            assert len(response.text) < 1_000, (place, response.text[:300])
    assert refused >= 2  # the kinds and roles (types, roles, a tool choice) are refused


def test_refusals_that_list_or_repeat_what_was_sent_stay_short(gateway: GatewayServer, client: httpx.Client) -> None:
    """Messages that say back a list of what was sent, a header or a path: bounded whatever came."""
    kinds = [{"type": f"kind_{n}_" + "z" * 200} for n in range(5_000)]
    refused = client.post(f"{gateway.url}/v1/responses", json={"model": "tandem", "input": kinds})
    assert refused.status_code == 400 and len(refused.text) < 1_000
    assert "and 4995 more" in refused.json()["error"]["message"]
    chat = {"model": "tandem", "messages": [{"role": "user", "content": "hi"}]}
    for header in ("x" * 30_000, ", ".join(["edge", "cloud"] * 4_000)):
        response = client.post(f"{gateway.url}/v1/chat/completions", json=chat, headers={"x-tandem-target": header})
        assert response.status_code == 400 and len(response.text) < 1_000, response.text[:200]
        assert response.json()["error"]["code"] == "invalid_target"
    for method, path in (("GET", "/" + "p" * 60_000), ("PUT", "/v1/responses/" + "r" * 60_000)):
        response = client.request(method, f"{gateway.url}{path}")
        assert response.status_code in (404, 405) and len(response.text) < 1_000, response.text[:200]
        assert f"({len(path)} characters)" in response.json()["error"]["message"]  # how long it was


def test_a_target_header_listing_one_value_twice_is_that_value(gateway: GatewayServer, client: httpx.Client) -> None:
    chat = {"model": "tandem", "messages": [{"role": "user", "content": "hi"}]}
    response = client.post(f"{gateway.url}/v1/chat/completions", json=chat, headers={"x-tandem-target": "edge, edge"})
    assert response.status_code == 200 and response.headers["x-tandem-target"] == "edge"

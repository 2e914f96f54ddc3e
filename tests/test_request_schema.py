"""Each surface's request schema, walked field by field: a value of the wrong JSON type, or out of
the documented range, gets a 400 whose message names the field (never a 500, never forwarded),
and the shapes real clients send still pass.

The tables below are written from the API references (OpenAI chat completions and Responses,
Anthropic Messages), not from the gateway's own tables, so that a field the gateway forgot is
found. Wrong values are made per kind: a number where a string goes, a string where a number
goes, an object for an array and an array for an object, null where a field is not nullable,
and booleans where a number goes (Python's `True == 1` lets them through a naive check)."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, settings_for

# --- wrong values, by kind --------------------------------------------------------------------

STRING = [5, True, {}, []]
BOOL = [1, 0, 1.0, "true", {}, []]  # 1 == True and 0 == False in Python: neither is a boolean
OBJECT = [[], "x", 5, True]
ARRAY = [{}, "x", 5, True]
STRING_OR_ARRAY = [5, True, {}]
STRINGS = [*ARRAY, [5], ["a", None]]  # an array of strings
OBJECTS = [*ARRAY, [5], ["x"]]  # an array of objects


def number(low: float, high: float | None = None, integer: bool = False) -> list[Any]:
    """Wrong values of a number field in [low, high]: other types, booleans (True == 1, False
    == 0 lie inside most ranges), and numbers just outside the range."""
    values: list[Any] = ["1", True, False, {}, [], low - (1 if integer else 0.5)]
    values.append(2**63 if high is None else high + (1 if integer else 0.5))
    if integer:
        values.append(low + 0.5)
    return values


def enum(*wrong: str) -> list[Any]:
    return [*STRING, *wrong]


@dataclass(frozen=True)
class Field:
    path: str  # where it is in the surface's base request: `tools[0].function.name`
    wrong: list[Any]
    nullable: bool = True  # null means "not set" for most optional fields; required ones refuse it

    def values(self) -> list[Any]:
        return self.wrong if self.nullable else [*self.wrong, None]


# --- /v1/chat/completions ---------------------------------------------------------------------

CHAT_BASE: dict[str, Any] = {
    "model": "tandem",
    "messages": [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": [{"type": "text", "text": "fix it"}], "name": "ana"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "README.md"},
    ],
    "tools": [
        {
            "type": "function",
            "function": {"name": "bash", "description": "run", "parameters": {"type": "object"}, "strict": False},
        }
    ],
    "tool_choice": {"type": "function", "function": {"name": "bash"}},
}

CHAT_FIELDS = [
    Field("model", STRING, nullable=False),
    Field("messages", [*ARRAY, []], nullable=False),
    Field("messages[0].role", enum("wizard"), nullable=False),
    Field("messages[0].content", STRING_OR_ARRAY),
    Field("messages[1].name", STRING),
    Field("messages[1].content[0].type", STRING, nullable=False),
    Field("messages[1].content[0].text", STRING, nullable=False),
    Field("messages[2].tool_calls", ARRAY),
    Field("messages[2].tool_calls[0].id", STRING),
    Field("messages[2].tool_calls[0].type", STRING),
    Field("messages[2].tool_calls[0].function", OBJECT),
    Field("messages[2].tool_calls[0].function.name", STRING),
    Field("messages[2].tool_calls[0].function.arguments", STRING),
    Field("messages[2].refusal", STRING),
    Field("messages[3].tool_call_id", STRING),
    Field("audio", OBJECT),
    Field("frequency_penalty", number(-2, 2)),
    Field("presence_penalty", number(-2, 2)),
    Field("function_call", [5, True, []]),
    Field("functions", OBJECTS),
    Field("logit_bias", OBJECT),
    Field("logprobs", BOOL),
    Field("max_completion_tokens", number(1, integer=True)),
    Field("max_tokens", number(1, integer=True)),
    Field("metadata", OBJECT),
    Field("modalities", STRINGS),
    Field("n", number(1, 128, integer=True)),
    Field("parallel_tool_calls", BOOL),
    Field("prediction", OBJECT),
    Field("prompt_cache_key", STRING),
    Field("reasoning_effort", STRING),
    Field("response_format", OBJECT),
    Field("response_format.type", STRING, nullable=False),
    Field("safety_identifier", STRING),
    Field("seed", ["1", True, {}, [], 2**64, 1.5]),
    Field("service_tier", STRING),
    Field("stop", [5, True, {}, [5]]),
    Field("store", BOOL),
    Field("stream", BOOL),
    Field("stream_options", OBJECT),
    Field("stream_options.include_usage", BOOL),
    Field("temperature", number(0, 2)),
    Field("top_p", number(0, 1)),
    Field("top_logprobs", number(0, 20, integer=True)),
    Field("tools", OBJECTS),
    # Not a name; another name (a provider's hosted tool: `web_search`) passes unchanged.
    Field("tools[0].type", STRING, nullable=False),
    Field("tools[0].function", OBJECT, nullable=False),
    Field("tools[0].function.name", [*STRING, ""], nullable=False),
    Field("tools[0].function.description", STRING),
    Field("tools[0].function.parameters", OBJECT),
    Field("tools[0].function.strict", BOOL),
    Field("tool_choice", [5, True, [], "maybe"]),
    Field("tool_choice.type", enum("plugin"), nullable=False),
    Field("tool_choice.function", OBJECT, nullable=False),
    Field("tool_choice.function.name", [*STRING, ""], nullable=False),
    Field("user", STRING),
    Field("verbosity", STRING),
    Field("web_search_options", OBJECT),
]

# --- /v1/messages -----------------------------------------------------------------------------

MESSAGES_BASE: dict[str, Any] = {
    "model": "tandem",
    "max_tokens": 64,
    "system": [{"type": "text", "text": "You are an agent."}],
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "fix it"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {"cmd": "ls"}}]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "README.md", "is_error": False}],
        },
    ],
    "tools": [{"name": "bash", "description": "run", "input_schema": {"type": "object"}}],
    "tool_choice": {"type": "auto", "disable_parallel_tool_use": False},
    "metadata": {"user_id": "u1"},
    "thinking": {"type": "enabled", "budget_tokens": 2048},
}

MESSAGES_FIELDS = [
    Field("model", STRING, nullable=False),
    Field("messages", [*ARRAY, []], nullable=False),
    Field("max_tokens", number(1, integer=True), nullable=False),
    Field("system", [5, True, {}, [5]]),
    Field("system[0].text", STRING),
    Field("metadata", OBJECT),
    Field("metadata.user_id", STRING),
    Field("stop_sequences", STRINGS),
    Field("stream", BOOL),
    Field("temperature", number(0, 1)),
    Field("top_p", number(0, 1)),
    Field("top_k", number(0, integer=True)),
    Field("tools", OBJECTS),
    Field("tools[0].name", [*STRING, ""], nullable=False),
    Field("tools[0].description", STRING),
    Field("tools[0].input_schema", OBJECT),
    Field("tool_choice", OBJECT),
    Field("tool_choice.type", enum("sometimes"), nullable=False),
    Field("tool_choice.disable_parallel_tool_use", BOOL),
    Field("thinking", OBJECT),
    Field("thinking.type", STRING, nullable=False),
    Field("thinking.budget_tokens", number(1024, integer=True)),
    Field("service_tier", STRING),
    Field("output_config", OBJECT),
    Field("output_config.effort", STRING),
    Field("messages[0].role", enum("wizard"), nullable=False),
    Field("messages[0].content", STRING_OR_ARRAY, nullable=False),
    Field("messages[0].content[0].text", STRING),
    Field("messages[1].content[0].id", [*STRING, ""], nullable=False),
    Field("messages[1].content[0].name", [*STRING, ""], nullable=False),
    Field("messages[1].content[0].input", OBJECT),
    Field("messages[2].content[0].tool_use_id", [*STRING, ""], nullable=False),
    Field("messages[2].content[0].content", STRING_OR_ARRAY),
    Field("messages[2].content[0].is_error", BOOL),
]

# --- /v1/responses ----------------------------------------------------------------------------

RESPONSES_BASE: dict[str, Any] = {
    "model": "tandem",
    "instructions": "You are an agent.",
    "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]},
        {"type": "function_call", "call_id": "c1", "name": "bash", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "README.md"},
    ],
    "tools": [{"type": "function", "name": "bash", "parameters": {"type": "object"}, "strict": False}],
    "tool_choice": {"type": "function", "name": "bash"},
    "reasoning": {"effort": "low", "summary": "auto"},
    "text": {"format": {"type": "text"}, "verbosity": "low"},
    "store": False,
}

RESPONSES_FIELDS = [
    Field("model", STRING, nullable=False),
    Field("input", STRING_OR_ARRAY, nullable=False),
    Field("instructions", STRING),
    Field("max_output_tokens", number(1, integer=True)),
    Field("max_tool_calls", number(1, integer=True)),
    Field("temperature", number(0, 2)),
    Field("top_p", number(0, 1)),
    Field("top_logprobs", number(0, 20, integer=True)),
    Field("tools", OBJECTS),
    Field("tools[0].type", STRING, nullable=False),
    Field("tools[0].name", [*STRING, ""], nullable=False),
    Field("tools[0].description", STRING),
    Field("tools[0].parameters", OBJECT),
    Field("tools[0].strict", BOOL),
    Field("tool_choice", [5, True, [], "maybe"]),
    Field("tool_choice.type", STRING, nullable=False),
    Field("tool_choice.name", [*STRING, ""], nullable=False),
    Field("reasoning", OBJECT),
    Field("reasoning.effort", STRING),
    Field("reasoning.summary", STRING),
    Field("parallel_tool_calls", BOOL),
    Field("store", BOOL),
    Field("stream", BOOL),
    Field("background", BOOL),
    Field("metadata", OBJECT),
    Field("prompt_cache_key", STRING),
    Field("safety_identifier", STRING),
    Field("service_tier", STRING),
    Field("truncation", STRING),
    Field("user", STRING),
    Field("include", STRINGS),
    Field("text", OBJECT),
    Field("text.format", OBJECT),
    Field("text.verbosity", STRING),
    Field("input[0].type", STRING),
    Field("input[0].role", enum("wizard"), nullable=False),
    Field("input[0].content", STRING_OR_ARRAY, nullable=False),
    Field("input[0].content[0].text", STRING),
    Field("input[1].call_id", [*STRING, ""], nullable=False),
    Field("input[1].name", [*STRING, ""], nullable=False),
    Field("input[1].arguments", STRING),
    Field("input[2].call_id", [*STRING, ""], nullable=False),
    Field("input[2].output", [5, True]),
]

SURFACES = {
    "chat/completions": (CHAT_BASE, CHAT_FIELDS),
    "messages": (MESSAGES_BASE, MESSAGES_FIELDS),
    "responses": (RESPONSES_BASE, RESPONSES_FIELDS),
}


# --- helpers ----------------------------------------------------------------------------------

_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _keys(path: str) -> list[str | int]:
    return [name if name else int(index) for name, index in _STEP.findall(path)]


def with_value(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of `base` with the field at `path` set to `value` (objects on the way made)."""
    body = copy.deepcopy(base)
    keys = _keys(path)
    holder: Any = body
    for key in keys[:-1]:
        if isinstance(key, str) and not isinstance(holder.get(key), dict | list):
            holder[key] = {}
        holder = holder[key]
    holder[keys[-1]] = copy.deepcopy(value)
    return body


def cases() -> Iterator[Any]:
    for surface, (base, fields) in SURFACES.items():
        for spec in fields:
            for value in spec.values():
                shown = json.dumps(value)
                yield pytest.param(surface, base, spec.path, value, id=f"{surface}:{spec.path}={shown}")


def error_message(response: httpx.Response) -> str:
    """The error's message, in either shape (OpenAI's, or Anthropic's on /v1/messages)."""
    body = response.json()
    error = body.get("error")
    assert isinstance(error, dict), response.text
    return str(error.get("message"))


@pytest.fixture(scope="module")
def schema_gateway(edge_server: FakeUpstream, cloud_server: FakeUpstream) -> Iterator[GatewayServer]:
    """One gateway for the whole table (hundreds of cases): an edge-only route."""
    settings = settings_for(edge_server.base_url, cloud_server.base_url, routes={"tandem": {"strategy": "edge"}})
    server = GatewayServer(settings).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=20) as client:
        yield client


# --- the tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("surface", list(SURFACES))
def test_each_surfaces_base_request_passes(
    schema_gateway: GatewayServer, http: httpx.Client, edge_server: FakeUpstream, surface: str
) -> None:
    """The table's starting point is a valid request: a refusal below is the field's doing."""
    base, _ = SURFACES[surface]
    response = http.post(f"{schema_gateway.url}/v1/{surface}", json=base)
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(("surface", "base", "path", "value"), list(cases()))
def test_a_wrong_value_of_each_field_gets_400_naming_it(
    schema_gateway: GatewayServer,
    http: httpx.Client,
    edge_server: FakeUpstream,
    surface: str,
    base: dict[str, Any],
    path: str,
    value: Any,
) -> None:
    before = len(edge_server.received)
    response = http.post(f"{schema_gateway.url}/v1/{surface}", json=with_value(base, path, value))
    assert response.status_code == 400, response.text
    message = error_message(response)
    assert path in message, (path, message)
    assert len(edge_server.received) == before  # refused before anything went upstream


# --- what real clients send still passes ---------------------------------------------------------
# Shapes from the client tests and fixtures (tests/test_clients.py, tests/test_client_surfaces.py,
# tests/test_fuzz_surfaces.py, tests/test_messages_fidelity.py) and the shapes real clients send (docs/clients/).

BASH = {
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
HISTORY = [
    {"role": "system", "content": "You are an agent."},
    {"role": "user", "content": "run the tests"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}],
    },
    {"role": "tool", "tool_call_id": "c1", "name": "bash", "content": "1 passed"},
]
CLIENT_SHAPES: list[Any] = [
    # openai SDK: tools with strict, tool_choice "required"; a forced function.
    pytest.param(
        "chat/completions", {"messages": HISTORY, "tools": [BASH], "tool_choice": "required"}, id="openai-sdk"
    ),
    pytest.param(
        "chat/completions",
        {"messages": HISTORY, "tools": [BASH], "tool_choice": {"type": "function", "function": {"name": "bash"}}},
        id="openai-sdk-forced-function",
    ),
    # LiteLLM: seed, n, stop, logprobs, parallel_tool_calls, reasoning_effort, prompt_cache_key.
    pytest.param(
        "chat/completions",
        {
            "messages": HISTORY,
            "tools": [BASH],
            "seed": 7,
            "n": 1,
            "stop": ["</function"],
            "logprobs": True,
            "top_logprobs": 2,
            "parallel_tool_calls": False,
            "reasoning_effort": "high",
            "prompt_cache_key": "conv-1",
            "user": "ana",
        },
        id="litellm",
    ),
    # OpenHands: content as parts with cache_control, tools with extra properties, usage asked.
    pytest.param(
        "chat/completions",
        {
            "messages": [
                {
                    "role": "system",
                    "content": [{"type": "text", "text": "agent", "cache_control": {"type": "ephemeral"}}],
                },
                {"role": "user", "content": [{"type": "text", "text": "fix it"}]},
            ],
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "execute_bash",
                        "description": "run",
                        "parameters": {
                            "type": "object",
                            "properties": {"command": {"type": "string"}, "security_risk": {"type": "string"}},
                        },
                    },
                }
            ],
            "stream": True,
            "stream_options": {"include_usage": True},
            "metadata": {"session_id": "s1"},
            "temperature": 0,
            "max_completion_tokens": 4096,
        },
        id="openhands",
    ),
    # Terminus-2: text only, vLLM's return_token_ids and a session id in the body.
    pytest.param(
        "chat/completions",
        {
            "messages": [{"role": "user", "content": "{}"}],
            "logprobs": True,
            "return_token_ids": True,
            "session_id": "t",
        },
        id="terminus",
    ),
    # smolagents and openai-agents: stop lists, json_schema output, legacy functions.
    pytest.param(
        "chat/completions",
        {
            "messages": HISTORY,
            "tools": [BASH],
            "tool_choice": "auto",
            "stop": ["Observation:"],
            "response_format": {"type": "json_schema", "json_schema": {"name": "o", "schema": {"type": "object"}}},
        },
        id="smolagents-openai-agents",
    ),
    pytest.param(
        "chat/completions",
        {"messages": HISTORY, "functions": [{"name": "bash", "parameters": {}}], "function_call": "auto"},
        id="legacy-functions",
    ),
    # Aider: streamed, temperature 0, null fields the SDK leaves in.
    pytest.param(
        "chat/completions",
        {"messages": HISTORY, "stream": True, "temperature": 0, "tools": None, "tool_choice": None, "name": None},
        id="aider",
    ),
    # Claude Code: system blocks with cache_control, a system-role message inside the messages
    # (it sends one: not Anthropic's documented shape, but what the client does), thinking,
    # metadata.user_id as JSON, context_management, tool results marked is_error.
    pytest.param(
        "messages",
        {
            "max_tokens": 32000,
            "stream": True,
            "system": [
                {"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": "Be concise."},
            ],
            "messages": [
                {"role": "system", "content": "<system-reminder>todo list empty</system-reminder>"},
                {"role": "user", "content": [{"type": "text", "text": "write proof.txt"}]},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "run it", "signature": "sig"},
                        {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}},
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "no such file", "is_error": True}
                    ],
                },
            ],
            "tools": [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}}],
            "thinking": {"type": "enabled", "budget_tokens": 31999},
            "metadata": {"user_id": '{"session_id": "abc"}'},
            "context_management": {"edits": [{"type": "clear_thinking_20251015"}]},
            "temperature": 1,
        },
        id="claude-code",
    ),
    pytest.param(
        "messages",
        {
            "max_tokens": 512,
            "messages": [{"role": "user", "content": "title this"}],
            "tools": [{"name": "f", "input_schema": {"type": "object"}}],
            "tool_choice": {"type": "tool", "name": "f", "disable_parallel_tool_use": True},
            "top_k": 0,
            "top_p": 0.9,
            "thinking": {"type": "adaptive"},
            "stop_sequences": ["\n\nHuman:"],
        },
        id="anthropic-sdk-forced-tool",
    ),
    # Codex CLI: developer messages, namespace and hosted tools, store false, include, reasoning.
    pytest.param(
        "responses",
        {
            "instructions": "You are Codex.",
            "input": [
                {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "<permissions>"}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix the bug"}]},
                {"type": "reasoning", "summary": [], "encrypted_content": "x"},
                {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": "ok"},
            ],
            "tools": [
                {"type": "function", "name": "shell", "description": "run", "strict": False, "parameters": {}},
                {"type": "custom", "name": "apply_patch", "format": {"type": "grammar", "definition": "x"}},
                {"type": "namespace", "name": "multi_agent_v1", "tools": [{"type": "function", "name": "spawn"}]},
                {"type": "web_search"},
            ],
            "tool_choice": "auto",
            "parallel_tool_calls": False,
            "reasoning": {"effort": "medium", "summary": "auto"},
            "store": False,
            "stream": True,
            "include": ["reasoning.encrypted_content"],
            "prompt_cache_key": "thread-1",
            "text": {"verbosity": "low"},
            "client_metadata": {"session_id": "s"},
        },
        id="codex",
    ),
    # A function tool without its `type`: vLLM reads it as a function; clients that leave it out
    # (hand-written agents) worked before the members were checked.
    pytest.param(
        "chat/completions",
        {
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"function": {"name": "bash", "parameters": {"type": "object"}}}],
        },
        id="function-tool-without-type",
    ),
    # openai-agents: strict function tools, json_schema output, a forced function.
    pytest.param(
        "responses",
        {
            "input": "hi",
            "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}, "strict": True}],
            "tool_choice": {"type": "function", "name": "f"},
            "text": {"format": {"type": "json_schema", "name": "o", "schema": {"type": "object"}, "strict": True}},
            "max_output_tokens": 256,
            "top_logprobs": 0,
            "truncation": "disabled",
        },
        id="openai-agents",
    ),
]


@pytest.mark.parametrize(("surface", "body"), CLIENT_SHAPES)
def test_what_real_clients_send_still_passes(
    schema_gateway: GatewayServer, http: httpx.Client, surface: str, body: dict[str, Any]
) -> None:
    response = http.post(f"{schema_gateway.url}/v1/{surface}", json={"model": "tandem", **body})
    assert response.status_code == 200, response.text

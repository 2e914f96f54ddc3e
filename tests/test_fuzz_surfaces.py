"""Bad input on every surface: valid requests of each API (chat completions, Messages,
Responses) with fields replaced by values of random types, removed or added, sent to a real
gateway (memory store, and Redis) on an edge, a judge and a redacting route, plain and
streamed, on a few sessions (so that remembered histories meet mutated ones). Every answer is a
success or an OpenAI-shaped error; never a 500 or a dropped connection. Seeded: the same
requests every run."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import httpx
import pytest

from tests import both_stores
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

# Every case runs against both stores: in memory, and a real redis-server.
make_gateway = both_stores.make_gateway

REQUESTS = 150
# Values of every JSON type, and some that break naive code: a lone surrogate, a huge integer.
JUNK: list[Any] = [None, True, 0, -1, 1e308, "", "xyz", [], {}, [None], {"a": None}, [[[]]], "\ud800", 2**70, [1, "a"]]
KEYS = ["tools", "tool_choice", "stream", "n", "max_tokens", "stream_options", "metadata", "system", "input"]
KEYS += ["instructions", "role", "content", "type", "name", "arguments", "tool_call_id", "tool_calls", "text"]

CHAT = {
    "messages": [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": [{"type": "text", "text": "fix it; mail me at ana@example.com"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"cmd": "ls"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "README.md\nsetup.py"},
    ],
    "tools": [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}],
}
MESSAGES = {
    "max_tokens": 100,
    "system": [{"type": "text", "text": "You are an agent.", "cache_control": {"type": "ephemeral"}}],
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "fix it"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {"cmd": "ls"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "README.md"}]},
    ],
    "tools": [{"name": "bash", "input_schema": {"type": "object"}}],
}
RESPONSES = {
    "instructions": "You are an agent.",
    "input": [
        {"role": "user", "content": [{"type": "input_text", "text": "fix it"}]},
        {"type": "function_call", "call_id": "c1", "name": "bash", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "README.md"},
    ],
    "tools": [{"type": "function", "name": "bash", "parameters": {"type": "object"}}],
    "store": False,
}
SURFACES = {"chat/completions": CHAT, "messages": MESSAGES, "responses": RESPONSES}
ROUTES = {
    "edge": {"strategy": "edge"},
    "judge": {"strategy": "judge"},
    "redact": {"strategy": "cloud", "privacy": "redact"},
}


def mutated(rng: random.Random, value: Any, depth: int = 0) -> Any:
    if depth and rng.random() < 0.25:
        return copy.deepcopy(rng.choice(JUNK))
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            roll = rng.random()
            if roll < 0.05:
                continue  # removed
            out[key] = mutated(rng, item, depth + 1) if roll < 0.35 else item
        if rng.random() < 0.1:
            out[rng.choice(KEYS)] = copy.deepcopy(rng.choice(JUNK))
        return out
    if isinstance(value, list):
        items = [mutated(rng, item, depth + 1) if rng.random() < 0.4 else item for item in value]
        if items and rng.random() < 0.1:
            items.pop(rng.randrange(len(items)))
        return items
    return value


def posted(http: httpx.Client, url: str, statuses: set[int], **request: Any) -> str | None:
    """POST; what is wrong with the answer (no answer, a 500, a 5xx other than 502-504, an error
    without a message), or None. Its status is added to `statuses`."""
    try:
        answer = http.post(url, **request)
    except httpx.TransportError as exc:
        return f"{type(exc).__name__}: {exc}"
    statuses.add(answer.status_code)
    if answer.status_code == 500 or answer.status_code > 504:
        return f"{answer.status_code}: {answer.text[:300]}"
    if answer.status_code >= 400:
        error = answer.json().get("error")
        if not (isinstance(error, dict) and isinstance(error.get("message"), str) and error["message"]):
            return f"{answer.status_code}: {answer.text[:300]}"
    return None


@pytest.mark.parametrize("route", sorted(ROUTES))
@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_mutated_requests_get_an_answer_or_an_openai_shaped_error(
    make_gateway: Any, edge: FakeUpstream, cloud: FakeUpstream, route: str, surface: str
) -> None:
    server: GatewayServer = make_gateway(routes={route: ROUTES[route]})
    rng = random.Random(f"{route}/{surface}")
    broken: list[tuple[Any, str]] = []
    statuses: set[int] = set()
    with httpx.Client(timeout=20) as http:
        for number in range(REQUESTS):
            body = mutated(rng, {**SURFACES[surface], "model": route})
            if rng.random() < 0.3:
                body["stream"] = True
            content = json.dumps(body).encode("utf-8", "surrogatepass")
            headers = {"content-type": "application/json", "x-session-id": f"s{number % 5}"}
            wrong = posted(http, f"{server.url}/v1/{surface}", statuses, content=content, headers=headers)
            if wrong is not None:
                broken.append((body, wrong))
    assert not broken, broken[:3]
    assert 200 in statuses and 400 in statuses, statuses  # both kinds were met

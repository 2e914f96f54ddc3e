"""Requests parsed from the trajectory's last body go through every strategy unchanged.

The prefix parser (router/protocol/prefix.py) hands a step the message objects it parsed for
the step before. That is only right while nothing downstream changes a request in place: every
stage copies what it changes (redaction, a strategy's patch, the cloud's context). Here each
strategy runs a trajectory through the engine with the parser, and after every step the
request is what the client sent, and the next body parses as a whole parse does.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from router.protocol.chat import parse_chat_request
from router.result import StepMeta
from tests.inprocess import engine_settings, in_process

CARD, EMAIL = "4111 1111 1111 1111", "jane.doe@example.com"
# Longer than the smallest body the parser keeps (MIN_BYTES), as an agent's are after a few steps.
SYSTEM = "You are a careful software engineer. Work in small verified steps. " * 1000

ROUTES: dict[str, dict[str, Any]] = {
    "edge": {"strategy": "edge"},
    "judge": {"strategy": "judge"},
    "redact": {"strategy": "cloud", "privacy": "redact"},
    "redact-context": {"strategy": "cloud", "privacy": "redact", "context": {"mode": "last_k", "k": 2}},
    "summary": {"strategy": "cloud", "context": {"mode": "summary", "k": 2}},
    "sketch": {"strategy": "sketch"},
    "advisor": {"strategy": "advisor"},
    "escalation": {"strategy": "escalation"},
    "llm_judge": {"strategy": "llm_judge", "judge": "edge"},
    "draft_verify": {"strategy": "draft_verify", "verifier": "edge"},
    "self_delegation": {"strategy": "self_delegation"},
    "random": {"strategy": "random", "p": 0.5, "seed": 3},
}


@pytest.mark.parametrize("name", sorted(ROUTES))
async def test_a_strategy_leaves_the_parsed_request_as_the_client_sent_it(name: str) -> None:
    settings = engine_settings(routes={"tandem": ROUTES[name]})
    async with in_process(settings) as env:
        parser = env.engine.parser
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Refund card {CARD} and mail {EMAIL}; the test fails with Error: 3."},
        ]
        steps = 6
        for index in range(steps):
            body = orjson.dumps({"model": "tandem", "messages": messages, "max_tokens": 64})
            request = parser.parse(body)
            assert request.raw == parse_chat_request(body).raw
            sent = orjson.dumps(request.raw)
            await env.engine.tracker.recorder.flush()
            await env.engine.run(request, StepMeta({"x-session-id": "s1"}, ""))
            assert orjson.dumps(request.raw) == sent, "a stage changed the client's request in place"
            call = {"id": f"c{index}", "type": "function", "function": {"name": "bash", "arguments": '{"cmd":"ls"}'}}
            messages = [
                *messages,
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": f"c{index}", "content": f"Error: step {index} for {EMAIL}\n" * 5},
            ]
        assert parser.reused == steps - 1

"""A broken upstream answer on every surface: valid chat completions and stream chunks with
fields replaced by values of random types, removed or added, answered by both upstreams (with a
200) to an edge, a judge and a redacting route, on the chat, Messages and Responses surfaces,
plain and streamed, with the memory store and with Redis. Every request gets a success or an
error in its surface's shape (a plain answer that is not a chat completion is the upstream's
failure: a 502), never a 500 or a dropped connection, and every step is recorded. Seeded: the
same answers every run."""

from __future__ import annotations

import json
import random
import time
from typing import Any

import httpx
import pytest

from tests import both_stores
from tests.fake_upstream import FakeUpstream
from tests.test_fuzz_surfaces import ROUTES, SURFACES, mutated, posted

# Every case runs against both stores: in memory, and a real redis-server.
make_gateway = both_stores.make_gateway

REQUESTS = 90
SESSIONS = 3

COMPLETION = {
    "id": "c1",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "done, mailed ana@example.com",
                "tool_calls": [
                    {"id": "k", "type": "function", "function": {"name": "bash", "arguments": '{"cmd": "ls"}'}}
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {
        "prompt_tokens": 10,
        "completion_tokens": 3,
        "total_tokens": 13,
        "prompt_tokens_details": {"cached_tokens": 2},
    },
}


def _chunk(choices: list[Any], **extra: Any) -> dict[str, Any]:
    return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": choices, **extra}


CHUNKS = [
    _chunk([{"index": 0, "delta": {"role": "assistant", "content": "do"}, "finish_reason": None}]),
    _chunk([{"index": 0, "delta": {"content": "ne [EMAIL_1]"}, "finish_reason": None}]),
    _chunk(
        [
            {
                "index": 0,
                "delta": {"tool_calls": [{"index": 0, "id": "k", "function": {"name": "bash", "arguments": '{"c'}}]},
                "finish_reason": None,
            }
        ]
    ),
    _chunk(
        [
            {
                "index": 0,
                "delta": {"tool_calls": [{"index": 0, "function": {"arguments": 'md": "ls"}'}}]},
                "finish_reason": "tool_calls",
            }
        ]
    ),
    _chunk([], usage={"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}),
]


def broken_answer(rng: random.Random, stream: bool) -> dict[str, Any]:
    if stream:
        events = [mutated(rng, chunk) if rng.random() < 0.5 else chunk for chunk in CHUNKS]
        text = "".join(f"data: {json.dumps(event)}\n\n" for event in events) + "data: [DONE]\n\n"
        return {"kind": "raw", "status": 200, "body": text, "content_type": "text/event-stream"}
    body = json.dumps(mutated(rng, COMPLETION))
    return {"kind": "raw", "status": 200, "body": body, "content_type": "application/json"}


@pytest.mark.parametrize("route", sorted(ROUTES))
@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_broken_answers_get_an_answer_or_an_error_and_every_step_is_recorded(
    make_gateway: Any, edge: FakeUpstream, cloud: FakeUpstream, route: str, surface: str
) -> None:
    server = make_gateway(routes={route: ROUTES[route]})
    rng = random.Random(f"answers/{route}/{surface}")
    prefix = f"{route}-{surface.replace('/', '-')}"
    broken: list[tuple[Any, str]] = []
    statuses: set[int] = set()
    with httpx.Client(timeout=20) as http:
        for number in range(REQUESTS):
            stream = rng.random() < 0.5
            how = broken_answer(rng, stream)
            edge.reset()
            cloud.reset()
            for _ in range(3):  # the step, an inner call, the other target after a failure
                edge.push(how)
                cloud.push(how)
            body = {**SURFACES[surface], "model": route, "stream": stream}
            headers = {"x-session-id": f"{prefix}-{number % SESSIONS}"}
            wrong = posted(http, f"{server.url}/v1/{surface}", statuses, json=body, headers=headers)
            if wrong is not None:
                broken.append((how, wrong))
        assert not broken, broken[:3]
        assert 200 in statuses and 502 in statuses, statuses  # both kinds were met

        def recorded() -> int:
            total = 0
            for session in range(SESSIONS):
                found = http.get(f"{server.url}/v1/trajectories/{prefix}-{session}")
                total += len(found.json()["records"]) if found.status_code == 200 else 0
            return total

        deadline = time.monotonic() + 10
        while recorded() < REQUESTS and time.monotonic() < deadline:
            time.sleep(0.05)
        assert recorded() == REQUESTS

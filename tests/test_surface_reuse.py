"""Through the real gateway: `/v1/messages` and `/v1/responses` bodies parsed from the last one
send the upstream what a gateway that parses every body whole sends, byte for byte.

Two gateways (one with `limits.reuse_parse_bytes: 0`) get the same long, growing Claude Code
and Codex runs (bodies past the 64 KB from which bodies are kept; `cache_control` moved onto
the newest turn at every step); the edge upstream records every body it receives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from benchmarks.longrun.trajectory import RunShape, anthropic_body, responses_body, run_messages
from router.protocol.prefix_translated import SurfaceSpec
from router.surfaces.messages.handler import SPEC as MESSAGES
from router.surfaces.responses.handler import SPEC as RESPONSES
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

ROUTES = {"tandem": {"strategy": "edge"}}
STEPS = 24


SURFACES: dict[str, tuple[str, SurfaceSpec, Callable[[list[dict[str, Any]]], bytes]]] = {
    "messages": ("/v1/messages", MESSAGES, lambda messages: anthropic_body("tandem", messages)),
    "responses": ("/v1/responses", RESPONSES, lambda messages: responses_body("tandem", messages)),
}


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_a_long_run_sends_the_upstream_what_whole_parses_send(
    surface: str, make_gateway: Callable[..., GatewayServer], edge: FakeUpstream
) -> None:
    path, spec, encode = SURFACES[surface]
    reusing = make_gateway(routes=ROUTES)
    whole = make_gateway(routes=ROUTES, limits={"reuse_parse_bytes": 0})
    shape = RunShape(steps=STEPS, target_bytes=200_000)
    sizes = []
    with httpx.Client(timeout=20) as http:
        for messages in run_messages(seed=5, shape=shape):
            body = encode(messages)
            sizes.append(len(body))
            for server in (reusing, whole):
                answer = http.post(server.url + path, content=body, headers={"x-session-id": f"s-{surface}"})
                assert answer.status_code == 200, answer.text
    received = [record.raw for record in edge.received]
    assert len(received) == 2 * STEPS
    assert received[0::2] == received[1::2]
    parser = reusing.gateway.parser.translated(spec)
    kept = sum(size >= 64 * 1024 for size in sizes)
    # Each body past 64 KB but the first of them is parsed from the one before it.
    assert kept > 5 and parser.reused == kept - 1
    assert whole.gateway.parser.translated(spec).reused == 0

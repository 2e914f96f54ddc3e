"""`upstreams.<name>.trajectory_header`: the trajectory id sent to an upstream in a header, for a
session-affine router in front of the edge's replicas (vLLM production-stack, llm-d)."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from router.settings import ConfigError
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, settings_for

ROUTES = {"tandem": {"strategy": "edge", "failover": True}, "probe": {"strategy": "entropy", "threshold": 9.0}}


def header(headers: dict[str, str]) -> str | None:
    return {name.lower(): value for name, value in headers.items()}.get("x-session-key")


def test_the_edge_gets_the_trajectory_id_in_its_header_and_the_cloud_does_not(
    make_gateway: Callable[..., GatewayServer], edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes=ROUTES, upstream_overrides={"edge": {"trajectory_header": "x-session-key"}})
    with httpx.Client(timeout=10) as client:
        for model in ("tandem", "probe"):
            body = {"model": model, "messages": [{"role": "user", "content": "hi"}]}
            reply = client.post(f"{server.base_url}/chat/completions", json=body, headers={"x-session-id": "run-7"})
            assert reply.status_code == 200, reply.text
        # An id a client sent with a line break is not a plain id: it is hashed, never sent raw.
        body = {"model": "tandem", "session_id": "run-8\n", "messages": [{"role": "user", "content": "hi"}]}
        assert client.post(f"{server.base_url}/chat/completions", json=body).status_code == 200
        edge.default = {"kind": "error", "status": 503}
        body = {"model": "tandem", "messages": [{"role": "user", "content": "over"}]}
        reply = client.post(f"{server.base_url}/chat/completions", json=body, headers={"x-session-id": "run-9"})
        assert reply.headers["x-tandem-target"] == "cloud"
    sent = [header(r.headers) for r in edge.received]
    # The step, the entropy route's probe (an inner call, whose answer is the step's), the
    # hashed id, the call that failed over to the cloud.
    assert len(sent) == 4 and sent[:2] == ["run-7", "run-7"] and sent[3] == "run-9"
    assert sent[2] is not None and sent[2].startswith("h-") and "\n" not in sent[2]
    assert edge.received[1].body["max_tokens"] == 1  # it was the probe
    assert cloud.received and all(header(r.headers) is None for r in cloud.received)


def test_no_header_unless_configured_and_a_bad_name_is_refused(
    make_gateway: Callable[..., GatewayServer], edge: FakeUpstream
) -> None:
    server = make_gateway(routes=ROUTES)
    with httpx.Client(timeout=10) as client:
        body = {"model": "tandem", "messages": [{"role": "user", "content": "hi"}]}
        client.post(f"{server.base_url}/chat/completions", json=body, headers={"x-session-id": "run-1"})
    assert edge.received and header(edge.received[0].headers) is None
    with pytest.raises(ConfigError, match="trajectory_header"):
        settings_for(
            "http://127.0.0.1:1/v1",
            "http://127.0.0.1:2/v1",
            upstream_overrides={"edge": {"trajectory_header": "x bad\n"}},
        )

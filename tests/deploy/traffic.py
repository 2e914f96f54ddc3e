"""Real traffic through a real gateway, touching every kind of step the metrics record:
edge and cloud steps, a fallback after an upstream error, a refused request, streamed and
plain answers, a judge-routed step, a sensitive value sent to the cloud, and a trajectory
closed by its outcome."""

from __future__ import annotations

import httpx

from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

ROUTES = {
    "tandem": {"strategy": "random", "p": 0.5, "seed": 7, "constraints": {"max_cloud_share": 0.6}},
    "tandem/task": {"strategy": "task", "cloud_if_matches": "refactor", "default": "edge"},
    "tandem/judge": {"strategy": "judge", "target_cloud_share": 0.4},
    # Edge-only routes do not fail over unless told to.
    "tandem/edge-failover": {"strategy": "edge", "failover": True},
}


def drive(client: httpx.Client, server: GatewayServer, edge: FakeUpstream) -> None:
    def step(model: str, session: str, text: str = "fix the failing test", **extra: object) -> httpx.Response:
        body = {"model": model, "messages": [{"role": "user", "content": text}], **extra}
        response = client.post(f"{server.url}/v1/chat/completions", json=body, headers={"X-Session-ID": session})
        assert response.status_code == 200, response.text
        return response

    for index in range(6):
        step("tandem", "run-a", stream=index % 2 == 0)
    step("tandem/task", "run-b", "refactor the parser")
    step("tandem/edge", "run-c")
    edge.push({"kind": "error", "status": 503})
    assert step("tandem/edge-failover", "run-c").headers["x-tandem-fallback"] == "true"
    step("tandem/cloud", "run-d")
    step("tandem/judge", "run-e", "edit calc.py so that the failing test passes")
    step("tandem/cloud", "run-f", "mail the report to alice@example.com")  # privacy: allow, so exposed
    bad = client.post(f"{server.url}/v1/chat/completions", content=b"{not json")
    assert bad.status_code == 400
    closed = client.post(f"{server.url}/v1/trajectories/run-a/outcome", json={"success": True})
    assert closed.status_code == 200, closed.text

"""The traffic of the live-Prometheus run: each strategy route through its decisions and its
inner-call failures, the privacy policies, and every upstream failure kind."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    from tests.deploy.live import Fleet

EMAIL = "alice@example.com"
HIGH_ENTROPY = {"kind": "text", "top_logprobs": [-0.7, -0.7, -1.0]}


def _step(
    fleet: Fleet, model: str, session: str, text: str = "fix the failing test", *, url: str | None = None, **extra: Any
) -> httpx.Response:
    body = {"model": model, "messages": [{"role": "user", "content": text}], **extra}
    headers = {"X-Session-ID": session, **extra.pop("headers", {})} if "headers" in extra else {"X-Session-ID": session}
    body.pop("headers", None)
    return fleet.client.post(f"{url or fleet.healthy.url}/v1/chat/completions", json=body, headers=headers)


def _ok(response: httpx.Response, reason: str | None = None) -> None:
    assert response.status_code == 200, response.text
    if reason is not None:
        assert response.headers["x-tandem-reason"] == reason, (reason, dict(response.headers))


def _outcome(fleet: Fleet, session: str, success: bool = True) -> None:
    closed = fleet.client.post(f"{fleet.healthy.url}/v1/trajectories/{session}/outcome", json={"success": success})
    assert closed.status_code == 200, closed.text


def drive_healthy(fleet: Fleet) -> None:
    edge, cloud, step = fleet.edge, fleet.cloud, _step
    for index in range(8):
        _ok(step(fleet, "tandem", "run-random", stream=index % 2 == 0))
    _ok(step(fleet, "tandem", "run-random", headers={"x-tandem-target": "cloud"}), "header_forced")
    _outcome(fleet, "run-random")
    _ok(step(fleet, "tandem/task", "run-task", "refactor the parser"), "task_routed")
    _ok(step(fleet, "tandem/task", "run-task-2", "list the files"), "task_routed")
    for index in range(3):
        _ok(step(fleet, "tandem/judge", f"run-judge-{index}", "edit calc.py so that the failing test passes"), "judge")
    # Entropy: a confident and an unsure probe, one without logprobs, one that fails.
    _ok(step(fleet, "tandem/entropy", "run-entropy", fake=HIGH_ENTROPY), "entropy")
    _ok(step(fleet, "tandem/entropy", "run-entropy", "next", fake={"kind": "text", "top_logprobs": [-0.01, -5.0]}))
    _ok(step(fleet, "tandem/entropy", "run-entropy", "again"), "inner_call_failed")
    edge.push({"kind": "error", "status": 500})
    _ok(step(fleet, "tandem/entropy", "run-entropy", "once more"), "inner_call_failed")
    # An LLM judge on the cloud: no, yes, and an unreadable reply; the run costs more than all-cloud.
    cloud.push({"kind": "text", "text": "no"})
    _ok(step(fleet, "tandem/llm", "run-llm"), "llm_judge")
    _outcome(fleet, "run-llm")
    cloud.push({"kind": "text", "text": "yes"})
    _ok(step(fleet, "tandem/llm", "run-llm-2"), "llm_judge")
    cloud.push({"kind": "text", "text": "perhaps"})
    _ok(step(fleet, "tandem/llm", "run-llm-2", "next"), "inner_call_failed")
    # Draft and verify (the edge verifies): unreadable verdict, accepted, rejected.
    _ok(step(fleet, "tandem/draft", "run-draft"), "inner_call_failed")
    edge.push({"kind": "text"}, {"kind": "text", "text": "0.9"})
    _ok(step(fleet, "tandem/draft", "run-draft", "next"), "draft_accepted")
    edge.push({"kind": "text"}, {"kind": "text", "text": "0.1"})
    _ok(step(fleet, "tandem/draft", "run-draft", "again"), "draft_rejected")
    # Self-delegation, advisor, sketch, escalation.
    _ok(step(fleet, "tandem/delegate", "run-delegate"), "edge_answered")
    edge.push({"kind": "tool_call", "name": "delegate_to_cloud", "arguments": "{}"})
    _ok(step(fleet, "tandem/delegate", "run-delegate", "next"), "self_delegated")
    _ok(step(fleet, "tandem/advisor", "run-advisor"), "edge_answered")
    edge.push({"kind": "tool_call", "name": "advisor", "arguments": "{}"})
    _ok(step(fleet, "tandem/advisor", "run-advisor", "next"), "advised")
    _ok(step(fleet, "tandem/sketch", "run-sketch"), "sketch")
    _ok(step(fleet, "tandem/escalate", "run-escalate"), "edge_answered")
    # Privacy: redacted, blocked (the route has no other steps), kept local, exposed under allow.
    _ok(step(fleet, "tandem/redact", "run-redact", f"mail the report to {EMAIL}"))
    blocked = step(fleet, "tandem/block", "run-block", f"mail the report to {EMAIL}")
    assert blocked.status_code == 403, blocked.text
    _ok(step(fleet, "tandem/local", "run-local", f"mail the report to {EMAIL}"), "privacy_keep_local")
    _ok(step(fleet, "tandem/cloud", "run-exposed", f"mail the report to {EMAIL}"))
    # Failures on the edge: a 503 and a hang fail over to the cloud; a drop mid-stream fails the step.
    edge.push({"kind": "error", "status": 503})
    assert step(fleet, "tandem/edge-failover", "run-fail").headers["x-tandem-fallback"] == "true"
    edge.push({"kind": "hang"})
    assert step(fleet, "tandem/edge-failover", "run-fail", "next").headers["x-tandem-fallback"] == "true"
    edge.push({"kind": "drop"})
    dropped = step(fleet, "tandem/edge-failover", "run-fail", "again", stream=True)
    assert dropped.status_code == 200 and "error" in dropped.text
    bad = fleet.client.post(f"{fleet.healthy.url}/v1/chat/completions", content=b"{not json")
    assert bad.status_code == 400
    busy_failing_routes(fleet)


# The ratio alerts are silent below 20 steps in 5 minutes (deploy/prometheus/rules.yaml): the
# routes whose alerts the run expects get more than that, most of them failing.
BUSY = 24


def busy_failing_routes(fleet: Fleet) -> None:
    edge, cloud, step = fleet.edge, fleet.cloud, _step
    for index in range(BUSY - 4):
        # A probe answer without logprobs: the entropy strategy falls back.
        _ok(step(fleet, "tandem/entropy", "run-entropy", f"busy {index}"), "inner_call_failed")
    for index in range(BUSY - 3):
        cloud.push({"kind": "text", "text": "perhaps"})
        _ok(step(fleet, "tandem/llm", "run-llm-2", f"busy {index}"), "inner_call_failed")
    for index in range(BUSY - 3):
        _ok(step(fleet, "tandem/draft", "run-draft", f"busy {index}"), "inner_call_failed")
    for index in range(BUSY - 3):
        edge.push({"kind": "error", "status": 503})
        assert step(fleet, "tandem/edge-failover", "run-fail", f"busy {index}").headers["x-tandem-fallback"] == "true"


def drive_sick(fleet: Fleet) -> None:
    # Long prompts (a large agent context) on every step: all of them fail over to the cloud.
    # The random draw sends about half of them to the edge: twice BUSY, so that more than 20
    # edge calls fail (TandemEdgeDown counts calls).
    long_prompt = {"kind": "text", "prompt_tokens": 100_000, "completion_tokens": 500}
    for index in range(2 * BUSY):
        response = _step(fleet, "tandem", "run-sick", f"step {index}", url=fleet.sick.url, fake=long_prompt)
        _ok(response)
        assert response.headers["x-tandem-target"] == "cloud"

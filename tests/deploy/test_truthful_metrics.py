"""The metrics agree with the ledger: inner-call failures are counted where strategies catch
them, inner calls' tokens and dollars are booked under the target that served them, spend
equals the ledger's (failed steps' inner calls included), redacted values are counted, and a
run that cost more than all-cloud is recorded as a loss, not as zero savings."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.fake_upstream import FakeUpstream, free_port
from tests.gateway_server import GatewayServer

EMAIL = "alice@example.com"


def samples(server: GatewayServer, client: httpx.Client, name: str) -> list[tuple[dict[str, str], float]]:
    text = client.get(f"{server.url}/metrics").text
    return [
        (sample.labels, sample.value)
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name
    ]


def total(server: GatewayServer, client: httpx.Client, name: str, **match: str) -> float:
    found = samples(server, client, name)
    return sum(value for labels, value in found if all(labels.get(k) == v for k, v in match.items()))


def step(client: httpx.Client, server: GatewayServer, model: str, session: str, text: str = "fix it") -> httpx.Response:
    body = {"model": model, "messages": [{"role": "user", "content": text}]}
    return client.post(f"{server.url}/v1/chat/completions", json=body, headers={"X-Session-ID": session})


def records(client: httpx.Client, server: GatewayServer, session: str) -> list[dict[str, Any]]:
    detail = client.get(f"{server.url}/v1/trajectories/{session}")
    assert detail.status_code == 200, detail.text
    found: list[dict[str, Any]] = detail.json()["records"]
    return found


def test_inner_call_failures_are_counted_by_route_and_kind(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client, edge: FakeUpstream
) -> None:
    server = make_gateway(routes={"probe": {"strategy": "entropy", "fallback": "edge"}})
    assert total(server, client, "tandem_policy_failures_total", route="probe") == 0
    edge.push({"kind": "error", "status": 500})  # the probe fails
    assert step(client, server, "probe", "p-1").headers["x-tandem-reason"] == "inner_call_failed"
    edge.push({"kind": "text"})  # the probe answers without logprobs
    assert step(client, server, "probe", "p-2").headers["x-tandem-reason"] == "inner_call_failed"
    assert total(server, client, "tandem_policy_failures_total", route="probe", kind="probe") == 1
    assert total(server, client, "tandem_policy_failures_total", route="probe", kind="probe_unreadable") == 1


def test_inner_calls_are_booked_under_their_target_and_spend_equals_the_ledger(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes={"probe": {"strategy": "entropy", "threshold": 0.1, "failover": False}})
    # A high-entropy probe sends the step to the cloud, which fails: the step has no usage,
    # but its probe was paid for.
    edge.push({"kind": "text", "top_logprobs": [-0.7, -0.7, -1.0], "prompt_tokens": 300, "completion_tokens": 1})
    cloud.push({"kind": "error", "status": 500})
    assert step(client, server, "probe", "s-1").status_code == 500
    edge.push({"kind": "text", "top_logprobs": [-0.7, -0.7, -1.0], "prompt_tokens": 300, "completion_tokens": 1})
    assert step(client, server, "probe", "s-1", "again").status_code == 200
    ledger = records(client, server, "s-1")
    assert [r["status"] for r in ledger] == ["error", "ok"]
    assert all(r["inner"][0]["purpose"] == "probe" and r["inner"][0]["cost_usd"] > 0 for r in ledger)
    spent = total(server, client, "tandem_cost_usd_total", route="probe")
    assert abs(spent - sum(r["cost_usd"] for r in ledger)) < 1e-12
    probes = total(server, client, "tandem_cost_usd_total", route="probe", target="edge", call="probe")
    assert abs(probes - sum(r["inner"][0]["cost_usd"] for r in ledger)) < 1e-12
    assert total(server, client, "tandem_cost_usd_total", route="probe", target="cloud", call="probe") == 0
    assert (
        total(server, client, "tandem_tokens_total", route="probe", target="edge", kind="prompt", call="probe") == 600
    )
    counterfactual = total(server, client, "tandem_counterfactual_cost_usd_total", route="probe")
    assert abs(counterfactual - sum(r["counterfactual_usd"] for r in ledger)) < 1e-12


def test_redacted_values_are_counted_as_the_ledger_counts_them(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client
) -> None:
    server = make_gateway(routes={"private": {"strategy": "cloud", "privacy": "redact"}})
    assert step(client, server, "private", "r-1", f"mail {EMAIL} and cc {EMAIL}").status_code == 200
    ledger = records(client, server, "r-1")
    assert ledger[0]["redacted"] == 2
    assert total(server, client, "tandem_privacy_values_total", route="private", action="redacted", type="EMAIL") == 2
    assert total(server, client, "tandem_privacy_values_total", route="private", action="exposed") == 0


def test_blocked_counts_values_not_steps_times_types(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client
) -> None:
    server = make_gateway(routes={"strict": {"strategy": "cloud", "privacy": "block"}})
    text = f"mail {EMAIL} and bob@example.org"
    assert step(client, server, "strict", "b-1", text).status_code == 403
    assert total(server, client, "tandem_privacy_values_total", route="strict", action="blocked", type="EMAIL") == 2


def test_a_run_that_cost_more_than_all_cloud_is_a_loss(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes={"asked": {"strategy": "llm_judge", "judge": "cloud"}})
    cloud.push({"kind": "text", "text": "no"})  # the cloud judge keeps the step on the edge
    assert step(client, server, "asked", "l-1").headers["x-tandem-target"] == "edge"
    closed = client.post(f"{server.url}/v1/trajectories/l-1/outcome", json={"success": True})
    assert closed.status_code == 200, closed.text
    savings = closed.json()["savings_usd"]
    assert savings < 0
    assert abs(total(server, client, "tandem_trajectory_loss_usd_sum", route="asked") + savings) < 1e-12
    assert total(server, client, "tandem_trajectory_loss_usd_count", route="asked") == 1
    assert total(server, client, "tandem_trajectory_savings_usd_sum", route="asked") == 0


def test_an_edge_that_fails_every_probe_is_an_upstream_error(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client
) -> None:
    # The probe cannot reach the edge; the cloud answers every step (the fallback): without
    # counting the probes' failures, TandemEdgeDown would never see this edge down.
    dead = f"http://127.0.0.1:{free_port()}/v1"
    server = make_gateway(
        routes={"probe": {"strategy": "entropy", "fallback": "cloud"}},
        edge_url=dead,
        upstream_overrides={"edge": {"timeouts": {"connect": 1, "first_byte": 1, "idle": 1}}},
    )
    for index in range(3):
        response = step(client, server, "probe", f"d-{index}")
        assert response.status_code == 200 and response.headers["x-tandem-target"] == "cloud"
    assert total(server, client, "tandem_upstream_errors_total", upstream="edge", kind="connect") == 3
    assert total(server, client, "tandem_policy_failures_total", route="probe", kind="probe") == 3

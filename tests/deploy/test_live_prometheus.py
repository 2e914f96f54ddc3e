"""Every dashboard panel and every alert rule, evaluated by a real Prometheus that scraped real
gateways through every route and failure kind (tests/deploy/live.py). A query error, an empty
result that is not allow-listed here with its reason, or a NaN fails the test."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.deploy.live import Fleet, running_fleet
from tests.deploy.test_dashboards import panels
from tests.deploy.test_rules import rules

# Grafana's variables, as Grafana would fill them for a dashboard over the run.
VARIABLES = {
    "$__rate_interval": "1m",
    "$__range": "5m",
    "$__interval": "1s",
    "$namespace": ".*",
    "$job": ".*",
    "$instance": ".*",
}

# (panel title, refId) -> why it may be empty after the run. Empty on purpose: every panel has data.
PANELS_THAT_MAY_BE_EMPTY: dict[tuple[str, str], str] = {}

# Alert -> why its expression (threshold removed) may be empty on healthy or failing traffic.
RULES_THAT_MAY_BE_EMPTY = {
    "TandemGatewayAbsent": "absent() has a series only when no gateway reports; "
    "test_absent_bites evaluates it for a job that is not scraped",
    "TandemSpendBurst": "its baseline is the day before the last hour, which a live run does not have; "
    "deploy/prometheus/alerts.test.yaml replays a day of spend and its burst",
    "TandemPrivacyExposure": "a value reaching the cloud on a route whose policy is not allow is a guard bug no "
    "traffic can produce; test_privacy_exposure_halves_have_series checks both sides of its join",
}


def promql(expr: str, route: str = ".*") -> str:
    for name, value in {**VARIABLES, "$route": route}.items():
        expr = expr.replace(name, value)
    return expr


def signal(expr: str) -> str:
    """The expression without its threshold (the last line of every rule is the threshold)."""
    lines = expr.strip().splitlines()
    if re.match(r"\s*(>|<|==|!=)", lines[-1]):
        return "\n".join(lines[:-1])
    return expr


@pytest.fixture(scope="module")
def fleet() -> Iterator[Fleet]:
    started = time.monotonic()
    with running_fleet() as running:
        running.ledger = {"trajectories": ledger_trajectories(running)}
        yield running
    assert time.monotonic() - started < 60, "the live Prometheus run must stay under a minute"


def ledger_trajectories(fleet: Fleet) -> list[dict[str, Any]]:
    reply = fleet.client.get(f"{fleet.healthy.url}/v1/trajectories", params={"limit": 500})
    assert reply.status_code == 200, reply.text
    found: list[dict[str, Any]] = reply.json()["data"]
    return found


def values(result: list[dict[str, Any]]) -> list[float]:
    return [float(sample["value"][1]) for sample in result]


def test_every_panel_query_has_data_and_no_nan(fleet: Fleet) -> None:
    problems = []
    checked = 0
    for panel in panels():
        for target in panel["targets"]:
            key = (panel["title"], target["refId"])
            try:
                result = fleet.prometheus.query(promql(target["expr"]), fleet.traffic_done_at)
            except ValueError as exc:
                problems.append(f"{key}: query error {exc}")
                continue
            checked += 1
            if not result and key not in PANELS_THAT_MAY_BE_EMPTY:
                problems.append(f"{key}: empty: {target['expr']}")
            if any(math.isnan(v) or math.isinf(v) for v in values(result)):
                problems.append(f"{key}: NaN or Inf: {target['expr']}")
    assert problems == []
    assert checked == sum(len(p["targets"]) for p in panels()) > 40


def test_every_rule_evaluates_and_has_a_series(fleet: Fleet) -> None:
    problems = []
    for rule in rules():
        full = fleet.prometheus.query(rule["expr"], fleet.traffic_done_at)  # parses and runs
        assert isinstance(full, list)
        result = fleet.prometheus.query(signal(rule["expr"]), fleet.traffic_done_at)
        if not result and rule["alert"] not in RULES_THAT_MAY_BE_EMPTY:
            problems.append(f"{rule['alert']}: empty: {signal(rule['expr'])}")
    assert problems == []


def test_absent_bites(fleet: Fleet) -> None:
    assert values(fleet.prometheus.query('absent(tandem_build_info{job="not-scraped"})')) == [1.0]


def test_privacy_exposure_halves_have_series(fleet: Fleet) -> None:
    exposed = fleet.prometheus.query('tandem_privacy_values_total{action="exposed"} > 0', fleet.traffic_done_at)
    assert {s["metric"]["route"] for s in exposed} == {"tandem/cloud"}
    strict = fleet.prometheus.query('tandem_route_info{privacy!="allow"}', fleet.traffic_done_at)
    assert {s["metric"]["route"] for s in strict} == {"tandem/redact", "tandem/block", "tandem/local"}
    # Exposure under `allow` does not alert: that policy measures, it does not forbid.
    rule = next(r for r in rules() if r["alert"] == "TandemPrivacyExposure")
    assert fleet.prometheus.query(rule["expr"], fleet.traffic_done_at) == []


def alerts_at(fleet: Fleet, moment: float) -> set[tuple[str, str]]:
    found = fleet.prometheus.query("ALERTS", moment)
    return {(s["metric"]["alertname"], s["metric"].get("instance") or s["metric"].get("route") or "") for s in found}


def test_alerts_are_per_gateway_and_per_route(fleet: Fleet) -> None:
    pending = alerts_at(fleet, fleet.traffic_done_at)
    sick, healthy = fleet.sick_instance, fleet.healthy_instance
    # The sick gateway's edge is down although the healthy one's edge answers in the same job.
    assert ("TandemEdgeDown", sick) in pending
    assert ("TandemEdgeDown", healthy) not in pending
    assert ("TandemStoreErrors", sick) in pending and ("TandemStoreErrors", healthy) not in pending
    # The sick gateway's edge does not answer its probe; the healthy one's does.
    assert ("TandemUpstreamUnreachable", sick) in pending
    assert ("TandemUpstreamUnreachable", healthy) not in pending
    # The strategies whose inner calls failed in a large share of their steps.
    failing = {route for name, route in pending if name == "TandemInnerCallsFailing"}
    assert {"tandem/entropy", "tandem/llm", "tandem/draft"} <= failing
    assert "tandem/judge" not in failing
    assert ("TandemFallbackRateHigh", "tandem/edge-failover") in pending
    # The sick replica's failovers lift its route's cloud share (both replicas together) above
    # the route's target, and the job's spend above the hourly threshold.
    assert ("TandemCloudShareAboveTarget", "tandem") in pending
    assert ("TandemCloudShareAboveTarget", "tandem/judge") not in pending
    assert ("TandemSpendRateHigh", "") in pending
    assert not {name for name, _ in pending} & {
        "TandemPrivacyExposure",
        "TandemGatewayDown",
        "TandemGatewayAbsent",
        "TandemUpstreamUnauthorised",
        "TandemStepErrorsHigh",
    }


def test_a_stopped_gateway_is_down(fleet: Fleet) -> None:
    assert ("TandemGatewayDown", fleet.sick_instance) in alerts_at(fleet, fleet.sick_down_at)
    assert ("TandemGatewayDown", fleet.healthy_instance) not in alerts_at(fleet, fleet.sick_down_at)


def test_metrics_equal_the_ledger(fleet: Fleet) -> None:
    trajectories = fleet.ledger["trajectories"]
    instance = f'instance="{fleet.healthy_instance}"'
    for metric, field in (
        ("tandem_cost_usd_total", "cost_usd"),
        ("tandem_counterfactual_cost_usd_total", "counterfactual_usd"),
    ):
        (observed,) = values(fleet.prometheus.query(f"sum({metric}{{{instance}}})", fleet.traffic_done_at))
        assert math.isclose(observed, sum(t[field] for t in trajectories), rel_tol=1e-9), metric
    (steps,) = values(fleet.prometheus.query(f"sum(tandem_steps_total{{{instance}}})", fleet.traffic_done_at))
    # Every begun step ends with one record and one count, a step the privacy policy refused too.
    assert sum(t["steps"] for t in trajectories) == steps
    # Each answered step under the target that answered it (StepRecord.answered_by), in both; a
    # refused or failed step is target="none" there and in neither total here.
    for target in ("edge", "cloud"):
        query = f'sum(tandem_steps_total{{{instance},target="{target}"}})'
        (answered,) = values(fleet.prometheus.query(query, fleet.traffic_done_at))
        assert answered == sum(t[f"{target}_steps"] for t in trajectories), target


def test_money_panels_follow_the_route_variable_and_the_selector_lists_every_route(fleet: Fleet) -> None:
    spent = next(p for p in panels() if p["title"] == "Spent")["targets"][0]["expr"]
    everything = values(fleet.prometheus.query(promql(spent), fleet.traffic_done_at))[0]
    llm = values(fleet.prometheus.query(promql(spent, "tandem/llm"), fleet.traffic_done_at))[0]
    assert 0 < llm < everything
    reply = fleet.prometheus.http.get("/api/v1/label/route/values", params={"match[]": "tandem_route_info"}).json()
    assert "tandem/block" in reply["data"], "a route whose steps were all blocked is still selectable"


def test_blocked_counts_values(fleet: Fleet) -> None:
    blocked = fleet.prometheus.query('sum(tandem_privacy_values_total{action="blocked"})', fleet.traffic_done_at)
    assert values(blocked) == [1.0]  # one e-mail address in one refused step


def test_the_exposed_stat_counts_every_value_the_first_of_each_kind_included(fleet: Fleet) -> None:
    # Each privacy series is at zero before the run (router/metrics/route_series.py), so increase() over
    # the range counts the first value too: the stat equals the counters' totals.
    stat = next(p for p in panels() if p["title"] == "Sensitive values exposed")["targets"][0]["expr"]
    (shown,) = values(fleet.prometheus.query(promql(stat), fleet.traffic_done_at))
    query = 'sum(tandem_privacy_values_total{action="exposed"})'
    (total,) = values(fleet.prometheus.query(query, fleet.traffic_done_at))
    assert total >= 1 and round(shown) == total

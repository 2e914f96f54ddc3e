"""Alert rules: promtool checks and unit-tests them; every expression parses and uses metrics
the gateway declares."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from router.metrics.core import Metrics
from tests.deploy.alert_scenarios import scenarios
from tests.deploy.tools import RULES, exposed, metric_names, missing_metrics, run_promtool

SCENARIOS = RULES.parent / "alerts.test.yaml"
# Every alert whose timing matters to an operator has scenarios in alerts.test.yaml: it fires on
# a busy route, stays silent below the volume guard, resolves within 2 minutes of the end.
RATIO_ALERTS = {
    "TandemStepErrorsHigh",
    "TandemFallbackRateHigh",
    "TandemInnerCallsFailing",
    "TandemJudgeFailing",
    "TandemEdgeDown",
    "TandemCloudShareAboveTarget",
}
TIMED_ALERTS = RATIO_ALERTS | {
    "TandemSpendRateHigh",
    "TandemSpendBurst",
    "TandemUpstreamUnreachable",
    "TandemUpstreamUnauthorised",
    "TandemEdgePoolFull",
    "TandemEdgeReplicaOut",
    "TandemJournalLost",
    "TandemOutageJournalInUse",
    "TandemStepsLost",
}


def rules() -> list[dict[str, Any]]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return [rule for group in groups for rule in group["rules"]]


def rule_exprs() -> list[str]:
    return [rule["expr"] for rule in rules()]


def test_promtool_check_rules() -> None:
    done = run_promtool("check", "rules", str(RULES))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS: 20 rules found" in done.stdout


def test_promtool_unit_tests_every_alert() -> None:
    done = run_promtool("test", "rules", "rules.test.yaml", cwd=RULES.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout
    text = (RULES.parent / "rules.test.yaml").read_text()
    alerts = {rule["alert"] for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]}
    tested = {alert for alert in alerts if f"alertname: {alert}\n" in text}
    assert tested == alerts, f"alerts without a promtool test: {sorted(alerts - tested)}"


def test_promtool_scenarios_fire_stay_silent_below_the_volume_and_resolve_within_two_minutes() -> None:
    done = run_promtool("test", "rules", SCENARIOS.name, cwd=RULES.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    tests = yaml.safe_load(SCENARIOS.read_text())["tests"]
    # The checked-in file is what the scenarios say (promtool's annotations aside).
    for test in tests:
        for check in test["alert_rule_test"]:
            for alert in check["exp_alerts"]:
                alert.pop("exp_annotations")
    assert tests == scenarios(), "run: python -m tests.deploy.alert_scenarios"
    # Each scenario's checks of one alert: (minute, how many label sets fire).
    checks: dict[str, list[tuple[float, int]]] = {}
    scenario_checks: dict[tuple[str, str], list[tuple[float, int]]] = {}
    for test in tests:
        for check in test["alert_rule_test"]:
            minutes = float(check["eval_time"].removesuffix("m"))
            checks.setdefault(check["alertname"], []).append((minutes, len(check["exp_alerts"])))
            scenario_checks.setdefault((test["name"], check["alertname"]), []).append(
                (minutes, len(check["exp_alerts"]))
            )
    assert set(checks) == TIMED_ALERTS
    for (_name, alert), timeline in scenario_checks.items():
        if alert not in RATIO_ALERTS:
            continue
        (_, quiet), *during, (after, resolved) = sorted(timeline)
        # Quiet before, only the busy (or failing) route during, nothing 2 minutes after the end.
        assert quiet == 0 and resolved == 0 and during and all(firing == 1 for _, firing in during), alert
        assert after - during[-1][0] <= 2, alert
    # A route whose every step fails alerts within 3 minutes of the start (the end of its
    # healthy stretch is the quiet check's minute + 1), and so does one beside a busy block
    # route whose refusals on purpose (status="refused") fire nothing.
    errors = [timeline for (_, alert), timeline in scenario_checks.items() if alert == "TandemStepErrorsHigh"]
    assert len(errors) == 2
    for timeline in errors:
        (start, _), (first, _), *_ = sorted(timeline)
        assert first - (start + 1) <= 3
    refusals = next(t for t in tests if "block route" in t["name"])
    fired = {e["exp_labels"]["route"] for check in refusals["alert_rule_test"] for e in check["exp_alerts"]}
    assert fired == {"failing"}
    assert any(
        'route="blocking"' in s["series"] and 'status="refused"' in s["series"] for s in refusals["input_series"]
    )
    # Both spend alerts see their burst within 10 minutes of its start (each burst starts at
    # the minute after the last quiet check).
    for alert in ("TandemSpendRateHigh", "TandemSpendBurst"):
        (quiet, none), (seen, fired) = sorted(checks[alert])
        assert none == 0 and fired == 1 and seen - (quiet + 1) <= 10, alert


def test_rule_tests_replay_recorded_series_and_fire_the_alerts_of_that_run() -> None:
    text = (RULES.parent / "rules.test.yaml").read_text()
    assert text.startswith("# Generated by `python -m tests.deploy.record_series`")
    (test,) = yaml.safe_load(text)["tests"]
    # Series as a real scrape labels them (job and instance), not made up.
    assert all('job="tandem"' in s["series"] and 'instance="' in s["series"] for s in test["input_series"])
    firing = {
        (t["alertname"], e["exp_labels"].get("instance") or e["exp_labels"].get("route"))
        for t in test["alert_rule_test"]
        for e in t["exp_alerts"]
    }
    assert ("TandemEdgeDown", "sick:8080") in firing and ("TandemEdgeDown", "healthy:8080") not in firing
    assert ("TandemGatewayDown", "sick:8080") in firing
    assert ("TandemInnerCallsFailing", "tandem/entropy") in firing
    assert ("TandemCloudShareAboveTarget", "tandem") in firing
    assert {name for name, _ in firing} >= {"TandemFallbackRateHigh", "TandemStoreErrors", "TandemSpendRateHigh"}


def test_rules_use_only_metrics_the_gateway_declares() -> None:
    declared, _ = exposed(Metrics().exposition().decode())
    declared.add("up")  # Prometheus' own, per scrape target
    assert missing_metrics(rule_exprs(), declared) == {}
    assert all(metric_names(expr) for expr in rule_exprs())


def test_the_missing_metric_check_bites() -> None:
    declared, _ = exposed(Metrics().exposition().decode())
    missing = missing_metrics(["sum(rate(tandem_no_such_thing_total[5m]))"], declared)
    assert missing == {"sum(rate(tandem_no_such_thing_total[5m]))": {"tandem_no_such_thing_total"}}


def test_a_dead_edge_replica_fires_although_its_breaker_flaps(tmp_path: Path) -> None:
    # One replica of a pool out (TandemUpstreamUnreachable and TandemEdgeDown stay silent then):
    # alerts.test.yaml's pool scenario. r0 died and is tried again each time its breaker's wait is
    # over (available one scrape in three), r2's breaker stayed open; r1 fails one call in four
    # and gateway b's replica is out 5 minutes at a time.
    (test,) = [t for t in scenarios() if t["name"].startswith("TandemEdgeReplicaOut")]
    (checked_in,) = [t for t in yaml.safe_load(SCENARIOS.read_text())["tests"] if t["name"] == test["name"]]
    (tmp_path / RULES.name).write_text(RULES.read_text())
    document = {"rule_files": [RULES.name], "evaluation_interval": "1m", "tests": [checked_in]}
    (tmp_path / "replica.test.yaml").write_text(yaml.safe_dump(document, sort_keys=False, width=200))
    done = run_promtool("test", "rules", "replica.test.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    firing = {
        check["eval_time"]: sorted(e["exp_labels"]["replica"] for e in check["exp_alerts"])
        for check in test["alert_rule_test"]
    }
    out = ["http://r0:8000/v1", "http://r2:8000/v1"]
    assert firing == {"19m": [], "29m": [], "36m": out, "49m": out, "52m": []}
    r0 = next(
        s["values"]
        for s in test["input_series"]
        if s["series"].startswith('tandem_edge_replica_available{job="tandem",instance="a:8080",replica="http://r0')
    )
    assert "0 0 1" in r0, "r0's availability flaps while it is out"
    rule = next(r for r in rules() if r["alert"] == "TandemEdgeReplicaOut")
    assert metric_names(rule["expr"]) == {
        "tandem_edge_replica_available",
        "tandem_edge_replica_failures_total",
        "tandem_edge_replica_steps_total",
    }
    assert rule["for"] == "10m" and rule["labels"]["severity"] == "warning"

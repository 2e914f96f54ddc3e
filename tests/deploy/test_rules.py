"""Alert rules: promtool checks and unit-tests them; every expression parses and uses metrics
the gateway declares."""

from __future__ import annotations

import yaml

from router.metrics import Metrics
from tests.deploy.tools import RULES, exposed, metric_names, missing_metrics, run_promtool


def rule_exprs() -> list[str]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return [rule["expr"] for group in groups for rule in group["rules"]]


def test_promtool_check_rules() -> None:
    done = run_promtool("check", "rules", str(RULES))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS: 9 rules found" in done.stdout


def test_promtool_unit_tests_every_alert() -> None:
    done = run_promtool("test", "rules", "rules.test.yaml", cwd=RULES.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout
    text = (RULES.parent / "rules.test.yaml").read_text()
    alerts = {rule["alert"] for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]}
    tested = {alert for alert in alerts if f"alertname: {alert}\n" in text}
    assert tested == alerts, f"alerts without a promtool test: {sorted(alerts - tested)}"


def test_rules_use_only_metrics_the_gateway_declares() -> None:
    declared, _ = exposed(Metrics().exposition().decode())
    assert missing_metrics(rule_exprs(), declared) == {}
    assert all(metric_names(expr) for expr in rule_exprs())


def test_the_missing_metric_check_bites() -> None:
    declared, _ = exposed(Metrics().exposition().decode())
    missing = missing_metrics(["sum(rate(tandem_no_such_thing_total[5m]))"], declared)
    assert missing == {"sum(rate(tandem_no_such_thing_total[5m]))": {"tandem_no_such_thing_total"}}

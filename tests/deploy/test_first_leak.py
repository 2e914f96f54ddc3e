"""The privacy alert sees the first leak of a kind on a route.

A real gateway is scraped before and after one cloud step carrying an e-mail address on an
`allow` route (the one mode where a value reaches the cloud by design); the two scrapes become a
promtool test input, a minute apart, and promtool evaluates the alert rules on them.
TandemPrivacyExposure is about routes whose policy is not `allow`, where a leak is a guard that
failed (no traffic can produce one on purpose): the scraped leak stands in for it, with the
route's `tandem_route_info` relabelled to `redact`. Three cases: the scrapes as they are (the
zero before the leak makes `increase()` count it: the alert fires), the same series born at the
leak as they were before every series started at zero (no alert: the bug), and the route's own
policy (`allow`: measured, not alerted on).
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import yaml

from tests.deploy.alert_scenarios import fill_annotations
from tests.deploy.test_series import scrape
from tests.deploy.tools import RULES, promtool
from tests.gateway_server import GatewayServer

ROUTE = "tandem/cloud"  # a built-in route: strategy cloud, privacy allow
MINUTES = 15
INSTANCE = {"job": "tandem", "instance": "gateway:8080"}


def _series(name: str, labels: frozenset[tuple[str, str]], values: str, **relabel: str) -> dict[str, str]:
    pairs = {**dict(labels), **INSTANCE, **relabel}
    inner = ",".join(f'{key}="{value}"' for key, value in sorted(pairs.items()))
    return {"series": f"{name}{{{inner}}}", "values": values}


def _case(name: str, inputs: list[dict[str, str]], firing: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "name": name,
        "interval": "1m",
        "input_series": inputs,
        "alert_rule_test": [
            {"eval_time": "3m", "alertname": "TandemPrivacyExposure", "exp_alerts": [{"exp_labels": f} for f in firing]}
        ],
    }


def test_the_privacy_alert_fires_on_the_first_leak_scraped_off_a_real_gateway(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client
) -> None:
    server = make_gateway()
    before = scrape(client, server)
    body = {"model": ROUTE, "messages": [{"role": "user", "content": "mail the report to alice@example.com"}]}
    reply = client.post(f"{server.url}/v1/chat/completions", json=body, headers={"X-Session-ID": "leak"})
    assert reply.status_code == 200, reply.text
    after = scrape(client, server)

    leaked = frozenset({("route", ROUTE), ("type", "EMAIL"), ("action", "exposed")})
    privacy_before = before["tandem_privacy_values_total"]
    privacy_after = after["tandem_privacy_values_total"]
    assert privacy_before[leaked] == 0 and privacy_after[leaked] == 1
    ours = [labels for labels in privacy_after if ("route", ROUTE) in labels]
    assert set(ours) <= set(privacy_before), "a privacy series of the route was born by the leak"
    (info,) = [labels for labels in after["tandem_route_info"] if ("route", ROUTE) in labels]
    assert ("privacy", "allow") in info

    def counters(born_at_leak: bool) -> list[dict[str, str]]:
        # Before every series started at zero, none of the route's existed until its first value.
        series = []
        for labels in ours:
            start = "_" if born_at_leak else f"{privacy_before[labels]:g}"
            series.append(
                _series("tandem_privacy_values_total", labels, f"{start} {privacy_after[labels]:g}x{MINUTES}")
            )
        return series

    def route_info(privacy: str) -> dict[str, str]:
        return _series("tandem_route_info", info, f"1x{MINUTES + 1}", privacy=privacy)

    alert = {**INSTANCE, "route": ROUTE, "type": "EMAIL", "severity": "critical"}
    alert.pop("instance")  # the rule aggregates per job and route
    document = {
        "rule_files": [RULES.name],
        "evaluation_interval": "1m",
        "tests": [
            _case("the first leak, its series at zero before it", [*counters(False), route_info("redact")], [alert]),
            _case("the same leak on series born at their first event", [*counters(True), route_info("redact")], []),
            _case("the same leak under the route's own policy (allow)", [*counters(False), route_info("allow")], []),
        ],
    }
    fill_annotations(document)  # raises unless promtool fired exactly the expected alerts
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / RULES.name).write_text(RULES.read_text())
        (Path(folder) / "leak.test.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
        done = subprocess.run(
            [promtool(), "test", "rules", "leak.test.yaml"], cwd=folder, capture_output=True, text=True
        )
    assert done.returncode == 0, done.stdout + done.stderr
    notes = document["tests"][0]["alert_rule_test"][0]["exp_alerts"][0]["exp_annotations"]
    assert notes["summary"] == f"Sensitive values of type EMAIL reached the cloud on route {ROUTE}"

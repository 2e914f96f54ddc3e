"""Dashboards as code: the checked-in JSON is what the generator writes, every expression is
valid PromQL, and every metric a panel uses is on /metrics after real traffic."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.deploy.tools import (
    CHART,
    DEPLOY,
    ROOT,
    exposed,
    generator,
    grafana_to_promql,
    metric_names,
    missing_metrics,
)
from tests.deploy.traffic import ROUTES, drive
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

# Metrics that must have samples (not only a declaration) after `drive`.
SAMPLED_AFTER_TRAFFIC = {
    "tandem_steps_total",
    "tandem_route_info",
    "tandem_route_cloud_share_target",
    "tandem_tokens_total",
    "tandem_cost_usd_total",
    "tandem_counterfactual_cost_usd_total",
    "tandem_step_latency_seconds_bucket",
    "tandem_time_to_first_token_seconds_bucket",
    "tandem_fallbacks_total",
    "tandem_upstream_errors_total",
    "tandem_bad_requests_total",
    "tandem_trajectories_closed_total",
    "tandem_trajectory_steps_bucket",
    "tandem_trajectory_cost_usd_sum",
    "tandem_trajectory_cloud_share_count",
    "tandem_trajectory_savings_usd_sum",
    "tandem_judge_latency_seconds_count",
    "tandem_judge_score_bucket",
    "tandem_privacy_values_total",
    "tandem_trajectory_privacy_score_count",
    "tandem_active_trajectories",
    "tandem_build_info",
}


def dashboards() -> dict[str, dict[str, Any]]:
    return {name: json.loads(text) for name, text in generator().build_all().items()}


def panels() -> list[dict[str, Any]]:
    return [p for board in dashboards().values() for p in board["panels"] if p["type"] != "row"]


def exprs() -> list[str]:
    return [target["expr"] for panel in panels() for target in panel["targets"]]


@pytest.mark.parametrize("folder", [DEPLOY / "grafana" / "dashboards", CHART / "dashboards"])
def test_checked_in_dashboards_are_what_the_generator_writes(folder: Any) -> None:
    generated = generator().build_all()
    on_disk = {path.name: path.read_text() for path in folder.glob("*.json")}
    assert sorted(on_disk) == sorted(generated), "run: python -m tools.dashboards"
    for name, text in generated.items():
        assert on_disk[name] == text, f"{folder / name} is stale: run python -m tools.dashboards"


def test_generator_check_mode_agrees() -> None:
    assert generator().main(["--check"]) == 0


def test_dashboards_cover_the_issue_and_are_well_formed() -> None:
    boards = dashboards()
    overview = boards["tandem-overview.json"]
    titles = {p["title"] for p in overview["panels"]}
    for wanted in (
        "Spend and savings rate",
        "Cloud share by route",
        "Decisions by reason",
        "Step latency by target",
        "Time to first token by target",
        "Judge latency",
        "Fallbacks",
        "Exposed to the cloud by type",
    ):
        assert wanted in titles
    for board in boards.values():
        ids = [p["id"] for p in board["panels"]]
        assert len(ids) == len(set(ids)), "panel ids must be unique"
        assert [v["name"] for v in board["templating"]["list"]] == [
            "datasource",
            "namespace",
            "job",
            "instance",
            "route",
        ]
    for panel in panels():
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel["description"], panel["title"]
        assert [t["refId"] for t in panel["targets"]] == [chr(ord("A") + i) for i in range(len(panel["targets"]))]


def test_every_expression_is_valid_promql() -> None:
    import promql_parser

    assert len(exprs()) > 30
    for expr in exprs():
        try:
            promql_parser.parse(grafana_to_promql(expr))
        except Exception as exc:  # the parser raises ValueError with the position
            pytest.fail(f"invalid PromQL in a panel: {expr}\n{exc}")
        assert metric_names(expr), f"no tandem metric in {expr}"


def selectors(expr: str) -> list[Any]:
    """The metric selectors of a panel's expression, its regex variables read as `$scope`."""
    import promql_parser

    found: list[Any] = []

    def visit(node: Any) -> bool:
        if isinstance(node, promql_parser.VectorSelector) and node.name:
            found.append(node)
        return True

    promql_parser.walk(promql_parser.parse(grafana_to_promql(expr).replace(".*", "$scope")), visit)
    return found


def unscoped(expr: str) -> list[str]:
    """Metrics of `expr` whose selector lacks a namespace, job or instance variable filter."""
    missing = []
    for selector in selectors(expr):
        matchers = {(m.name, str(m.op), m.value) for m in selector.matchers.matchers}
        scoped = {name for name, op, value in matchers if value == "$scope" and op.endswith("Re")}
        if not {"namespace", "job", "instance"} <= scoped:
            missing.append(selector.name)
    return missing


def test_every_selector_filters_on_the_namespace_job_and_instance_variables() -> None:
    assert sum(len(selectors(expr)) for expr in exprs()) > 60
    assert [(expr, unscoped(expr)) for expr in exprs() if unscoped(expr)] == []
    # The check bites: a replica filter missing, or not the variable.
    assert unscoped('sum(tandem_steps_total{namespace=~"$namespace",job=~"$job"})') == ["tandem_steps_total"]
    assert unscoped('max(tandem_active_trajectories{namespace=~"$namespace",job=~"$job",instance="a"})') == [
        "tandem_active_trajectories"
    ]
    # And the variables chain: each offers the values the ones before it leave.
    variables = dashboards()["tandem-overview.json"]["templating"]["list"]
    queries = {v["name"]: v.get("query") for v in variables}
    assert queries["instance"] == 'label_values(tandem_build_info{namespace=~"$namespace",job=~"$job"}, instance)'
    assert 'instance=~"$instance"' in queries["route"]


def test_route_labelled_queries_filter_on_the_route_variable() -> None:
    for expr in exprs():
        uses_route = any(re.search(rf"{name}\{{[^}}]*route=~\"\$route\"", expr) for name in metric_names(expr))
        route_metrics = {"tandem_steps_total", "tandem_trajectories_closed_total", "tandem_fallbacks_total"}
        if metric_names(expr) & route_metrics and "by (upstream" not in expr:
            assert uses_route, f"a route-labelled query without the $route filter: {expr}"


def test_every_panel_metric_is_on_metrics_after_real_traffic(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client, edge: FakeUpstream
) -> None:
    server = make_gateway(routes=ROUTES)
    drive(client, server, edge)
    text = client.get(f"{server.url}/metrics").text
    declared, sampled = exposed(text)
    assert missing_metrics(exprs(), declared) == {}
    assert SAMPLED_AFTER_TRAFFIC - sampled == set()
    # And the check bites: a panel on a metric the gateway does not have is reported.
    assert missing_metrics(["sum(rate(tandem_steps_totl[5m]))"], declared) == {
        "sum(rate(tandem_steps_totl[5m]))": {"tandem_steps_totl"}
    }


def test_the_docs_explain_every_panel() -> None:
    page = (ROOT / "docs" / "operations" / "observability.md").read_text()
    unexplained = [p["title"] for p in panels() if f"**{p['title']}**" not in page]
    assert unexplained == [], "docs/operations/observability.md should explain these panels"


def test_the_edge_pool_row_shows_each_replicas_availability_failures_and_rehomes() -> None:
    # A replica out of the pool (its breaker open, its calls failing) shows on a panel of its own,
    # beside the alert TandemEdgeReplicaOut.
    board = dashboards()["tandem-overview.json"]["panels"]
    start = next(i for i, p in enumerate(board) if p["type"] == "row" and p["title"] == "Edge pool") + 1
    end = next(i for i, p in enumerate(board) if i >= start and p["type"] == "row")
    in_row = board[start:end]
    (panel,) = [p for p in in_row if p["title"] == "Replica availability, failures and re-homes"]
    used = [metric_names(t["expr"]) for t in panel["targets"]]
    assert used == [
        {"tandem_edge_replica_available"},
        {"tandem_edge_replica_failures_total"},
        {"tandem_edge_rehomes_total"},
    ]
    assert "by (replica)" in panel["targets"][0]["expr"] and "by (replica, kind)" in panel["targets"][1]["expr"]
    assert "by (reason)" in panel["targets"][2]["expr"]

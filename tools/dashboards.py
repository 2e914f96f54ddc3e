"""Tandem's Grafana dashboards as code (grafana-foundation-sdk).

    python -m tools.dashboards          # write the JSON files
    python -m tools.dashboards --check  # exit 1 if a checked-in file differs

Writes `deploy/grafana/dashboards/*.json` (provisioned by the compose stack) and the same files
under `helm/tandem/dashboards/` (the chart ships them as a ConfigMap for Grafana's sidecar; Helm
can only read files inside the chart). Every query filters on the `$namespace`, `$job` and
`$instance` variables (one replica, one deployment, or all of them: a sick replica is not
averaged away with a healthy one), and on `$route` where the metric has a route label;
`$datasource` picks the Prometheus data source.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from grafana_foundation_sdk.builders import common as common_builders
from grafana_foundation_sdk.builders.dashboard import Dashboard as DashboardBuilder
from grafana_foundation_sdk.builders.dashboard import DatasourceVariable, QueryVariable, Row
from grafana_foundation_sdk.builders.prometheus import Dataquery
from grafana_foundation_sdk.builders.stat import Panel as StatPanel
from grafana_foundation_sdk.builders.timeseries import Panel as TimeseriesPanel
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import common
from grafana_foundation_sdk.models.dashboard import DataSourceRef, DynamicConfigValue, VariableRefresh, VariableSort

ROOT = Path(__file__).resolve().parents[1]
OUTPUTS = (ROOT / "deploy" / "grafana" / "dashboards", ROOT / "helm" / "tandem" / "dashboards")
DATASOURCE = DataSourceRef(type_val="prometheus", uid="${datasource}")
R = 'route=~"$route"'  # the route filter every route-labelled query carries
# The scrape target filter every selector carries (added by `_q`): Prometheus' job and
# instance, and the Kubernetes namespace where the ServiceMonitor adds one.
SCOPE = 'namespace=~"$namespace",job=~"$job",instance=~"$instance"'
SCOPE_VARIABLES = ("namespace", "job", "instance")
_SELECTOR = re.compile(r"\b(tandem_[a-z_]+)(\{([^}]*)\})?")
RATE = "$__rate_interval"


@dataclass(frozen=True)
class Query:
    expr: str
    legend: str = ""


@dataclass(frozen=True)
class Panel:
    title: str
    description: str
    queries: tuple[Query, ...]
    unit: str = "short"
    kind: str = "timeseries"  # or "stat"
    width: int = 12
    stacked: bool = False
    dashed: str = ""  # a regex of series names drawn dashed (targets, thresholds)


@dataclass(frozen=True)
class Section:
    title: str
    panels: tuple[Panel, ...] = field(default_factory=tuple)


def _scoped(expr: str) -> str:
    """`expr` with the scrape target filter in every tandem_ metric's selector."""

    def scope(match: re.Match[str]) -> str:
        matchers = match.group(3)
        return f"{match.group(1)}{{{SCOPE},{matchers}}}" if matchers else f"{match.group(1)}{{{SCOPE}}}"

    return _SELECTOR.sub(scope, expr)


def _q(expr: str, legend: str = "") -> Query:
    return Query(_scoped(" ".join(expr.split())), legend)


def _quantiles(
    metric: str, by: str, selector: str = "", quantiles: tuple[float, ...] = (0.5, 0.95)
) -> tuple[Query, ...]:
    # Only series that had observations in the window: a quantile of no observations is NaN.
    return tuple(
        _q(
            f"histogram_quantile({q}, sum by (le, {by}) (rate({metric}_bucket{{{selector}}}[{RATE}])))"
            f" and on ({by}) (sum by ({by}) (rate({metric}_count{{{selector}}}[{RATE}])) > 0)",
            f"p{int(q * 100)} {{{{{by}}}}}",
        )
        for q in quantiles
    )


def _mean(metric: str, by: str = "route", numerator: str = "") -> str:
    """Mean per observation of a histogram over the rate window; routes without observations
    are left out (0/0 would be NaN). `numerator` replaces the plain sum (net savings)."""
    top = numerator or f"sum by ({by}) (rate({metric}_sum{{{R}}}[{RATE}]))"
    return f"{top} / (sum by ({by}) (rate({metric}_count{{{R}}}[{RATE}])) > 0)"


SAVED = (
    f"sum(increase(tandem_counterfactual_cost_usd_total{{{R}}}[$__range]))"
    f" - sum(increase(tandem_cost_usd_total{{{R}}}[$__range]))"
)
# Of the answered steps (the ledger's cloud share): refused, failed and cancelled steps are
# target="none" and count in neither part.
# Per replica too: one sick replica's failovers show as its own line, not as half of an average.
CLOUD_SHARE = (
    f'sum by (route, instance) (rate(tandem_steps_total{{target="cloud",{R}}}[{RATE}]))'
    f' / (sum by (route, instance) (rate(tandem_steps_total{{target!="none",{R}}}[{RATE}])) > 0)'
)

OVERVIEW = (
    Section(
        "Money",
        (
            Panel(
                "Spent",
                "Dollars spent on both targets over the selected range (inner calls included).",
                (_q(f"sum(increase(tandem_cost_usd_total{{{R}}}[$__range]))"),),
                "currencyUSD",
                "stat",
                6,
            ),
            Panel(
                "All-cloud counterfactual",
                "What the same steps would have cost had every one gone to the cloud (its prompt cache modelled).",
                (_q(f"sum(increase(tandem_counterfactual_cost_usd_total{{{R}}}[$__range]))"),),
                "currencyUSD",
                "stat",
                6,
            ),
            Panel(
                "Saved",
                "Counterfactual minus spent over the range: the money routing kept.",
                (_q(SAVED),),
                "currencyUSD",
                "stat",
                6,
            ),
            Panel(
                "Cloud share of steps",
                "Share of the selected routes' answered steps the cloud answered over the range.",
                (
                    _q(
                        f'sum(increase(tandem_steps_total{{target="cloud",{R}}}[$__range]))'
                        f' / (sum(increase(tandem_steps_total{{target!="none",{R}}}[$__range])) > 0)'
                    ),
                ),
                "percentunit",
                "stat",
                6,
            ),
            Panel(
                "Spend and savings rate",
                "Dollars per hour: spent by target, the all-cloud counterfactual, "
                "and their difference (savings; negative when inner calls cost more than they saved).",
                (
                    _q(f"sum by (target) (rate(tandem_cost_usd_total{{{R}}}[{RATE}])) * 3600", "spent {{target}}"),
                    _q(f"sum(rate(tandem_counterfactual_cost_usd_total{{{R}}}[{RATE}])) * 3600", "all-cloud"),
                    _q(
                        f"(sum(rate(tandem_counterfactual_cost_usd_total{{{R}}}[{RATE}]))"
                        f" - sum(rate(tandem_cost_usd_total{{{R}}}[{RATE}]))) * 3600",
                        "saved",
                    ),
                ),
                "currencyUSD",
                width=12,
            ),
            Panel(
                "Tokens by target and kind",
                "Tokens per second the upstreams reported, inner calls included: prompt (cached included), "
                "cached, completion.",
                (_q(f"sum by (target, kind) (rate(tandem_tokens_total{{{R}}}[{RATE}]))", "{{target}} {{kind}}"),),
                "short",
                width=12,
            ),
        ),
    ),
    Section(
        "Routing",
        (
            Panel(
                "Cloud share by route",
                "Share of each route's answered steps the cloud answered, per replica (instance); dashed: "
                "the route's intended share "
                "(target_cloud_share, else constraints.max_cloud_share, else p for random).",
                (
                    _q(CLOUD_SHARE, "{{route}} {{instance}}"),
                    _q(f"max by (route) (tandem_route_cloud_share_target{{{R}}})", "target {{route}}"),
                ),
                "percentunit",
                dashed="target .*",
            ),
            Panel(
                "Decisions by reason",
                "Steps per second by why they went where they went (the x-tandem-reason header) and by target.",
                (_q(f"sum by (reason, target) (rate(tandem_steps_total{{{R}}}[{RATE}]))", "{{reason}} → {{target}}"),),
                "reqps",
                stacked=True,
            ),
            Panel(
                "Steps by route and status",
                "Steps per second per route: ok, error (the step failed for the client), refused (the route's "
                "privacy policy blocked it on purpose), cancelled (the client went away).",
                (_q(f"sum by (route, status) (rate(tandem_steps_total{{{R}}}[{RATE}]))", "{{route}} {{status}}"),),
                "reqps",
            ),
            Panel(
                "Active trajectories",
                "Trajectories begun and not yet closed (by outcome or idle).",
                (_q("max(tandem_active_trajectories)"),),
                "short",
                "stat",
                6,
            ),
            Panel(
                "Trajectories closed",
                "Runs closed over the range, by reason (outcome reported, idle).",
                (_q(f"sum(increase(tandem_trajectories_closed_total{{{R}}}[$__range]))"),),
                "short",
                "stat",
                6,
            ),
        ),
    ),
    Section(
        "Latency",
        (
            Panel(
                "Step latency by target",
                "Request to last byte, p50 and p95, by the target that answered.",
                _quantiles("tandem_step_latency_seconds", "target"),
                "s",
            ),
            Panel(
                "Time to first token by target",
                "Request to the upstream's first byte, p50 and p95.",
                _quantiles("tandem_time_to_first_token_seconds", "target"),
                "s",
            ),
            Panel(
                "Judge latency",
                "The ONNX judge's time per step (features and inference), p50 and p99.",
                tuple(
                    _q(
                        f"histogram_quantile({q}, sum by (le) (rate(tandem_judge_latency_seconds_bucket[{RATE}])))"
                        f" and on () (sum(rate(tandem_judge_latency_seconds_count[{RATE}])) > 0)",
                        f"p{int(q * 100)}",
                    )
                    for q in (0.5, 0.99)
                ),
                "s",
            ),
            Panel(
                "Judge score by route",
                "Median and p90 of the judge's scores (higher: the step needs the cloud more).",
                _quantiles("tandem_judge_score", "route", R, (0.5, 0.9)),
                "percentunit",
            ),
        ),
    ),
    Section(
        "Edge pool",
        (
            Panel(
                "Steps placed per replica",
                "Steps placed first on each edge replica (upstreams.edge.endpoints), per second; with balance: "
                "affinity each trajectory stays on its home replica.",
                (_q(f"sum by (replica) (rate(tandem_edge_replica_steps_total[{RATE}]))", "{{replica}}"),),
                "reqps",
                width=6,
            ),
            Panel(
                "Replica availability, failures and re-homes",
                "Per replica: 1 while its breaker lets steps through in every gateway process, 0 while it is out "
                "in one (a dead replica flaps: it is tried again each time its breaker's wait is over); its failed "
                "calls per second by kind; and the runs given a new home per second, by reason. A replica out for "
                "10 minutes fires TandemEdgeReplicaOut.",
                (
                    _q("min by (replica) (tandem_edge_replica_available)", "{{replica}} available"),
                    _q(
                        f"sum by (replica, kind) (rate(tandem_edge_replica_failures_total[{RATE}]))",
                        "{{replica}} {{kind}} failures/s",
                    ),
                    _q(f"sum by (reason) (rate(tandem_edge_rehomes_total[{RATE}]))", "re-homed: {{reason}}"),
                ),
                "short",
                width=6,
            ),
            Panel(
                "In flight and queued per replica",
                "Steps the gateways have in flight on each replica, and the requests waiting in its own queue "
                "(vLLM's num_requests_waiting, read from its /metrics).",
                (
                    _q("sum by (replica) (tandem_edge_replica_in_flight)", "{{replica}} in flight"),
                    _q("max by (replica) (tandem_edge_replica_waiting)", "{{replica}} waiting"),
                ),
                "short",
                width=6,
            ),
            Panel(
                "Prefix-cache hits and KV cache per replica",
                "Share of prompt tokens each replica served from its prefix cache (between two reads of its "
                "metrics), and its KV-cache usage.",
                (
                    _q("max by (replica) (tandem_edge_replica_prefix_cache_hit_ratio)", "{{replica}} prefix hits"),
                    _q("max by (replica) (tandem_edge_replica_kv_cache_usage)", "{{replica}} KV cache"),
                ),
                "percentunit",
                width=6,
            ),
            Panel(
                "Estimated wait per replica",
                "How long a request queued at each replica now would wait: its waiting requests x the time a "
                "request runs there / its requests running (what a route's edge_full_wait_s is held to).",
                (_q("max by (replica) (tandem_edge_replica_estimated_wait_seconds)", "{{replica}}"),),
                "s",
                width=6,
            ),
            Panel(
                "Spilled to the cloud for load",
                "Edge steps sent to the cloud because every replica's queue was full (edge_full: cloud), per "
                "second by route; and 1 while the pool is full.",
                (
                    _q(f"sum by (route) (rate(tandem_edge_load_spills_total{{{R}}}[{RATE}]))", "{{route}}"),
                    _q("max(tandem_edge_pool_full)", "pool full"),
                ),
                "short",
                width=6,
            ),
        ),
    ),
    Section(
        "Failures",
        (
            Panel(
                "Fallbacks",
                "Steps whose target failed before the first byte and that the other "
                "target answered, by route, direction and failure kind.",
                (
                    _q(
                        f"sum by (route, from_target, to_target, kind) (rate(tandem_fallbacks_total{{{R}}}[{RATE}]))",
                        "{{route}} {{from_target}}→{{to_target}} {{kind}}",
                    ),
                ),
                "reqps",
            ),
            Panel(
                "Upstream errors",
                "Failed upstream calls, inner calls included, by upstream and kind "
                "(connect, timeout, disconnected, status, invalid_answer).",
                (_q(f"sum by (upstream, kind) (rate(tandem_upstream_errors_total[{RATE}]))", "{{upstream}} {{kind}}"),),
                "reqps",
            ),
            Panel(
                "Strategy and judge failures",
                "Inner calls that failed and took the strategy's "
                "fallback (by route), and ONNX judge failures (by kind).",
                (
                    _q(
                        f"sum by (route, kind) (rate(tandem_policy_failures_total{{{R}}}[{RATE}]))",
                        "{{route}} {{kind}}",
                    ),
                    _q(f"sum by (kind) (rate(tandem_judge_failures_total[{RATE}]))", "judge {{kind}}"),
                ),
                "reqps",
            ),
            Panel(
                "Store errors and bad requests",
                "Trajectory store (Redis) failures by operation, and "
                "requests refused with a 4xx before routing, by code.",
                (
                    _q(f"sum by (operation) (rate(tandem_store_errors_total[{RATE}]))", "store {{operation}}"),
                    _q(f"sum by (code) (rate(tandem_bad_requests_total[{RATE}]))", "4xx {{code}}"),
                ),
                "reqps",
            ),
            Panel(
                "Kept responses",
                "Responses API answers kept for previous_response_id (in Redis, or in the answering process "
                "only), conversations continued, and ids named that were not kept (a 400), by event.",
                (_q(f"sum by (event) (rate(tandem_kept_responses_total[{RATE}]))", "{{event}}"),),
                "reqps",
            ),
        ),
    ),
    Section(
        "Privacy",
        (
            Panel(
                "Sensitive values exposed",
                "Sensitive values the cloud received over the range.",
                (_q(f'sum(increase(tandem_privacy_values_total{{action="exposed",{R}}}[$__range]))'),),
                "short",
                "stat",
                6,
            ),
            Panel(
                "Sensitive values blocked",
                "Sensitive values in cloud steps that a route's privacy: block policy refused (403), over the range.",
                (_q(f'sum(increase(tandem_privacy_values_total{{action="blocked",{R}}}[$__range]))'),),
                "short",
                "stat",
                6,
            ),
            Panel(
                "Privacy score per run",
                "Mean privacy score of the trajectories closed over the range (1: nothing sensitive reached "
                "the cloud); no value when none closed.",
                (
                    _q(
                        f"sum(increase(tandem_trajectory_privacy_score_sum{{{R}}}[$__range]))"
                        f" / (sum(increase(tandem_trajectory_privacy_score_count{{{R}}}[$__range])) > 0)"
                    ),
                ),
                "percentunit",
                "stat",
                6,
            ),
            Panel(
                "Detection failures",
                "Privacy scans that failed (the step was treated as sensitive).",
                (_q("sum(increase(tandem_privacy_failures_total[$__range]))"),),
                "short",
                "stat",
                6,
            ),
            Panel(
                "Sensitive values by action",
                "Per second: detected, redacted (placeholders sent), exposed (reached the cloud), blocked.",
                (_q(f"sum by (action) (rate(tandem_privacy_values_total{{{R}}}[{RATE}]))", "{{action}}"),),
                "short",
            ),
            Panel(
                "Exposed to the cloud by type",
                "Sensitive values that reached the cloud, by type.",
                (
                    _q(
                        f'sum by (type) (rate(tandem_privacy_values_total{{action="exposed",{R}}}[{RATE}]))',
                        "{{type}}",
                    ),
                ),
                "short",
                stacked=True,
            ),
        ),
    ),
)

TRAJECTORIES = (
    Section(
        "Per run (closed trajectories)",
        (
            Panel(
                "Closed runs by reason",
                "Trajectories closed per second, by reason and route.",
                (
                    _q(
                        f"sum by (reason, route) (rate(tandem_trajectories_closed_total{{{R}}}[{RATE}]))",
                        "{{route}} {{reason}}",
                    ),
                ),
                "reqps",
            ),
            Panel(
                "Steps per run",
                "Median and p95 of the steps in a closed run, by route.",
                _quantiles("tandem_trajectory_steps", "route", R),
                "short",
            ),
            Panel(
                "Cloud share per run",
                "Median and p95 of a run's cloud share, by route.",
                _quantiles("tandem_trajectory_cloud_share", "route", R),
                "percentunit",
            ),
            Panel(
                "Cost per run",
                "Mean dollars a closed run cost, by route.",
                (_q(_mean("tandem_trajectory_cost_usd"), "{{route}}"),),
                "currencyUSD",
            ),
            Panel(
                "Savings per run",
                "Mean dollars a closed run saved against all-cloud, by route; negative when runs cost "
                "more than all-cloud would have (savings minus losses).",
                (
                    _q(
                        _mean(
                            "tandem_trajectory_savings_usd",
                            numerator=f"(sum by (route) (rate(tandem_trajectory_savings_usd_sum{{{R}}}[{RATE}]))"
                            f" - sum by (route) (rate(tandem_trajectory_loss_usd_sum{{{R}}}[{RATE}])))",
                        ),
                        "{{route}}",
                    ),
                ),
                "currencyUSD",
            ),
            Panel(
                "Privacy score per run by route",
                "Mean privacy score of closed runs, by route.",
                (_q(_mean("tandem_trajectory_privacy_score"), "{{route}}"),),
                "percentunit",
            ),
        ),
    ),
)

DASHBOARDS = {
    "tandem-overview": ("Tandem — overview", OVERVIEW),
    "tandem-trajectories": ("Tandem — trajectories", TRAJECTORIES),
}


def _panel(panel: Panel, panel_id: int) -> StatPanel | TimeseriesPanel:
    builder: StatPanel | TimeseriesPanel
    if panel.kind == "stat":
        builder = StatPanel().reduce_options(common_builders.ReduceDataOptions().calcs(["lastNotNull"]))
        builder = builder.graph_mode(common.BigValueGraphMode.NONE)
    else:
        builder = TimeseriesPanel().legend(
            common_builders.VizLegendOptions()
            .display_mode(common.LegendDisplayMode.LIST)
            .placement(common.LegendPlacement.BOTTOM)
            .show_legend(True)
        )
        if panel.stacked:
            builder = builder.stacking(common_builders.StackingConfig().mode(common.StackingMode.NORMAL))
        if panel.dashed:
            dash = DynamicConfigValue(id_val="custom.lineStyle", value={"fill": "dash", "dash": [10, 10]})
            builder = builder.override_by_regexp(panel.dashed, [dash])
    builder = (
        builder.id(panel_id)
        .title(panel.title)
        .description(panel.description)
        .datasource(DATASOURCE)
        .unit(panel.unit)
        .span(panel.width)
        .height(4 if panel.kind == "stat" else 8)
    )
    for index, query in enumerate(panel.queries):
        target = Dataquery().expr(query.expr).ref_id(chr(ord("A") + index))
        if query.legend:
            target = target.legend_format(query.legend)
        if panel.kind == "stat":
            target = target.instant()
        builder = builder.with_target(target)
    return builder


def build(uid: str) -> str:
    title, sections = DASHBOARDS[uid]
    dashboard = (
        DashboardBuilder(title)
        .uid(uid)
        .tags(["tandem", "generated"])
        .description("Generated by tools/dashboards.py; edit that, not this file.")
        .refresh("30s")
        .time("now-6h", "now")
        .timezone(common.TimeZoneBrowser)
        .with_variable(DatasourceVariable("datasource").label("Prometheus").type("prometheus"))
    )
    # Each variable offers the values the ones before it leave (a namespace's jobs, a job's
    # instances); every configured route, also one whose steps were all refused (no steps).
    chosen = ""
    for name, label in (*((n, n.capitalize()) for n in SCOPE_VARIABLES), ("route", "Route")):
        dashboard = dashboard.with_variable(
            QueryVariable(name)
            .label(label)
            .datasource(DATASOURCE)
            .query(f"label_values(tandem_{'route' if name == 'route' else 'build'}_info{chosen}, {name})")
            .multi(True)
            .include_all(True)
            .all_value(".*")
            .refresh(VariableRefresh.ON_TIME_RANGE_CHANGED)
            .sort(VariableSort.ALPHABETICAL_ASC)
        )
        chosen = "{" + f'{chosen.strip("{}")},{name}=~"${name}"'.lstrip(",") + "}"
    panel_id = 1
    for section in sections:
        dashboard = dashboard.with_row(Row(section.title).id(panel_id))
        panel_id += 1
        for panel in section.panels:
            dashboard = dashboard.with_panel(_panel(panel, panel_id))
            panel_id += 1
    return JSONEncoder(sort_keys=True, indent=2).encode(dashboard.build()) + "\n"


def build_all() -> dict[str, str]:
    """File name -> JSON text, for every dashboard."""
    return {f"{uid}.json": build(uid) for uid in DASHBOARDS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the checked-in files, write nothing")
    args = parser.parse_args(argv)
    stale = []
    for folder in OUTPUTS:
        for name, text in build_all().items():
            path = folder / name
            if args.check:
                if not path.is_file() or path.read_text() != text:
                    stale.append(str(path.relative_to(ROOT)))
            else:
                folder.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
    if stale:
        print("out of date (run python -m tools.dashboards): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

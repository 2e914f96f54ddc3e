"""Counters from zero: every series a gateway can emit is on its /metrics at start-up, at zero.

One generic check over every metric the gateway declares: each labelled metric must have an
entry in router/metrics/route_series.SERIES (a metric added without one fails here), and every label
combination its entry lists for the gateway's settings must be on a real gateway's /metrics
before the first step, counters and histograms at 0. A second check drives real traffic through
every kind of event the tests can script and requires that no series was born by it. A series
born at its first event hides that event from `increase()`: the first leak of a kind on a route
would not fire the privacy alert, and a stat would show 8 values exposed when 31 were.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from router.metrics.core import Metrics
from router.metrics.route_series import SERIES, SeriesScope
from router.privacy.reported import reported_kinds
from tests.deploy.traffic import drive
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

EMAIL = "alice@example.com"
# Every strategy, every privacy mode, a shadowed route, a summarised context, constraints.
ROUTES: dict[str, dict[str, Any]] = {
    "tandem": {"strategy": "random", "p": 0.5, "seed": 7, "constraints": {"max_cloud_share": 0.6}},
    "tandem/task": {"strategy": "task", "cloud_if_matches": "refactor", "default": "edge"},
    "tandem/judge": {"strategy": "judge", "target_cloud_share": 0.4},
    "tandem/edge-failover": {"strategy": "edge", "failover": True},
    "tandem/entropy": {"strategy": "entropy", "threshold": 1.0, "fallback": "edge"},
    "tandem/llm": {"strategy": "llm_judge", "judge": "cloud"},
    "tandem/draft": {"strategy": "draft_verify"},
    "tandem/delegate": {"strategy": "self_delegation"},
    "tandem/advisor": {"strategy": "advisor"},
    "tandem/sketch": {"strategy": "sketch"},
    "tandem/escalate": {"strategy": "escalation", "constraints": {"budget_usd": 5, "min_cloud_gap": 2}},
    "tandem/redact": {"strategy": "cloud", "privacy": "redact", "context": {"mode": "summary", "k": 2}},
    "tandem/block": {"strategy": "cloud", "privacy": "block"},
    "tandem/local": {"strategy": "cloud", "privacy": "keep_local"},
    "tandem/shadowed": {"strategy": "edge", "shadow": {"rate": 1.0, "budget_usd_per_day": 1}},
}
SETTINGS: dict[str, Any] = {
    "routes": ROUTES,
    "client_limits": {"requests_per_minute": 10_000},
    "upstream_overrides": {"cloud": {"drop_params": ["seed"]}},
}

Samples = dict[str, dict[frozenset[tuple[str, str]], float]]


def scrape(client: httpx.Client, server: GatewayServer) -> Samples:
    reply = client.get(f"{server.url}/metrics")
    assert reply.status_code == 200
    samples: Samples = {}
    for family in text_string_to_metric_families(reply.text):
        for sample in family.samples:
            samples.setdefault(sample.name, {})[frozenset(sample.labels.items())] = sample.value
    return samples


def _sample_name(family: Any) -> str:
    return {"counter": f"{family._name}_total", "histogram": f"{family._name}_count"}.get(family._type, family._name)


def unstarted(samples: Samples, families: Iterable[Any], scope: SeriesScope) -> tuple[list[str], int]:
    """What is wrong with a start-up scrape against the declarations: labelled metrics without
    an entry in SERIES, declared series missing, counters and histograms not at 0. And how many
    declared series were checked."""
    problems, checked = [], 0
    for family in families:
        if not family._labelnames:
            continue  # an unlabelled metric shows its zero by itself
        if family._name not in SERIES:
            problems.append(f"{family._name}: no entry in router/metrics/route_series.SERIES")
            continue
        name = _sample_name(family)
        for values in SERIES[family._name](scope):
            checked += 1
            labels = frozenset(zip(family._labelnames, values, strict=True))
            value = samples.get(name, {}).get(labels)
            if value is None:
                problems.append(f"{name}{dict(labels)}: not on /metrics at start-up")
            elif family._type != "gauge" and value != 0:
                problems.append(f"{name}{dict(labels)}: {value} at start-up")
    return problems, checked


def test_every_declared_series_is_on_metrics_at_zero_before_the_first_step(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client, redis_url: str
) -> None:
    server = make_gateway(redis_url=redis_url, **SETTINGS)
    assert client.get(f"{server.url}/readyz").status_code == 200  # the upstream gauges are set
    samples = scrape(client, server)
    scope = SeriesScope.of(server.settings, reported_kinds(server.settings))
    families = Metrics()._families
    problems, checked = unstarted(samples, families, scope)
    assert problems == []
    assert checked > 1000
    # What the issue named, among them: a first leak of an e-mail on an allow route and on a
    # protecting one, a refused step, an inner call's failure, a bad request, a failover.
    exposed = samples["tandem_privacy_values_total"]
    for route in ("tandem/cloud", "tandem/redact", "tandem"):
        assert exposed[frozenset({("route", route), ("type", "EMAIL"), ("action", "exposed")})] == 0
    assert exposed[frozenset({("route", "tandem/block"), ("type", "CARD"), ("action", "blocked")})] == 0
    assert exposed[frozenset({("route", "tandem/redact"), ("type", "AI_KEY"), ("action", "redacted")})] == 0
    steps = samples["tandem_steps_total"]
    refused = {("route", "tandem/block"), ("target", "none"), ("reason", "route_fixed"), ("status", "refused")}
    assert steps[frozenset(refused)] == 0
    # Only a block route refuses on purpose: no other route declares the status.
    assert {dict(labels)["route"] for labels in steps if ("status", "refused") in labels} == {"tandem/block"}
    cancelled = {("route", "tandem"), ("target", "none"), ("reason", "undecided"), ("status", "cancelled")}
    assert steps[frozenset(cancelled)] == 0
    failures = samples["tandem_policy_failures_total"]
    assert failures[frozenset({("route", "tandem/llm"), ("kind", "judge_unreadable")})] == 0
    assert samples["tandem_bad_requests_total"][frozenset({("code", "invalid_json")})] == 0
    assert (
        samples["tandem_tokens_total"][
            frozenset({("route", "tandem/redact"), ("target", "edge"), ("kind", "prompt"), ("call", "summary")})
        ]
        == 0
    )


def test_a_metric_without_a_declaration_or_a_series_not_started_is_reported() -> None:
    metrics = Metrics()
    scope = SeriesScope(routes={})
    added = metrics._counter("tandem_added_later", "A counter later work adds", ("route",))
    problems, _ = unstarted({}, [added], scope)
    assert problems == ["tandem_added_later: no entry in router/metrics/route_series.SERIES"]
    # Declared but not on /metrics (here: an empty scrape), and one not at zero.
    problems, checked = unstarted({}, [metrics.audit_lines], scope)
    assert checked == 2 and len(problems) == 2 and all("not on /metrics" in p for p in problems)
    written = frozenset({("outcome", "written")})
    problems, _ = unstarted({"tandem_audit_lines_total": {written: 3.0}}, [metrics.audit_lines], scope)
    assert "tandem_audit_lines_total{'outcome': 'written'}: 3.0 at start-up" in problems


def _step(client: httpx.Client, server: GatewayServer, model: str, session: str, text: str, **extra: Any) -> int:
    body = {"model": model, "messages": [{"role": "user", "content": text}], **extra}
    reply = client.post(f"{server.url}/v1/chat/completions", json=body, headers={"X-Session-ID": session})
    return reply.status_code


def test_no_series_is_born_by_traffic(
    make_gateway: Callable[..., GatewayServer],
    client: httpx.Client,
    edge: FakeUpstream,
    cloud: FakeUpstream,
    redis_url: str,
) -> None:
    server = make_gateway(redis_url=redis_url, **SETTINGS)
    client.get(f"{server.url}/readyz")
    before = scrape(client, server)
    drive(client, server, edge)
    # Privacy: exposed, redacted, blocked, kept local; inner calls that fail; an upstream error
    # relayed to the client; a dropped parameter; the shadow.
    assert _step(client, server, "tandem/cloud", "s-exposed", f"mail {EMAIL}") == 200
    assert _step(client, server, "tandem/redact", "s-redacted", f"mail {EMAIL}") == 200
    assert _step(client, server, "tandem/block", "s-blocked", f"mail {EMAIL}") == 403
    assert _step(client, server, "tandem/local", "s-local", f"mail {EMAIL}") == 200
    cloud.push({"kind": "text", "text": "perhaps"})
    assert _step(client, server, "tandem/llm", "s-llm", "next") == 200
    assert _step(client, server, "tandem/entropy", "s-entropy", "again") == 200
    assert _step(client, server, "tandem/draft", "s-draft", "draft") == 200
    cloud.push({"kind": "error", "status": 400})
    assert _step(client, server, "tandem/cloud", "s-400", "refused", seed=1) == 400
    assert _step(client, server, "tandem/shadowed", "s-shadow", "compare") == 200
    after = scrape(client, server)
    born = []
    for name, series in after.items():
        if not name.endswith(("_total", "_count")):
            continue  # gauges are set, buckets and sums go with their count
        born += [f"{name}{dict(labels)}" for labels in series if labels not in before.get(name, {})]
    assert born == []
    # The traffic did count: the checks above compare something that moved.
    moved = {
        name
        for name, series in after.items()
        if any(value != before.get(name, {}).get(labels) for labels, value in series.items())
    }
    assert {"tandem_privacy_values_total", "tandem_policy_failures_total", "tandem_bad_requests_total"} <= moved

"""The metrics themselves: the names and labels dashboards and alerts rely on, the fast
exposition against prometheus-client's own, and multiprocess mode's folder handling."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest
from prometheus_client import generate_latest

from benchmarks.metrics.workload import fill, route_names
from router.metrics.core import MULTIPROC_ENV, Metrics, prepare_multiprocess, sweep_dead_workers
from router.settings import load_settings
from tests.deploy.tools import ROOT, promtool

# Every metric, its type and its labels: dashboards, alert rules and operators depend on them.
CATALOGUE = {
    "tandem_steps": ("counter", ("route", "target", "reason", "status")),
    "tandem_step_repeats": ("counter", ("route", "target")),
    "tandem_steps_lost": ("counter", ("route",)),
    "tandem_tokens": ("counter", ("route", "target", "kind", "call")),
    "tandem_cost_usd": ("counter", ("route", "target", "call")),
    "tandem_counterfactual_cost_usd": ("counter", ("route",)),
    "tandem_step_latency_seconds": ("histogram", ("target",)),
    "tandem_time_to_first_token_seconds": ("histogram", ("target",)),
    "tandem_fallbacks": ("counter", ("route", "from_target", "to_target", "kind")),
    "tandem_upstream_errors": ("counter", ("upstream", "kind")),
    "tandem_upstream_calls": ("counter", ("upstream",)),
    "tandem_dropped_params": ("counter", ("upstream", "param")),
    "tandem_bad_requests": ("counter", ("code",)),
    "tandem_policy_failures": ("counter", ("route", "kind")),
    "tandem_store_errors": ("counter", ("operation",)),
    "tandem_limit_exceeded": ("counter", ("limit",)),
    "tandem_upstream_reachable": ("gauge", ("upstream",)),
    "tandem_upstream_authorised": ("gauge", ("upstream",)),
    "tandem_store_reply_errors": ("counter", ("operation",)),
    "tandem_store_outage_dropped": ("counter", ("kind",)),
    "tandem_store_written_back": ("counter", ("kind",)),
    "tandem_journal_lost": ("counter", ("reason",)),
    "tandem_store_outage_pending": ("gauge", ()),
    "tandem_store_outages": ("counter", ("cause",)),
    "tandem_store_busy": ("counter", ("operation",)),
    "tandem_client_limit_refusals": ("counter", ("limit",)),
    "tandem_auth_failures": ("counter", ("key_kind",)),
    "tandem_auth_throttled": ("counter", ("key_kind",)),
    "tandem_kept_responses": ("counter", ("event",)),
    "tandem_kept_responses_memory_bytes": ("gauge", ()),
    "tandem_audit_lines": ("counter", ("outcome",)),
    "tandem_audit_write_errors": ("counter", ()),
    "tandem_audit_failing": ("gauge", ()),
    "tandem_privacy_values": ("counter", ("route", "type", "action")),
    "tandem_privacy_failures": ("counter", ()),
    "tandem_judge_latency_seconds": ("histogram", ()),
    "tandem_judge_score": ("histogram", ("route",)),
    "tandem_judge_failures": ("counter", ("kind",)),
    "tandem_shadow_calls": ("counter", ("route", "target", "outcome")),
    "tandem_trajectories_closed": ("counter", ("reason", "route")),
    "tandem_trajectory_steps": ("histogram", ("route",)),
    "tandem_trajectory_cost_usd": ("histogram", ("route",)),
    "tandem_trajectory_cloud_share": ("histogram", ("route",)),
    "tandem_trajectory_savings_usd": ("histogram", ("route",)),
    "tandem_trajectory_loss_usd": ("histogram", ("route",)),
    "tandem_trajectory_privacy_score": ("histogram", ("route",)),
    "tandem_active_trajectories": ("gauge", ()),
    "tandem_route_info": ("gauge", ("route", "strategy", "privacy")),
    "tandem_route_cloud_share_target": ("gauge", ("route",)),
    "tandem_build_info": ("gauge", ("version",)),
}
UNBOUNDED = {"trajectory", "trajectory_id", "session", "session_id", "id", "user", "namespace"}


def test_catalogue_of_names_types_and_labels() -> None:
    metrics = Metrics()
    found = {
        family._name: (family._type, tuple(family._labelnames))
        for family in vars(metrics).values()
        if hasattr(family, "_labelnames")
    }
    assert found == CATALOGUE
    assert not any(set(labels) & UNBOUNDED for _, labels in CATALOGUE.values())


def test_fast_exposition_equals_prometheus_clients_without_created_series() -> None:
    metrics = Metrics()
    fill(metrics, route_names(7))
    metrics.route_info.labels('odd "name"\\ with\nnewline', "random", "allow").set(1)
    reference = []
    skipping = False
    for line in generate_latest(metrics.registry).decode().splitlines(keepends=True):
        if line.startswith("# "):
            skipping = line.split()[2].endswith("_created")
        if not skipping:
            reference.append(line)
    assert metrics.exposition().decode() == "".join(reference)


def test_exposition_passes_promtool_check_metrics() -> None:
    metrics = Metrics()
    fill(metrics, route_names(3))
    done = subprocess.run([promtool(), "check", "metrics"], input=metrics.exposition(), capture_output=True, timeout=30)
    assert done.returncode == 0, done.stdout + done.stderr


def test_routes_are_described_for_the_alert_rules() -> None:
    settings = load_settings(
        routes={
            "tandem": {"strategy": "random", "p": 0.3},
            "capped": {"strategy": "entropy", "constraints": {"max_cloud_share": 0.25}},
            "both": {"strategy": "random", "p": 0.9, "constraints": {"max_cloud_share": 0.5}},
            "judged": {"strategy": "judge", "target_cloud_share": 0.35, "constraints": {"max_cloud_share": 0.6}},
        }
    )
    metrics = Metrics()
    metrics.describe_routes(settings.routes)
    text = metrics.exposition().decode()
    assert 'tandem_route_info{privacy="allow",route="capped",strategy="entropy"} 1.0' in text
    assert 'tandem_route_info{privacy="allow",route="tandem/edge",strategy="edge"} 1.0' in text
    assert 'tandem_route_cloud_share_target{route="tandem"} 0.3' in text
    assert 'tandem_route_cloud_share_target{route="capped"} 0.25' in text
    assert 'tandem_route_cloud_share_target{route="both"} 0.5' in text
    assert 'tandem_route_cloud_share_target{route="judged"} 0.35' in text
    assert 'tandem_route_cloud_share_target{route="tandem/edge"}' not in text


def test_every_target_has_latency_series_before_the_first_step() -> None:
    text = Metrics().exposition().decode()
    for target in ("edge", "cloud"):
        assert f'tandem_step_latency_seconds_count{{target="{target}"}} 0.0' in text
        assert f'tandem_time_to_first_token_seconds_count{{target="{target}"}} 0.0' in text


def series_of(text: str, name: str) -> set[str]:
    return {line.split(" ")[0] for line in text.splitlines() if line.startswith(name + "{")}


def test_route_series_start_at_zero_for_what_each_route_can_emit_and_no_more() -> None:
    settings = load_settings(
        routes={
            "fixed": {"strategy": "edge", "failover": False},
            "probe": {"strategy": "entropy", "fallback": "edge", "constraints": {"max_cloud_share": 0.3}},
            "private": {"strategy": "cloud", "privacy": "keep_local"},
        },
        allow_target_header=False,
    )
    metrics = Metrics()
    metrics.describe_routes(settings.routes, header_forced=False)
    text = metrics.exposition().decode()
    steps = series_of(text, "tandem_steps_total")
    fixed = {s for s in steps if 'route="fixed"' in s}
    # An edge-only route without failover can only record steps the edge answered, for one
    # reason; a failed or cancelled one under no target, for that reason or none (a step that
    # ended before its decision).
    assert fixed == {
        f'tandem_steps_total{{reason="{reason}",route="fixed",status="{status}",target="{target}"}}'
        for reason, status, target in [
            ("route_fixed", "ok", "edge"),
            ("route_fixed", "error", "none"),
            ("route_fixed", "cancelled", "none"),
            ("undecided", "error", "none"),
            ("undecided", "cancelled", "none"),
        ]
    }
    probe = {s.split('reason="')[1].split('"')[0] for s in steps if 'route="probe"' in s}
    assert probe == {"entropy", "inner_call_failed", "max_cloud_share", "undecided"}
    private = {
        (s.split('reason="')[1].split('"')[0], s.split('target="')[1].split('"')[0])
        for s in steps
        if 'route="private"' in s
    }
    # Kept local for privacy or pinned: edge only, never failed over to the cloud.
    assert ("privacy_keep_local", "edge") in private and ("pinned_edge", "edge") in private
    assert ("privacy_keep_local", "cloud") not in private
    assert 'tandem_policy_failures_total{kind="probe",route="probe"} 0.0' in text
    assert 'tandem_policy_failures_total{kind="probe_unreadable",route="probe"} 0.0' in text
    assert 'route="fixed"' not in "".join(series_of(text, "tandem_policy_failures_total"))
    assert 'tandem_cost_usd_total{call="step",route="fixed",target="edge"} 0.0' in text
    assert 'tandem_cost_usd_total{call="step",route="fixed",target="cloud"}' not in text
    assert 'tandem_counterfactual_cost_usd_total{route="fixed"} 0.0' in text
    assert not series_of(text, "tandem_fallbacks_total") & {s for s in steps if 'route="fixed"' in s}
    assert 'tandem_fallbacks_total{from_target="edge",kind="timeout",route="probe",to_target="cloud"} 0.0' in text
    assert 'tandem_trajectories_closed_total{reason="idle",route="private"} 0.0' in text
    # The header-forced reason exists only where the header is allowed.
    assert "header_forced" not in text


def test_multiprocess_exposition_equals_prometheus_clients(tmp_path: Path) -> None:
    env = {**os.environ, MULTIPROC_ENV: str(tmp_path), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "tests.deploy.multiprocess_check"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["equal"], report
    # Both workers' counts are summed: each recorded this series once.
    assert report["steps_one_series"] == 2.0
    assert report["active"] == 3.0


def test_prepare_multiprocess(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MULTIPROC_ENV, raising=False)
    assert prepare_multiprocess(1) is None
    assert MULTIPROC_ENV not in os.environ
    made = prepare_multiprocess(2)
    assert made is not None and made.is_dir() and os.environ[MULTIPROC_ENV] == str(made)
    # A folder the operator names is used, and an earlier run's files are wiped from it.
    named = tmp_path / "metrics"
    named.mkdir()
    (named / "counter_123.db").write_bytes(b"old")
    (named / "keep.txt").write_text("not ours")
    monkeypatch.setenv(MULTIPROC_ENV, str(named))
    assert prepare_multiprocess(1) == named
    assert sorted(p.name for p in named.iterdir()) == ["keep.txt"]


def _exit_at_once() -> None:
    pass


def test_sweep_drops_live_gauges_of_dead_workers_only(tmp_path: Path) -> None:
    process = multiprocessing.get_context("spawn").Process(target=_exit_at_once)
    process.start()
    process.join()
    dead, alive = process.pid, os.getpid()
    for pid in (dead, alive):
        for name in (f"gauge_livemostrecent_{pid}.db", f"counter_{pid}.db", f"gauge_max_{pid}.db"):
            (tmp_path / name).write_bytes(b"\0" * 8)
    assert sweep_dead_workers(tmp_path) == [dead]
    left = sorted(p.name for p in tmp_path.iterdir())
    assert f"gauge_livemostrecent_{dead}.db" not in left
    assert {f"counter_{dead}.db", f"gauge_max_{dead}.db", f"gauge_livemostrecent_{alive}.db"} <= set(left)

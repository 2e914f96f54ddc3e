"""Metric traffic for the benchmark and the tests: the calls a step makes, and series as if
every route had served traffic. Kept apart from `__main__` so that spawned processes can
import it."""

from __future__ import annotations

from typing import Any

ROUTES = 100
REASONS = ("random_draw", "entropy", "llm_judge", "header_forced")
PRIVACY_TYPES = ("email", "phone", "api_key", "iban", "ip_address", "person", "address", "credit_card")
PRIVACY_ACTIONS = ("detected", "redacted", "exposed", "blocked")


def route_names(count: int) -> list[str]:
    return [f"route-{index:03d}" for index in range(count)]


def step_calls(metrics: Any, route: str, target: str, reason: str, status: str) -> None:
    """Exactly the calls `Metrics.step_closed` makes for one step with usage and no inner call."""
    metrics.tokens.labels(route, target, "prompt", "step").inc(1200)
    metrics.tokens.labels(route, target, "cached", "step").inc(800)
    metrics.tokens.labels(route, target, "completion", "step").inc(90)
    metrics.cost.labels(route, target, "step").inc(0.0012)
    metrics.counterfactual_cost.labels(route).inc(0.0031)
    metrics.steps.labels(route, target, reason, status).inc()
    metrics.latency.labels(target).observe(0.42)
    metrics.ttft.labels(target).observe(0.08)


def fill(metrics: Any, routes: list[str]) -> None:
    """Series as if every route had served traffic for a while."""
    for route in routes:
        for target in ("edge", "cloud"):
            for reason in REASONS:
                for status in ("ok", "error"):
                    step_calls(metrics, route, target, reason, status)
        metrics.fallbacks.labels(route, "edge", "cloud", "connect").inc()
        metrics.policy_failures.labels(route, "inner_call").inc()
        metrics.judge_score.labels(route).observe(0.37)
        metrics.trajectories_closed.labels("outcome", route).inc()
        metrics.trajectories_closed.labels("idle", route).inc()
        for kind in PRIVACY_TYPES:
            for action in PRIVACY_ACTIONS:
                metrics.privacy_values.labels(route, kind, action).inc()
        for histogram, value in (
            (metrics.run_steps, 42),
            (metrics.run_cost, 0.8),
            (metrics.run_cloud_share, 0.4),
            (metrics.run_savings, 1.2),
            (metrics.run_loss, 0.0),
            (metrics.run_privacy, 0.95),
        ):
            histogram.labels(route).observe(value)
    for kind in ("connect", "timeout", "status", "disconnected"):
        metrics.upstream_errors.labels("edge", kind).inc()
        metrics.upstream_errors.labels("cloud", kind).inc()
    metrics.judge_latency.observe(0.0001)


def fill_worker(routes: int) -> None:
    from router.metrics.core import Metrics

    fill(Metrics(), route_names(routes))

"""The edge pool's series (router/edge/pool.py): per replica, the steps placed on it, what it
holds in flight, its own queue, estimated wait, KV cache and prefix-cache hit ratio as its
/metrics said, and whether its breaker lets steps through; for the pool, the runs re-homed, the
steps that spilled from a busy home to another replica, the steps spilled to the cloud for load
(by route), and whether it is full now. Labels are bounded: a replica is one of the configured
`endpoints`.

The gauges are set when /metrics is scraped (`refresh`), from what the pool holds then.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prometheus_client import Counter, Gauge

if TYPE_CHECKING:
    from router.edge.pool import EdgePool

REHOME_REASONS = ("replica_down", "replica_removed", "overloaded")


@dataclass(frozen=True, slots=True)
class EdgeSeries:
    replica_steps: Counter
    replica_failures: Counter
    rehomes: Counter
    home_spills: Counter
    load_spills: Counter
    in_flight: Gauge
    waiting: Gauge
    running: Gauge
    kv_cache_usage: Gauge
    wait: Gauge
    prefix_hit_ratio: Gauge
    available: Gauge
    pool_full: Gauge

    def refresh(self, pool: EdgePool, full_waiting: int, full_wait_s: float | None = None) -> None:
        """Set the gauges from the pool as it stands (a /metrics scrape calls this)."""
        now = pool.clock()
        for replica in pool.replicas:
            url, load = replica.url, replica.load
            self.in_flight.labels(url).set(replica.in_flight)
            self.waiting.labels(url).set(load.waiting)
            self.running.labels(url).set(load.running)
            self.kv_cache_usage.labels(url).set(load.kv_cache_usage)
            self.wait.labels(url).set(load.wait_s)
            self.prefix_hit_ratio.labels(url).set(load.prefix_hit_ratio)
            self.available.labels(url).set(1 if replica.alive(now) else 0)
        self.pool_full.set(1 if pool.full(full_waiting, full_wait_s) else 0)


def edge_series(
    counter: Callable[[str, str, Iterable[str]], Counter], gauge: Callable[[str, str, Iterable[str], Any], Gauge]
) -> EdgeSeries:
    """Declare the edge pool's families with the gateway's own `Metrics` helpers."""
    replica = ("replica",)
    return EdgeSeries(
        replica_steps=counter(
            "tandem_edge_replica_steps", "Steps placed first on each edge replica (its base URL)", replica
        ),
        replica_failures=counter(
            "tandem_edge_replica_failures",
            "Failed calls to each edge replica (a step's, an inner call's), by kind as in tandem_upstream_errors_total",
            ("replica", "kind"),
        ),
        rehomes=counter(
            "tandem_edge_rehomes",
            "Trajectories given a new home replica, by why: it was down (its breaker opened, or it refused or "
            "dropped a step's connection, or answered it with no chat completion where another replica answered), "
            "it left the configuration, the run's steps kept spilling from it over the load bound",
            ("reason",),
        ),
        # Unlabelled (it shows its zero by itself): which home was busy is in the per-replica
        # in-flight and queue series.
        home_spills=counter(
            "tandem_edge_home_spills",
            "Edge steps of a run with a home replica sent first to another replica of the pool because the home "
            "was over the load bound",
            (),
        ),
        load_spills=counter(
            "tandem_edge_load_spills",
            "Edge steps sent to the cloud because every edge replica's queue was full (edge_full: cloud), by route",
            ("route",),
        ),
        in_flight=gauge(
            "tandem_edge_replica_in_flight", "Steps this gateway has in flight on each edge replica", replica, "livesum"
        ),
        waiting=gauge(
            "tandem_edge_replica_waiting",
            "Requests waiting in each edge replica's own queue (its vLLM metrics)",
            replica,
            "max",
        ),
        running=gauge(
            "tandem_edge_replica_running", "Requests each edge replica is running (its vLLM metrics)", replica, "max"
        ),
        kv_cache_usage=gauge(
            "tandem_edge_replica_kv_cache_usage",
            "KV-cache usage of each edge replica, 0..1 (its vLLM metrics)",
            replica,
            "max",
        ),
        wait=gauge(
            "tandem_edge_replica_estimated_wait_seconds",
            "Estimated wait of a request queued at each edge replica now: its waiting requests x the recent mean "
            "time a request ran / its requests running (its vLLM metrics)",
            replica,
            "max",
        ),
        prefix_hit_ratio=gauge(
            "tandem_edge_replica_prefix_cache_hit_ratio",
            "Share of prompt tokens each edge replica served from its prefix cache between its last two scrapes",
            replica,
            "max",
        ),
        available=gauge(
            "tandem_edge_replica_available", "1 while an edge replica's breaker lets steps through", replica, "max"
        ),
        pool_full=gauge(
            "tandem_edge_pool_full",
            "1 while every edge replica is full by the routes' lowest edge_full_waiting (or edge_full_wait_s)",
            (),
            "max",
        ),
    )

"""The edge pool's series start at zero (a gateway with `endpoints`), and move with traffic:
placed steps per replica, a load spill, the replicas' scraped queue and prefix-cache ratio."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest

from router.metrics.core import Metrics
from router.metrics.route_series import SeriesScope
from router.privacy.reported import reported_kinds
from tests.deploy.test_series import scrape, unstarted
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, wait_until

ROUTES = {"tandem": {"strategy": "edge", "edge_full": "cloud", "edge_full_waiting": 2}}


def vllm_metrics(waiting: int, hits: float, queries: float) -> str:
    return (
        f'vllm:num_requests_waiting{{model_name="m"}} {waiting}\n'
        f'vllm:num_requests_running{{model_name="m"}} 1\n'
        f'vllm:kv_cache_usage_perc{{model_name="m"}} 0.25\n'
        f'vllm:prefix_cache_hits_total{{model_name="m"}} {hits}\n'
        f'vllm:prefix_cache_queries_total{{model_name="m"}} {queries}\n'
    )


@pytest.fixture()
def second() -> Iterator[FakeUpstream]:
    fake = FakeUpstream(name="edge1", model="edge-model").start()
    yield fake
    fake.stop()


def test_the_pool_series_start_at_zero_and_count_placements_and_spills(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client, edge: FakeUpstream, second: FakeUpstream
) -> None:
    replicas = [edge, second]
    edge_settings = {"endpoints": [r.base_url for r in replicas], "pool": {"scrape_interval_s": 0.05}}
    server = make_gateway(routes=ROUTES, upstream_overrides={"edge": edge_settings})
    assert client.get(f"{server.url}/readyz").status_code == 200  # the upstream gauges are set
    samples = scrape(client, server)
    problems, checked = unstarted(
        samples, Metrics()._families, SeriesScope.of(server.settings, reported_kinds(server.settings))
    )
    assert problems == [] and checked > 10
    urls = [r.base_url for r in replicas]
    for url in urls:
        assert samples["tandem_edge_replica_steps_total"][frozenset({("replica", url)})] == 0
        assert samples["tandem_edge_replica_available"][frozenset({("replica", url)})] == 1
    assert samples["tandem_edge_load_spills_total"][frozenset({("route", "tandem")})] == 0
    assert samples["tandem_edge_rehomes_total"][frozenset({("reason", "replica_down")})] == 0
    assert samples["tandem_edge_pool_full"][frozenset()] == 0

    for fake in replicas:
        fake.metrics_text = vllm_metrics(0, 100, 400)
    pool = server.app.state.engine.edge_pool
    assert wait_until(lambda: all(r.load.prefix_queries == 400 for r in pool.replicas))
    for fake in replicas:
        fake.metrics_text = vllm_metrics(0, 400, 800)  # 300 of the next 400 tokens were cached
    assert wait_until(lambda: all(r.load.prefix_queries == 800 for r in pool.replicas))
    for n in range(4):
        body = {"model": "tandem", "messages": [{"role": "user", "content": f"run {n}"}]}
        assert (
            client.post(f"{server.base_url}/chat/completions", json=body, headers={"x-session-id": f"r{n}"}).status_code
            == 200
        )
    for fake in replicas:
        fake.metrics_text = vllm_metrics(5, 400, 800)
    assert wait_until(lambda: pool.full(2))
    # Each read of the replicas sets this process's gauges (no /metrics scrape needed: with
    # several workers, only the one answering a scrape would refresh them then).
    registry = server.app.state.engine.metrics.registry
    assert wait_until(lambda: registry.get_sample_value("tandem_edge_replica_waiting", {"replica": urls[1]}) == 5)
    body = {"model": "tandem", "messages": [{"role": "user", "content": "spill"}]}
    assert client.post(f"{server.base_url}/chat/completions", json=body).headers["x-tandem-target"] == "cloud"
    after = scrape(client, server)
    placed = after["tandem_edge_replica_steps_total"]
    assert sum(placed[frozenset({("replica", url)})] for url in urls) == 4
    assert after["tandem_edge_load_spills_total"][frozenset({("route", "tandem")})] == 1
    assert after["tandem_edge_pool_full"][frozenset()] == 1
    assert after["tandem_edge_replica_waiting"][frozenset({("replica", urls[0])})] == 5
    assert after["tandem_edge_replica_prefix_cache_hit_ratio"][frozenset({("replica", urls[0])})] == 0.75

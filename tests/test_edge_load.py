"""The edge's load in the decision: each replica's vLLM /metrics read in the background, and a
route's `edge_full` saying what a step does when every replica's queue is full. Real HTTP
replicas that serve a scripted /metrics; both trajectory stores."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from router import notes
from router.edge_pool import ReplicaLoad
from router.edge_scrape import metrics_url, parse_load
from tests.both_stores import MakeGateway
from tests.both_stores import make_gateway as make_gateway
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, wait_until

# As vLLM's V1 engine writes it (names of the version sim/vllm/constraints.txt pins).
VLLM_METRICS = """# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{{engine="0",model_name="edge-model"}} {running}
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{{engine="0",model_name="edge-model"}} {waiting}
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{{engine="0",model_name="edge-model"}} 0.5
# TYPE vllm:prefix_cache_queries counter
vllm:prefix_cache_queries_total{{engine="0",model_name="edge-model"}} 1000.0
vllm:prefix_cache_hits_total{{engine="0",model_name="edge-model"}} 750.0
vllm:prefix_cache_hits_created{{engine="0",model_name="edge-model"}} 1.7e9
"""


def metrics(waiting: int, running: int = 2) -> str:
    return VLLM_METRICS.format(waiting=float(waiting), running=float(running))


def test_parse_load_reads_vllm_names_and_sums_engines() -> None:
    text = (metrics(3) + 'vllm:num_requests_waiting{engine="1",model_name="edge-model"} 2.0\n').encode()
    load = parse_load(text, at=7.0)
    assert load == ReplicaLoad(running=2.0, waiting=5.0, kv_cache_usage=0.5, prefix_hits=750, prefix_queries=1000, at=7)
    older = parse_load(b'vllm:gpu_cache_usage_perc{model_name="m"} 0.25\nvllm:bogus 1\n', at=1.0)
    assert older.kv_cache_usage == 0.25 and older.waiting == 0.0
    assert metrics_url("http://10.0.0.1:8000/v1", "/metrics") == "http://10.0.0.1:8000/metrics"


@pytest.fixture()
def replicas() -> Iterator[list[FakeUpstream]]:
    started = [FakeUpstream(name=f"edge{i}", model="edge-model").start() for i in range(2)]
    yield started
    for fake in started:
        fake.stop()


ROUTES = {
    "spill": {"strategy": "edge", "edge_full": "cloud", "edge_full_waiting": 4},
    "queue": {"strategy": "edge", "edge_full": "wait", "edge_full_waiting": 4},
    "strict": {"strategy": "edge", "edge_full": "fail", "edge_full_waiting": 4},
    "private": {
        "strategy": "random",
        "p": 0.0,
        "privacy": "keep_local",
        "edge_full": "cloud",
        "edge_full_waiting": 4,
    },
    "budgeted": {"strategy": "edge", "edge_full": "cloud", "edge_full_waiting": 4, "constraints": {"budget_calls": 1}},
}


def load_gateway(make: MakeGateway, replicas: list[FakeUpstream]) -> GatewayServer:
    edge = {"endpoints": [r.base_url for r in replicas], "base_url": None, "pool": {"scrape_interval_s": 0.05}}
    return make(routes=ROUTES, upstream_overrides={"edge": edge})


def step(client: httpx.Client, server: GatewayServer, route: str, trajectory: str, text: str = "hi") -> httpx.Response:
    return client.post(
        f"{server.base_url}/chat/completions",
        json={"model": route, "messages": [{"role": "user", "content": text}]},
        headers={"x-session-id": trajectory},
    )


def scraped(server: GatewayServer, waiting: float) -> bool:
    pool = server.app.state.engine.edge_pool
    return all(replica.load.waiting == waiting for replica in pool.replicas)


def fill(replicas: list[FakeUpstream], waiting: int) -> None:
    for fake in replicas:
        fake.metrics_text = metrics(waiting)
        fake.default = {"kind": "text", "delay": 3.0}  # a queued step would wait this long


def test_a_full_pool_sends_a_step_to_the_cloud_at_once_and_says_why(
    make_gateway: MakeGateway, replicas: list[FakeUpstream], cloud: FakeUpstream
) -> None:
    server = load_gateway(make_gateway, replicas)
    with httpx.Client(timeout=10) as client:
        for fake in replicas:
            fake.metrics_text = metrics(1)
        assert wait_until(lambda: scraped(server, 1.0))
        assert step(client, server, "spill", "calm").headers["x-tandem-target"] == "edge"
        fill(replicas, 9)
        assert wait_until(lambda: scraped(server, 9.0))
        started = time.perf_counter()
        spilled = step(client, server, "spill", "busy")
        took = time.perf_counter() - started
    assert spilled.status_code == 200
    assert spilled.headers["x-tandem-target"] == "cloud" and spilled.headers["x-tandem-reason"] == "edge_full"
    assert took < 1.0, "the step queued at the edge instead of going to the cloud"
    assert sum(len(fake.received) for fake in replicas) == 1  # the calm step only
    store = server.app.state.engine.tracker.store
    assert wait_until(lambda: server.run(store.get("busy")).counts["cloud_steps"] == 1)  # charged as a cloud step
    assert server.run(store.get("busy")).notes[notes.POOL_SPILLS] == "1"


def test_a_full_pool_never_sends_a_kept_local_step_to_the_cloud(
    make_gateway: MakeGateway, replicas: list[FakeUpstream], cloud: FakeUpstream
) -> None:
    server = load_gateway(make_gateway, replicas)
    fill(replicas, 9)
    for fake in replicas:
        fake.default = {"kind": "text", "delay": 0.2}
    assert wait_until(lambda: scraped(server, 9.0))
    with httpx.Client(timeout=10) as client:
        # A value the privacy stage finds: keep_local keeps the step (and the run) on the edge.
        private = step(client, server, "private", "secret", "mail me at jane.doe@example.com")
        assert private.status_code == 200 and private.headers["x-tandem-target"] == "edge"
        # The budget spent: the constraint wins over the load too.
        first = step(client, server, "budgeted", "spent")
        store = server.app.state.engine.tracker.store
        assert wait_until(lambda: server.run(store.get("spent")).counts["cloud_calls"] == 1)  # its record is in
        second = step(client, server, "budgeted", "spent", "again")
        assert first.headers["x-tandem-target"] == "cloud"
        assert second.status_code == 200 and second.headers["x-tandem-target"] == "edge"
    assert not any("jane.doe" in str(r.body) for r in cloud.received)


def test_wait_queues_at_the_edge_and_fail_answers_503(
    make_gateway: MakeGateway, replicas: list[FakeUpstream], cloud: FakeUpstream
) -> None:
    server = load_gateway(make_gateway, replicas)
    fill(replicas, 9)
    for fake in replicas:
        fake.default = {"kind": "text"}
    assert wait_until(lambda: scraped(server, 9.0))
    with httpx.Client(timeout=10) as client:
        queued = step(client, server, "queue", "patient")
        refused = step(client, server, "strict", "strict")
    assert queued.status_code == 200 and queued.headers["x-tandem-target"] == "edge"
    assert refused.status_code == 503
    error: dict[str, Any] = refused.json()["error"]
    assert error["code"] == "edge_full" and "edge_full: fail" in error["message"]
    assert cloud.received == []


def test_a_replica_whose_metrics_are_unknown_keeps_the_pool_open(
    make_gateway: MakeGateway, replicas: list[FakeUpstream], cloud: FakeUpstream
) -> None:
    server = load_gateway(make_gateway, replicas)
    replicas[0].metrics_text = metrics(9)
    replicas[1].metrics_text = metrics(0)
    assert wait_until(lambda: server.app.state.engine.edge_pool.replicas[0].load.waiting == 9.0)
    with httpx.Client(timeout=10) as client:
        answered = step(client, server, "spill", "half")
    assert answered.headers["x-tandem-target"] == "edge"
    assert len(replicas[1].received) == 1, "the least queued replica took the new run"

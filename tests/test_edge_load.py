"""The edge's load in the decision: each replica's vLLM /metrics read in the background, and a
route's `edge_full` saying what a step does when every replica's queue is full. Real HTTP
replicas that serve a scripted /metrics; both trajectory stores."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from router import notes
from router.edge.pool import ReplicaLoad
from router.edge.scrape import metrics_url, parse_load
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
# TYPE vllm:request_inference_time_seconds histogram
vllm:request_inference_time_seconds_bucket{{engine="0",le="0.3",model_name="edge-model"}} 0.0
vllm:request_inference_time_seconds_count{{engine="0",model_name="edge-model"}} {run_count}
vllm:request_inference_time_seconds_sum{{engine="0",model_name="edge-model"}} {run_sum}
"""


def metrics(waiting: int, running: int = 2, run_sum: float = 0.0, run_count: int = 0) -> str:
    return VLLM_METRICS.format(waiting=float(waiting), running=float(running), run_sum=run_sum, run_count=run_count)


def test_parse_load_reads_vllm_names_and_sums_engines() -> None:
    text = (metrics(3) + 'vllm:num_requests_waiting{engine="1",model_name="edge-model"} 2.0\n').encode()
    load = parse_load(text, at=7.0)
    assert load == ReplicaLoad(running=2.0, waiting=5.0, kv_cache_usage=0.5, prefix_hits=750, prefix_queries=1000, at=7)
    timed = parse_load(metrics(6, running=3, run_sum=20.0, run_count=10).encode(), at=1.0)
    assert (timed.run_s_sum, timed.run_s_count) == (20.0, 10.0)
    timed.run_s = 2.0  # the scrape sets it from two reads
    assert timed.wait_s == 6 * 2.0 / 3  # six ahead, three run at a time, two seconds each
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


def test_an_estimated_wait_over_the_routes_limit_fills_the_pool_before_its_queue_does(
    make_gateway: MakeGateway, replicas: list[FakeUpstream], cloud: FakeUpstream
) -> None:
    routes = {
        "short": {"strategy": "edge", "edge_full": "cloud", "edge_full_waiting": 4},
        "impatient": {"strategy": "edge", "edge_full": "cloud", "edge_full_waiting": 4, "edge_full_wait_s": 5},
        "strict": {"strategy": "edge", "edge_full": "fail", "edge_full_waiting": 4, "edge_full_wait_s": 5},
    }
    edge = {"endpoints": [r.base_url for r in replicas], "base_url": None, "pool": {"scrape_interval_s": 0.05}}
    server = make_gateway(routes=routes, upstream_overrides={"edge": edge})
    pool = server.app.state.engine.edge_pool

    def estimates(check: Callable[[float], bool]) -> bool:
        return all(check(replica.load.wait_s) for replica in pool.replicas)

    # Two waiting (under the queue limit of 4), one running, requests ran 3 s each: 6 s or more.
    for fake in replicas:
        fake.metrics_text = metrics(2, running=1, run_sum=30.0, run_count=10)
    assert wait_until(lambda: estimates(lambda wait: wait >= 6.0))
    with httpx.Client(timeout=10) as client:
        patient = step(client, server, "short", "patient")
        impatient = step(client, server, "impatient", "impatient")
        strict = step(client, server, "strict", "strict")
        # Requests finish faster now (ten more in 5 s): the estimate falls to about 2 x 0.5 s.
        for fake in replicas:
            fake.metrics_text = metrics(2, running=1, run_sum=35.0, run_count=20)
        assert wait_until(lambda: estimates(lambda wait: wait < 2.0))
        calmer = step(client, server, "impatient", "calmer")
        exposition = client.get(f"{server.url}/metrics").text
        # Then nothing finishes while two wait: the running request has run at least as long as
        # the stall, and past 2.5 s the estimate reaches 5 s though the last mean said 0.5 s.
        assert wait_until(lambda: estimates(lambda wait: wait >= 5.0), timeout=10)
        stalled = step(client, server, "impatient", "stalled")
    assert patient.headers["x-tandem-target"] == "edge", "a queue under edge_full_waiting alone is not full"
    assert impatient.headers["x-tandem-target"] == "cloud" and impatient.headers["x-tandem-reason"] == "edge_full"
    assert strict.status_code == 503 and "estimated wait of 5 s" in strict.json()["error"]["message"]
    assert calmer.headers["x-tandem-target"] == "edge"
    assert stalled.headers["x-tandem-target"] == "cloud" and stalled.headers["x-tandem-reason"] == "edge_full"
    gauge = re.search(
        rf'tandem_edge_replica_estimated_wait_seconds{{replica="{replicas[0].base_url}"}} (\S+)', exposition
    )
    assert gauge is not None and 0 < float(gauge.group(1)) < 5


def test_load_spills_do_not_move_the_judges_cloud_share(
    make_gateway: MakeGateway, replicas: list[FakeUpstream], cloud: FakeUpstream
) -> None:
    """Two runs alike but for why their first steps reached the cloud: for load (a full pool), or
    by the route's own choice. The judge holding a cloud share of 0 raises its threshold for the
    run whose own cloud steps are over the share; the spilled run it treats as fresh."""
    from tests.test_judge_strategy import steps
    from tests.test_strategies import TOOLS

    history = steps(7)
    edge = {"endpoints": [r.base_url for r in replicas], "base_url": None, "pool": {"scrape_interval_s": 0.05}}
    routes: dict[str, Any] = {
        "burst": {"strategy": "edge", "edge_full": "cloud", "edge_full_waiting": 4},
        "up": {"strategy": "cloud"},
        "held": {"strategy": "judge", "threshold": 0.5},
    }

    def send(client: httpx.Client, server: GatewayServer, route: str, run: str, step: int) -> httpx.Response:
        body = {"model": route, "messages": history[step], "tools": TOOLS}
        reply = client.post(f"{server.base_url}/chat/completions", json=body, headers={"x-session-id": run})
        assert reply.status_code == 200, reply.text
        return reply

    def cloud_steps(server: GatewayServer, run: str, count: int) -> bool:
        state = server.run(server.app.state.engine.tracker.store.get(run))
        return state is not None and state.counts["cloud_steps"] == count

    with httpx.Client(timeout=10) as client:
        # The judge's score of the seventh step of a run whose six steps went to the cloud.
        scout = make_gateway(routes=routes, upstream_overrides={"edge": edge})
        for n in range(6):
            send(client, scout, "up", "scout", n)
        assert wait_until(lambda: cloud_steps(scout, "scout", 6))
        score = float(send(client, scout, "held", "scout", 6).headers["x-tandem-score"])
        # Held at a cloud share of 0, starting just under that score (the per-run term is
        # relative to the threshold: 1.3 times it for a run of six cloud steps in six), the
        # threshold barely moving globally: the run's own excess share alone decides.
        assert score > 0
        routes["held"] = {
            "strategy": "judge",
            "threshold": score * 0.9,
            "target_cloud_share": 0.0,
            "threshold_bounds": (0.0, 1.0),
            "adapt_rate": 1e-6,
        }
        server = make_gateway(routes=routes, upstream_overrides={"edge": edge})
        pool = server.app.state.engine.edge_pool
        fill(replicas, 9)
        assert wait_until(lambda: all(replica.load.waiting == 9.0 for replica in pool.replicas))
        for n in range(6):
            assert send(client, server, "burst", "spilled", n).headers["x-tandem-reason"] == "edge_full"
            send(client, server, "up", "chosen", n)
        assert wait_until(lambda: cloud_steps(server, "spilled", 6) and cloud_steps(server, "chosen", 6))
        for fake in replicas:
            fake.metrics_text = metrics(0)
            fake.default = {"kind": "text"}
        assert wait_until(lambda: all(replica.load.waiting == 0.0 for replica in pool.replicas))
        spilled = send(client, server, "held", "spilled", 6)
        chosen = send(client, server, "held", "chosen", 6)
    assert spilled.headers["x-tandem-score"] == chosen.headers["x-tandem-score"], "the two runs are not alike"
    assert chosen.headers["x-tandem-target"] == "edge", "six cloud steps of its own: held back from the cloud"
    assert spilled.headers["x-tandem-target"] == "cloud", "six spills counted as the judge's own cloud steps"
    assert spilled.headers["x-tandem-reason"] == "judge"


TRACEBACK = "Traceback (most recent call last):\n  File 'calc.py', line 3\nZeroDivisionError: division by zero"


def _judged(client: httpx.Client, server: GatewayServer, route: str, run: str, last: bool) -> httpx.Response:
    body = {"model": route, "messages": [{"role": "user", "content": "Fix calc.py"}]}
    if last:  # a state that scores higher than the first one's
        body["messages"] += [
            {"role": "assistant", "content": "```bash\nsed -i 's/a/b/' calc.py && python calc.py\n```"},
            {"role": "user", "content": TRACEBACK},
        ]
    return client.post(f"{server.base_url}/chat/completions", json=body, headers={"x-session-id": run})


def test_steps_spilled_for_load_do_not_count_as_the_judges_cloud_steps(
    make_gateway: MakeGateway, replicas: list[FakeUpstream], cloud: FakeUpstream
) -> None:
    """A run whose steps went to the cloud because the edge was full has not used its cloud share:
    the controller's next threshold for it is the one of a run with no cloud step."""
    edge = {"endpoints": [r.base_url for r in replicas], "base_url": None, "pool": {"scrape_interval_s": 0.05}}
    spills = 6
    with httpx.Client(timeout=10) as client:
        # The scores of the run's states, step by step (features read no routing, only the run).
        probe = make_gateway(routes={"p": {"strategy": "judge", "threshold": 1.0}}, upstream_overrides={"edge": edge})
        scores = [float(_judged(client, probe, "p", "m", i == spills).headers["x-tandem-score"]) for i in range(7)]
        last = scores[-1]
        below = max(scores[:-1])
        assert below < last - 0.05, scores  # the spilled steps' states score lower
        # Held at 40% from between the two scores: the first steps are the judge's edge
        # steps (spilled to the cloud), and the last one is a cloud step only if the run's count
        # of cloud steps leaves the spills out (counted, its share 6/6 would lift the threshold
        # by 0.5 x (7.6/10 - 0.4) = 0.18 over the score).
        route = {
            "strategy": "judge",
            "target_cloud_share": 0.4,
            "threshold": (below + last) / 2,
            "edge_full": "cloud",
            "edge_full_waiting": 4,
        }
        server = make_gateway(routes={"j": route}, upstream_overrides={"edge": edge})
        fill(replicas, 9)
        assert wait_until(lambda: scraped(server, 9.0))
        for _ in range(spills):
            spilled = _judged(client, server, "j", "run", last=False)
            assert (spilled.headers["x-tandem-target"], spilled.headers["x-tandem-reason"]) == ("cloud", "edge_full")
        for fake in replicas:
            fake.metrics_text = metrics(0)
            fake.default = {"kind": "text"}
        assert wait_until(lambda: scraped(server, 0.0))
        decided = _judged(client, server, "j", "run", last=True)
    assert decided.headers["x-tandem-reason"] == "judge"
    assert float(decided.headers["x-tandem-score"]) == pytest.approx(last, abs=1e-4)
    assert decided.headers["x-tandem-target"] == "cloud"

"""The edge as a pool of replicas (`upstreams.edge.endpoints`): real fake-vLLM servers as
replicas behind a real gateway, on both trajectory stores."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from router import notes
from router.edge.pool import EdgePool
from router.settings import ConfigError, load_settings
from tests.both_stores import MakeGateway
from tests.both_stores import make_gateway as make_gateway
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, wait_until

ROUTES = {"tandem": {"strategy": "edge", "failover": True}, "local": {"strategy": "edge", "failover": False}}


@pytest.fixture()
def replicas() -> Iterator[list[FakeUpstream]]:
    started = [FakeUpstream(name=f"edge{i}", model="edge-model").start() for i in range(3)]
    yield started
    for fake in started:
        fake.stop()


def pool_gateway(make: MakeGateway, replicas: list[FakeUpstream], **pool: Any) -> GatewayServer:
    edge = {"endpoints": [r.base_url for r in replicas], "base_url": None, **pool}
    return make(routes=ROUTES, edge_url=replicas[0].base_url, upstream_overrides={"edge": edge})


def run(client: httpx.Client, server: GatewayServer, trajectory: str, steps: int, model: str = "tandem") -> None:
    """`steps` steps of one trajectory, each resending the run's growing history."""
    for step in range(steps):
        response = client.post(
            f"{server.base_url}/chat/completions",
            json={"model": model, "messages": [{"role": "user", "content": f"task <{trajectory}>"}] * (step + 1)},
            headers={"x-session-id": trajectory},
        )
        assert response.status_code == 200, response.text


def served(replicas: list[FakeUpstream], trajectory: str) -> list[int]:
    """Which replica answered each step of `trajectory`, in order."""
    seen = [
        (record.at, index)
        for index, fake in enumerate(replicas)
        for record in fake.received
        if f"task <{trajectory}>" in str(record.body)
    ]
    return [index for _, index in sorted(seen)]


def home_of(server: GatewayServer, trajectory: str) -> str | None:
    state = server.run(server.app.state.engine.tracker.store.get(trajectory))
    return None if state is None else state.notes.get(notes.POOL_HOME)


def sample(server: GatewayServer, name: str, **labels: str) -> float:
    """A metric's samples with `labels`, summed (every process's series of the gateway)."""
    registry = server.app.state.engine.metrics.registry
    return sum(
        s.value
        for family in registry.collect()
        for s in family.samples
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    )


def test_affinity_keeps_each_run_on_one_replica(
    make_gateway: MakeGateway, replicas: list[FakeUpstream], cloud: FakeUpstream
) -> None:
    server = pool_gateway(make_gateway, replicas)
    with httpx.Client(timeout=10) as client:
        for n in range(12):
            run(client, server, f"run-{n}", 4)
    homes: list[int] = []
    for n in range(12):
        where = served(replicas, f"run-{n}")
        assert len(where) == 4 and len(set(where)) == 1, (n, where)
        assert home_of(server, f"run-{n}") == replicas[where[0]].base_url
        homes.append(where[0])
    # One step in flight at a time: only the bound on homes (1.0 × the mean) spreads them evenly.
    assert sorted(homes.count(index) for index in range(3)) == [4, 4, 4], homes
    assert cloud.received == []


def test_a_replica_stopped_mid_run_loses_no_step_and_its_runs_re_home(
    make_gateway: MakeGateway, replicas: list[FakeUpstream], cloud: FakeUpstream
) -> None:
    server = pool_gateway(make_gateway, replicas, pool={"breaker_failures": 1, "breaker_s": 60})
    with httpx.Client(timeout=10) as client:
        for n in range(9):
            run(client, server, f"run-{n}", 2)
        homes = {n: served(replicas, f"run-{n}")[0] for n in range(9)}
        victim = homes[0]
        replicas[victim].stop()
        for n in range(9):
            run(client, server, f"run-{n}", 3)  # every step answered (run asserts 200)
    for n in range(9):
        where = served(replicas, f"run-{n}")
        assert len(where) == 2 + 3
        if homes[n] == victim:
            # Re-homed once, then kept on its new home.
            assert victim not in where[2:] and len(set(where[2:])) == 1, where
            assert home_of(server, f"run-{n}") == replicas[where[-1]].base_url
        else:
            assert set(where) == {homes[n]}, "a run whose replica lived moved"
    assert cloud.received == [], "the pool failed over inside itself, not to the cloud"


def test_every_replica_down_fails_over_to_the_cloud_but_a_local_route_fails(
    make_gateway: MakeGateway, replicas: list[FakeUpstream], cloud: FakeUpstream
) -> None:
    server = pool_gateway(make_gateway, replicas)
    for fake in replicas:
        fake.stop()
    with httpx.Client(timeout=10) as client:
        answered = client.post(
            f"{server.base_url}/chat/completions",
            json={"model": "tandem", "messages": [{"role": "user", "content": "hi"}]},
        )
        assert answered.status_code == 200 and answered.headers["x-tandem-target"] == "cloud"
        refused = client.post(
            f"{server.base_url}/chat/completions",
            json={"model": "local", "messages": [{"role": "user", "content": "hi"}]},
        )
        assert refused.status_code >= 500
        # The message says every replica failed, not only the last one's error.
        assert "every replica of the pool failed (3)" in refused.json()["error"]["message"]
    assert len(cloud.received) == 1


def test_round_robin_takes_replicas_in_turn(
    make_gateway: MakeGateway, replicas: list[FakeUpstream], cloud: FakeUpstream
) -> None:
    server = pool_gateway(make_gateway, replicas, balance="round_robin")
    with httpx.Client(timeout=10) as client:
        run(client, server, "rr", 6)
    assert served(replicas, "rr") in ([0, 1, 2, 0, 1, 2], [1, 2, 0, 1, 2, 0], [2, 0, 1, 2, 0, 1])


def test_least_loaded_avoids_the_busy_replica(
    make_gateway: MakeGateway, replicas: list[FakeUpstream], cloud: FakeUpstream
) -> None:
    server = pool_gateway(make_gateway, replicas[:2], balance="least_loaded")
    replicas[0].default = {"kind": "text", "delay": 1.0}
    replicas[1].default = {"kind": "text", "delay": 1.0}
    import concurrent.futures

    with httpx.Client(timeout=10) as client, concurrent.futures.ThreadPoolExecutor(4) as workers:
        list(workers.map(lambda n: run(client, server, f"ll-{n}", 1), range(4)))
    assert len(replicas[0].received) == 2 and len(replicas[1].received) == 2


@pytest.mark.parametrize(
    ("edge", "cloud", "message"),
    [
        ({"endpoints": ["http://a/v1", "http://a/v1/"]}, {}, "endpoints lists a base URL twice"),
        # One server spelt twice: the pool names each replica by its URL without these.
        ({"endpoints": ["http://a/v1", "http://user:pw@a/v1"]}, {}, "endpoints lists a base URL twice"),
        ({"endpoints": ["http://a/v1", "http://a/v1?x=1"]}, {}, "endpoints lists a base URL twice"),
        ({"endpoints": ["http://a:8000/v1", "http://A:8000/v1"]}, {}, "endpoints lists a base URL twice"),
        ({"endpoints": ["http://a/v1", "http://a:80/v1"]}, {}, "endpoints lists a base URL twice"),
        ({"endpoints": ["https://a/v1", "https://a:443/v1/"]}, {}, "endpoints lists a base URL twice"),
        ({"endpoints": ["http://a/v1", "ftp://b/v1"]}, {}, "each of endpoints must start with http"),
        ({"endpoints": ["http://a/v1"], "base_url": "http://c/v1"}, {}, "is not one of endpoints"),
        ({}, {"endpoints": ["http://127.0.0.1:2/v1"]}, "endpoints (a pool of replicas) is for the edge upstream only"),
        ({"endpoints": ["http://a/v1"], "balance": "random"}, {}, "balance"),
    ],
)
def test_a_bad_pool_is_refused_with_the_key_named(edge: dict[str, Any], cloud: dict[str, Any], message: str) -> None:
    upstreams = {
        "edge": {"base_url": None, "model": "e", **edge},
        "cloud": {"base_url": "http://127.0.0.1:2/v1", "model": "c", **cloud},
    }
    if upstreams["edge"]["base_url"] is None and not edge.get("endpoints"):
        upstreams["edge"]["base_url"] = "http://127.0.0.1:1/v1"
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_settings(upstreams=upstreams)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_busy_home_spills_a_step_and_re_homes_only_after_staying_busy() -> None:
    clock = Clock()
    pool = EdgePool([("http://a/v1", None), ("http://b/v1", None)], rehome_after_s=5, clock=clock)  # type: ignore[list-item]
    first = pool.place("run", None)
    home = first.replicas[0]
    assert first.new_home == home.url
    assert pool.place("run", home.url).replicas[0] is home and pool.place("run", home.url).new_home is None
    leases = [pool.lease(home, True) for _ in range(3)]  # other runs fill the home
    spill = pool.place("run", home.url)
    assert spill.spilled and spill.new_home is None and spill.replicas[0] is not home
    clock.now += 6  # still over the bound after rehome_after_s: the run moves
    moved = pool.place("run", home.url)
    assert moved.new_home is not None and moved.new_home != home.url
    for lease in leases:
        lease.release()
    assert home.in_flight == 0


def test_the_breaker_takes_a_failing_replica_out_then_tries_it_again() -> None:
    clock = Clock()
    pool = EdgePool([("http://a/v1", None), ("http://b/v1", None)], breaker_failures=2, breaker_s=10, clock=clock)  # type: ignore[list-item]
    home = pool.place("run", None).replicas[0]
    pool.failed(home, "status", 400)  # a refusal of the request says nothing of its health
    pool.failed(home, "connect", None)
    assert pool.place("run", home.url).replicas[0] is home
    pool.failed(home, "connect", None)
    away = pool.place("run", home.url)
    assert home not in away.replicas and away.new_home is not None
    clock.now += 11
    assert home in pool.place("run", away.new_home).replicas


def test_after_the_breakers_wait_one_step_tries_the_replica_while_the_others_pass_it_by() -> None:
    clock = Clock()
    pool = EdgePool([("http://a/v1", None), ("http://b/v1", None)], breaker_failures=1, breaker_s=10, clock=clock)  # type: ignore[list-item]
    sick = pool.replicas[0]
    pool.failed(sick, "timeout", None)
    clock.now += 11
    assert sick in pool.place("one", None).replicas
    trial = pool.lease(sick, True)  # a step tries it (it may still hang)...
    # ...and the burst behind it passes it by until that step ends.
    assert all(sick not in pool.place(f"run{i}", None).replicas for i in range(20))
    trial.release()
    pool.failed(sick, "timeout", None)  # the trial failed: out for another wait
    assert sick not in pool.place("two", None).replicas
    clock.now += 11
    again = pool.lease(sick, True)
    assert sick not in pool.place("three", None).replicas
    pool.answered(sick)  # this trial answered: back for every step
    again.release()
    assert all(sick in pool.place(f"run{i}", None).replicas for i in range(5))
    clock.now += 100
    pool.lease(sick, True).release()  # a closed breaker: a step is no trial
    assert not sick.trial


def test_a_trial_that_ends_without_a_verdict_lets_the_next_step_try() -> None:
    clock = Clock()
    pool = EdgePool([("http://a/v1", None), ("http://b/v1", None)], breaker_failures=1, breaker_s=10, clock=clock)  # type: ignore[list-item]
    sick = pool.replicas[0]
    pool.failed(sick, "connect", None)
    clock.now += 11
    pool.lease(sick, True).release()  # cancelled by its client, or a request the replica refused
    assert sick in pool.place("next", None).replicas


def test_a_streamed_step_holds_its_replica_until_its_stream_ends(
    make_gateway: MakeGateway, replicas: list[FakeUpstream], cloud: FakeUpstream
) -> None:
    server = pool_gateway(make_gateway, replicas)
    pool = server.app.state.engine.edge_pool
    body = {"model": "tandem", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with httpx.Client(timeout=10) as client:
        for fake in replicas:
            fake.default = {"kind": "text", "chunks": 5, "chunk_delay": 0.2}
        with client.stream("POST", f"{server.base_url}/chat/completions", json=body) as response:
            chunks = response.iter_bytes()
            assert next(chunks) and sum(r.in_flight for r in pool.replicas) == 1
            assert b"[DONE]" in b"".join(chunks)
    assert wait_until(lambda: sum(r.in_flight for r in pool.replicas) == 0)


def test_a_steps_inner_edge_calls_go_to_its_home_replica_too(
    make_gateway: MakeGateway, replicas: list[FakeUpstream], cloud: FakeUpstream
) -> None:
    edge = {"endpoints": [r.base_url for r in replicas], "base_url": None}
    # The entropy route probes the edge (an inner call with the step's whole context) first.
    server = make_gateway(
        routes={"probe": {"strategy": "entropy", "threshold": 9.0}}, upstream_overrides={"edge": edge}
    )
    with httpx.Client(timeout=10) as client:
        for n in range(8):
            run(client, server, f"probe-{n}", 2, model="probe")
    homes = set()
    for n in range(8):
        where = served(replicas, f"probe-{n}")
        assert len(where) >= 2 and len(set(where)) == 1, (n, where)  # probes and steps alike
        homes.add(where[0])
    assert homes - {0}, "every run homed on the first replica: the check would not tell"
    probes = [r for fake in replicas for r in fake.received if r.body.get("max_tokens") == 1]
    assert len(probes) >= 8


def test_a_run_whose_home_refuses_moves_to_the_replica_that_answered_before_the_breaker_opens(
    make_gateway: MakeGateway, replicas: list[FakeUpstream], cloud: FakeUpstream
) -> None:
    # The breaker needs five failures: until then a dead home would be tried first at every step,
    # and a run with a step or two left would never re-home. It moves at its first failed-over step.
    server = pool_gateway(make_gateway, replicas, pool={"breaker_failures": 5})
    with httpx.Client(timeout=10) as client:
        run(client, server, "mover", 2)
        home = served(replicas, "mover")[0]
        replicas[home].stop()
        run(client, server, "mover", 3)
        metrics = client.get(f"{server.url}/metrics").text
    where = served(replicas, "mover")
    assert where[:2] == [home, home] and home not in where[2:] and len(set(where[2:])) == 1, where
    assert home_of(server, "mover") == replicas[where[-1]].base_url
    assert 'tandem_edge_rehomes_total{reason="replica_down"} 1.0' in metrics, metrics
    assert cloud.received == []


def probing_gateway(make: MakeGateway, replicas: list[FakeUpstream]) -> GatewayServer:
    """A gateway whose `probe` route's entropy strategy probes the pool's replicas (an inner call
    a step before its own), the breaker opening only after 5 failures."""
    edge = {"endpoints": [r.base_url for r in replicas], "base_url": None, "pool": {"breaker_failures": 5}}
    server = make(routes={"probe": {"strategy": "entropy", "threshold": 9.0}}, upstream_overrides={"edge": edge})
    for fake in replicas:
        fake.default = {"kind": "text", "top_logprobs": [-0.1, -2.5]}  # a probe the strategy can read
    return server


def test_an_inner_edge_call_fails_over_to_the_next_replica_when_the_home_dies(
    make_gateway: MakeGateway, replicas: list[FakeUpstream], cloud: FakeUpstream
) -> None:
    server = probing_gateway(make_gateway, replicas)
    with httpx.Client(timeout=10) as client:
        run(client, server, "orphan", 1, model="probe")
        home = served(replicas, "orphan")[0]
        replicas[home].stop()  # the breaker is not open yet: the next step still places home first
        reply = client.post(
            f"{server.base_url}/chat/completions",
            json={"model": "probe", "messages": [{"role": "user", "content": "task <orphan>"}] * 2},
            headers={"x-session-id": "orphan"},
        )
    assert reply.status_code == 200, reply.text
    # The probe found another replica: the entropy strategy decided, it did not fall back.
    assert reply.headers["x-tandem-reason"] == "entropy"
    later = [r for i, fake in enumerate(replicas) if i != home for r in fake.received if "task <orphan>" in str(r.body)]
    assert [r.body.get("max_tokens") for r in later] == [1, None], "the probe, then the step, on a live replica"
    assert cloud.received == []


def test_every_call_sent_is_counted_so_failed_calls_are_a_share_of_them(
    make_gateway: MakeGateway, replicas: list[FakeUpstream], cloud: FakeUpstream
) -> None:
    # `tandem_upstream_calls_total` is the denominator of TandemEdgeDown: it counts a step's
    # call, each replica tried and a strategy's inner calls, as the errors counter does.
    server = probing_gateway(make_gateway, replicas)
    with httpx.Client(timeout=10) as client:
        run(client, server, "counted", 1, model="probe")  # a probe and the step: 2 calls
        dead = replicas[served(replicas, "counted")[0]]
        dead.stop()
        run(client, server, "counted", 2, model="probe")  # step 1 again and step 2, each: a probe
        # to the dead home (failed), a probe to a live replica, the step: 6 calls, 2 failed

    answered = sum(len(fake.received) for fake in replicas)
    assert answered == 6
    assert sample(server, "tandem_upstream_errors_total", upstream="edge") == 2
    assert sample(server, "tandem_upstream_calls_total", upstream="edge") == answered + 2 == 8
    assert sample(server, "tandem_upstream_calls_total", upstream="cloud") == len(cloud.received) == 0
    # Which replica failed: its own series.
    assert sample(server, "tandem_edge_replica_failures_total", replica=dead.base_url) == 2
    assert sample(server, "tandem_edge_replica_failures_total") == 2


def test_readyz_shows_each_replica_and_the_pool_is_reachable_while_one_is(
    make_gateway: MakeGateway, replicas: list[FakeUpstream], cloud: FakeUpstream
) -> None:
    server = pool_gateway(make_gateway, replicas)
    replicas[0].stop()
    with httpx.Client(timeout=10) as client:

        def first_down() -> bool:  # a probe's answer is kept 2 s
            return client.get(f"{server.url}/readyz").json()["upstreams"]["edge"]["replicas"][0]["reachable"] is False

        assert wait_until(first_down, timeout=6)
        ready = client.get(f"{server.url}/readyz")
        metrics = client.get(f"{server.url}/metrics").text
    edge = ready.json()["upstreams"]["edge"]
    assert ready.status_code == 200 and edge["reachable"] is True
    assert [r["base_url"] for r in edge["replicas"]] == [r.base_url for r in replicas]
    assert [r["reachable"] for r in edge["replicas"]] == [False, True, True]
    assert 'tandem_upstream_reachable{upstream="edge"} 1.0' in metrics


def test_tandem_check_names_the_pool_and_no_credential() -> None:
    from router.cli.config import summary

    settings = load_settings(
        upstreams={
            "edge": {"endpoints": ["http://u:secret@10.0.0.1:8000/v1", "http://10.0.0.2:8000/v1"], "model": "e"},
            "cloud": {"base_url": "http://127.0.0.1:2/v1", "model": "c"},
        }
    )
    line = next(line for line in summary(settings) if line.startswith("upstream edge:"))
    assert line == (
        "upstream edge: a pool of 2 replicas (http://10.0.0.1:8000/v1, http://10.0.0.2:8000/v1), "
        "balance affinity, model e (no key)"
    )


def two_or_three(replicas: int, clock: Clock, **bounds: float) -> EdgePool:
    urls = [(f"http://10.0.0.{i}/v1", None) for i in range(replicas)]
    return EdgePool(urls, clock=clock, **bounds)  # type: ignore[arg-type]


def test_new_runs_spread_within_the_bound_on_homes_with_no_step_in_flight() -> None:
    for replicas, runs in ((2, 5), (3, 30), (4, 41)):
        pool = two_or_three(replicas, Clock())
        for n in range(runs):
            placed = pool.place(f"ns:run-{n}", None)
            assert placed.new_home == placed.replicas[0].url
            # Every run placed so far counted: no replica above ceil(1.0 × the mean).
            assert max(r.homes for r in pool.replicas) <= -(-(n + 1) // replicas), [r.homes for r in pool.replicas]
        assert sum(r.homes for r in pool.replicas) == runs
    pool = two_or_three(2, Clock(), home_bound=1.5)  # a looser bound lets the hash decide more
    for n in range(10):
        pool.place(f"ns:run-{n}", None)
    assert max(r.homes for r in pool.replicas) <= 8


def test_an_existing_run_is_never_moved_by_the_count_of_homes() -> None:
    clock = Clock()
    pool = two_or_three(2, clock)
    crowded = pool.replicas[0]
    # Runs another gateway process homed on one replica: their steps stay there, counted.
    for n in range(6):
        placed = pool.place(f"ns:other-{n}", crowded.url)
        assert placed.replicas[0] is crowded and placed.new_home is None and not placed.spilled
    assert (crowded.homes, pool.replicas[1].homes) == (6, 0)
    clock.now += 1
    for n in range(6):  # and again, later: the count alone never moves them
        assert pool.place(f"ns:other-{n}", crowded.url).new_home is None
    # A new run goes where homes are fewer, whatever its hash says.
    assert all(pool.place(f"ns:new-{n}", None).new_home == pool.replicas[1].url for n in range(4))
    assert (crowded.homes, pool.replicas[1].homes) == (6, 4)


def test_a_dead_replicas_runs_re_home_within_the_bound_and_idle_runs_stop_counting() -> None:
    clock = Clock()
    pool = two_or_three(3, clock, breaker_failures=1, home_idle_s=60)
    homes = {f"ns:run-{n}": pool.place(f"ns:run-{n}", None).new_home for n in range(12)}
    dead = pool.replicas[1]
    orphans = [run for run, home in homes.items() if home == dead.url]
    assert len(orphans) == 4
    pool.failed(dead, "connect", None)
    for run, home in homes.items():
        placed = pool.place(run, home)
        if run in orphans:
            assert placed.rehomed == "replica_down" and placed.new_home not in (None, dead.url)
            assert dead not in placed.replicas
        else:
            assert placed.new_home is None and placed.replicas[0].url == home
    assert dead.homes == 0 and sorted(r.homes for r in pool.replicas) == [0, 6, 6]
    clock.now += 61  # every run idle past home_idle_s: none counts, the next new run is placed by hash alone
    placed = pool.place("ns:late", None)
    assert sorted(r.homes for r in pool.replicas) == [0, 0, 1] and placed.new_home != dead.url


def test_a_replicas_metrics_that_are_no_load_are_ignored() -> None:
    """`NaN`, `+Inf` and negative figures are valid exposition but no queue: one replica's made
    every step on every route fail (placement divided by them) or drew every step to it."""
    from router.edge.scrape import parse_load

    text = b"vllm:num_requests_waiting NaN\nvllm:num_requests_running +Inf\nvllm:kv_cache_usage_perc -0.5\n"
    load = parse_load(text, 1.0)
    assert (load.waiting, load.running, load.kv_cache_usage) == (0.0, 0.0, 0.0)
    clock = Clock()
    pool = EdgePool([("http://a/v1", None), ("http://b/v1", None)], clock=clock)  # type: ignore[list-item]
    pool.replicas[0].load = parse_load(text, clock.now)
    assert len(pool.place("run", None).replicas) == 2


def test_a_queue_reported_long_ago_no_longer_steers_placement() -> None:
    clock = Clock()
    pool = EdgePool([("http://a/v1", None), ("http://b/v1", None)], balance="least_loaded", stale_s=2.5, clock=clock)  # type: ignore[list-item]
    busy = pool.replicas[0]
    busy.load.waiting, busy.load.at = 8.0, clock.now
    assert pool.place("run", None).replicas[0] is not busy
    clock.now += 3  # its metrics have said nothing since (slow, failing): the reading is stale
    assert pool.place("run", None).replicas[0] is busy  # (the lower index, as when loads tie)


def test_a_replica_failing_streams_mid_answer_is_taken_out() -> None:
    """A replica that drops every stream after its first bytes counted no failure: its breaker
    never opened and its runs never moved."""
    clock = Clock()
    pool = EdgePool([("http://a/v1", None), ("http://b/v1", None)], breaker_failures=3, clock=clock)  # type: ignore[list-item]
    home = pool.place("run", None).replicas[0]
    for _ in range(3):
        lease = pool.lease(home, True)
        lease.release()
        lease.failed("disconnected")
    away = pool.place("run", home.url)
    assert home not in away.replicas and away.rehomed == "replica_down"


def test_with_every_breaker_open_one_replica_is_tried_not_all() -> None:
    """Every replica hung: each step waited its first-byte timeout on each of them before the
    cloud, breakers open or not. One is tried (the one out longest), then the cloud."""
    clock = Clock()
    pool = EdgePool(
        [("http://a/v1", None), ("http://b/v1", None), ("http://c/v1", None)], breaker_failures=1, clock=clock
    )  # type: ignore[list-item]
    for replica in (pool.replicas[1], pool.replicas[0], pool.replicas[2]):
        pool.failed(replica, "timeout", None)
        clock.now += 1
    assert pool.place("run", None).replicas == [pool.replicas[1]]


def test_a_stream_dropped_mid_answer_opens_the_replicas_breaker_through_the_gateway(
    make_gateway: MakeGateway, replicas: list[FakeUpstream], cloud: FakeUpstream
) -> None:
    server = pool_gateway(make_gateway, replicas, pool={"breaker_failures": 2})
    pool = server.app.state.engine.edge_pool
    for fake in replicas:
        fake.default = {"kind": "drop", "after": 2, "text": "a b c d e f"}
    body = {"model": "tandem", "stream": True, "messages": [{"role": "user", "content": "task <dropped>"}]}
    with httpx.Client(timeout=10) as client:
        for _ in range(2):
            response = client.post(
                f"{server.base_url}/chat/completions", json=body, headers={"x-session-id": "dropped"}
            )
            assert b"upstream_stream_failed" in response.content
    first = served(replicas, "dropped")
    assert first[0] == first[1]  # both on the run's home
    assert not pool.replicas[first[0]].alive(pool.clock())

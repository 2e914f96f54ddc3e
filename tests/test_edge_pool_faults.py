"""The edge pool when a replica misbehaves: one answering 200 with something that is not a chat
completion, a home that keeps spilling, a replica coming back, the whole pool out, and pool
settings that would do nothing or misread load. Real fake-vLLM servers behind a real gateway,
on both trajectory stores, and the pool's placement on a clock of its own."""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from aiohttp import web

from router.edge.pool import REHOME_AFTER_SPILLS, EdgePool
from router.edge.scrape import metrics_url
from router.settings import ConfigError, load_settings
from tests.both_stores import MakeGateway
from tests.both_stores import make_gateway as make_gateway
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, wait_until
from tests.test_edge_pool import Clock, home_of, pool_gateway, run, sample, served
from tests.test_edge_pool import replicas as replicas

HTML = {"kind": "raw", "status": 200, "content_type": "text/html", "body": "<html>502 Bad Gateway</html>"}
ERROR_OBJECT = {
    "kind": "raw",
    "status": 200,
    "content_type": "application/json",
    "body": '{"error": {"message": "bad", "code": 400}}',
}


def steps(
    client: httpx.Client, server: GatewayServer, trajectory: str, start: int, stop: int, model: str = "tandem"
) -> None:
    """Steps `start` to `stop - 1` of a run `run` began (each resends the history so far)."""
    for step in range(start, stop):
        response = client.post(
            f"{server.base_url}/chat/completions",
            json={"model": model, "messages": [{"role": "user", "content": f"task <{trajectory}>"}] * (step + 1)},
            headers={"x-session-id": trajectory},
        )
        assert response.status_code == 200, response.text


# -- a replica answering 200 with no chat completion --------------------------------------------


@pytest.mark.parametrize("answer", [HTML, ERROR_OBJECT], ids=["html", "error-object"])
def test_a_replica_answering_200_with_no_completion_is_taken_out_and_its_runs_re_home(
    make_gateway: MakeGateway, replicas: list[FakeUpstream], cloud: FakeUpstream, answer: dict[str, Any]
) -> None:
    """Its failures were counted (`invalid_answer`) but never reached its breaker: it stayed
    available, new runs kept being homed there, and a third of all steps paid a round trip."""
    server = pool_gateway(make_gateway, replicas, pool={"breaker_failures": 3, "breaker_s": 60})
    pool = server.app.state.engine.edge_pool
    sick = replicas[0]
    sick.default = answer
    with httpx.Client(timeout=10) as client:
        for n in range(9):
            run(client, server, f"run-{n}", 3)  # every step answered 200 (run asserts it)
    assert not pool.replicas[0].alive(pool.clock()), "its breaker opened"
    # Three invalid answers, each followed by another replica's completion, then no step more.
    assert len(sick.received) == 3
    moved = [n for n in range(9) if served(replicas, f"run-{n}")[0] == 0]
    assert len(moved) == 3
    for n in range(9):
        where = served(replicas, f"run-{n}")
        assert 0 not in where[1:], (n, where)  # a run whose home failed so re-homed at once
        assert home_of(server, f"run-{n}") != sick.base_url
    assert sample(server, "tandem_edge_replica_failures_total", replica=sick.base_url, kind="invalid_answer") == 3
    assert sample(server, "tandem_edge_rehomes_total", reason="replica_down") == 3
    assert cloud.received == []


BAD_STREAM = {
    "kind": "raw",
    "status": 200,
    "content_type": "text/event-stream",
    "body": 'data: {"error": {"message": "a bad request", "type": "BadRequestError", "code": 400}}\n\n',
}


@pytest.mark.parametrize(
    ("fake", "stream", "status"),
    [
        (ERROR_OBJECT, False, 502),
        (BAD_STREAM, True, 502),  # as vLLM streams some bad requests: a 200, then an error event
        ({"kind": "error", "status": 400}, False, 400),
        ({"kind": "error", "status": 422}, False, 422),
    ],
    ids=["error-object", "error-event", "400", "422"],
)
def test_a_clients_bad_request_opens_no_breaker(
    make_gateway: MakeGateway,
    replicas: list[FakeUpstream],
    cloud: FakeUpstream,
    fake: dict[str, Any],
    stream: bool,
    status: int,
) -> None:
    """A request every replica answers wrongly is the request's fault, not theirs: a breaker of
    one failure, with the request sent five times, each tried on every replica, opens nothing."""
    server = pool_gateway(make_gateway, replicas, pool={"breaker_failures": 1, "breaker_s": 60})
    pool = server.app.state.engine.edge_pool
    body = {"model": "local", "stream": stream, "fake": fake, "messages": [{"role": "user", "content": "task <bad>"}]}
    with httpx.Client(timeout=10) as client:
        for _ in range(5):
            reply = client.post(f"{server.base_url}/chat/completions", json=body, headers={"x-session-id": "bad"})
            assert reply.status_code == status, reply.text
            assert "the edge pool is out" not in reply.text
        assert all(replica.alive(pool.clock()) for replica in pool.replicas)
        run(client, server, "next", 2, model="local")  # and the pool serves the next run
    assert len(set(served(replicas, "next"))) == 1
    assert sample(server, "tandem_edge_rehomes_total") == 0
    assert cloud.received == []


# -- a home that keeps spilling -----------------------------------------------------------------


def test_a_run_whose_steps_keep_spilling_from_its_home_re_homes_and_is_counted(
    make_gateway: MakeGateway, replicas: list[FakeUpstream], cloud: FakeUpstream
) -> None:
    """Its steps were served elsewhere step after step while its home note, and its count of
    homes, stayed on the busy replica, and nothing counted those spills."""
    server = pool_gateway(make_gateway, replicas[:2], pool={"load_bound": 1.0})
    pool = server.app.state.engine.edge_pool
    with httpx.Client(timeout=10) as client:
        run(client, server, "busy", 1)
        home = served(replicas, "busy")[0]
        held = pool.lease(pool.replicas[home], first=False)  # another step holds the home: over the bound
        try:
            steps(client, server, "busy", 1, 1 + REHOME_AFTER_SPILLS + 1)
        finally:
            held.release()
    other = 1 - home
    assert served(replicas, "busy") == [home] + [other] * (REHOME_AFTER_SPILLS + 1)
    assert home_of(server, "busy") == replicas[other].base_url
    assert sample(server, "tandem_edge_home_spills_total") == REHOME_AFTER_SPILLS
    assert sample(server, "tandem_edge_rehomes_total", reason="overloaded") == 1
    assert (pool.replicas[home].homes, pool.replicas[other].homes) == (0, 1)


def test_a_home_passing_in_and_out_of_the_bound_still_re_homes_a_run_that_keeps_spilling() -> None:
    """The bound was a replica's "over since": any placement that found the home under it for a
    moment (another run's step) started it again, so a slow home never stayed over it."""
    clock = Clock()
    pool = EdgePool([("http://a/v1", None), ("http://b/v1", None)], rehome_after_s=5, clock=clock)  # type: ignore[list-item]
    home = pool.replicas[0]
    pool.place("other", home.url)
    for _ in range(REHOME_AFTER_SPILLS):
        leases = [pool.lease(home, False) for _ in range(3)]
        spill = pool.place("run", home.url)
        assert spill.spilled and spill.new_home is None and spill.replicas[0] is not home
        for lease in leases:
            lease.release()
        assert not pool.place("other", home.url).spilled  # the home is under the bound again
        clock.now += 1
    leases = [pool.lease(home, False) for _ in range(3)]
    moved = pool.place("run", home.url)
    assert moved.rehomed == "overloaded" and moved.new_home == pool.replicas[1].url
    assert moved.replicas == [pool.replicas[1], home], "the busy home is still tried, last"
    for lease in leases:
        lease.release()
    # A step at home ends a streak: one spill after it is a spill again, not a move.
    pool.place("run2", home.url)
    leases = [pool.lease(home, False) for _ in range(3)]
    assert pool.place("run2", home.url).spilled
    for lease in leases:
        lease.release()
    pool.place("run2", home.url)
    leases = [pool.lease(home, False) for _ in range(3)]
    assert pool.place("run2", home.url).spilled
    for lease in leases:
        lease.release()


# -- a replica that comes back ------------------------------------------------------------------


def test_runs_starting_while_a_returning_replica_is_on_trial_are_homed_there_once_it_answered() -> None:
    """While its one trial step was in flight every other placement passed it by, and homes never
    move back: 9 runs starting together were homed 1, 4 and 4."""
    clock = Clock()
    pool = EdgePool([(f"http://10.0.0.{i}/v1", None) for i in range(3)], breaker_failures=1, breaker_s=10, clock=clock)  # type: ignore[list-item]
    back = pool.replicas[0]
    pool.failed(back, "connect", None)
    for n in range(9):  # runs of its outage, homed on the two others
        assert pool.place(f"before-{n}", None).new_home != back.url
    clock.now += 11
    first = pool.place("after-0", None)
    assert first.new_home == back.url  # it holds no run: the first new one goes there and tries it
    trial = pool.lease(back, True)
    during = {f"after-{n}": pool.place(f"after-{n}", None) for n in range(1, 9)}
    assert all(back not in placed.replicas for placed in during.values()), "no step but the trial goes there"
    pending = [name for name, placed in during.items() if placed.home_pending]
    assert all(during[name].new_home is None for name in pending)
    committed = {name: placed.new_home for name, placed in during.items() if not placed.home_pending}
    pool.answered(back)  # the trial answered
    trial.release()
    homes = {"after-0": back.url, **committed}
    for name in pending:  # their next step chooses again
        placed = pool.place(name, None)
        assert placed.new_home is not None and placed.rehomed is None
        homes[name] = placed.new_home
    on_back = sum(1 for url in homes.values() if url == back.url)
    assert on_back >= 5, homes  # it held none of the 18 live runs: it catches up
    assert sorted(r.homes for r in pool.replicas)[0] >= 5


def test_a_new_run_waiting_on_a_trial_that_fails_is_homed_on_a_live_replica() -> None:
    clock = Clock()
    pool = EdgePool([(f"http://10.0.0.{i}/v1", None) for i in range(3)], breaker_failures=1, breaker_s=10, clock=clock)  # type: ignore[list-item]
    back = pool.replicas[0]
    for n in range(6):
        pool.place(f"before-{n}", None)
    pool.failed(back, "connect", None)
    clock.now += 11
    trial = pool.lease(back, True)
    waiting = pool.place("new", None)
    assert waiting.home_pending and back not in waiting.replicas
    # A run homed there before keeps its home while it is tried: this step goes elsewhere.
    homed_there = next(name for name in (f"before-{n}" for n in range(6)) if pool._homes[name].replica is back)
    kept = pool.place(homed_there, back.url)
    assert back not in kept.replicas and kept.new_home is None and kept.rehomed is None
    trial.release()
    pool.failed(back, "connect", None)  # the trial failed: out again
    placed = pool.place("new", None)
    assert placed.new_home not in (None, back.url) and placed.rehomed is None
    assert pool.place(homed_there, back.url).rehomed == "replica_down"


def test_runs_starting_as_a_replica_comes_back_are_homed_on_it(
    make_gateway: MakeGateway, replicas: list[FakeUpstream], cloud: FakeUpstream
) -> None:
    server = pool_gateway(make_gateway, replicas, pool={"breaker_failures": 1, "breaker_s": 1})
    pool = server.app.state.engine.edge_pool
    back = replicas[0]
    back.default = {"kind": "error", "status": 503}
    with httpx.Client(timeout=10) as client:
        n = 0
        while not back.received:  # until a step tried it, and its breaker opened
            run(client, server, f"before-{n}", 1)
            n += 1
        assert not pool.replicas[0].alive(pool.clock())
        for m in range(n, 9):
            run(client, server, f"before-{m}", 1)
        back.default = {"kind": "text"}
        released = threading.Event()
        # Its trial step answers only once the runs below have started.
        back.push({"kind": "text", "until": released.is_set, "delay": 10})
        tried = len(back.received)
        assert wait_until(lambda: pool.replicas[0].alive(pool.clock()), timeout=3)
        threads = []
        for m in range(9):
            # Each run's first step, one after the other; the one that tries the replica waits.
            thread = threading.Thread(target=run, args=(client, server, f"after-{m}", 1))
            thread.start()
            threads.append(thread)
            assert wait_until(lambda: not thread.is_alive() or len(back.received) > tried, timeout=5)  # noqa: B023
            tried = len(back.received)
        assert sum(1 for r in back.received if "task <after-" in str(r.body)) == 1, "its trial alone"
        released.set()
        for thread in threads:
            thread.join(10)
        for m in range(9):
            steps(client, server, f"after-{m}", 1, 2)
    homes = [home_of(server, f"after-{m}") for m in range(9)]
    assert homes.count(back.base_url) >= 4, homes  # it was 1 of 9
    assert cloud.received == []


# -- the whole pool out -------------------------------------------------------------------------


def test_with_every_breaker_open_the_503_says_the_whole_pool_is_out(
    make_gateway: MakeGateway, replicas: list[FakeUpstream], cloud: FakeUpstream
) -> None:
    """Once the breakers opened, the message named one replica's connection error, as if only
    it were down."""
    server = pool_gateway(make_gateway, replicas, pool={"breaker_failures": 2, "breaker_s": 60})
    for fake in replicas:
        fake.stop()
    body = {"model": "local", "messages": [{"role": "user", "content": "hi"}]}
    with httpx.Client(timeout=10) as client:
        replies = [client.post(f"{server.base_url}/chat/completions", json=body) for _ in range(3)]
    assert [reply.status_code for reply in replies] == [503, 503, 503]
    messages = [reply.json()["error"]["message"] for reply in replies]
    for message in messages:  # each replica tried, or out with its breaker open: every one named
        assert "every replica of the pool failed (3)" in message, message
        for fake in replicas:
            assert re.search(
                rf"{re.escape(fake.base_url)}[^;]*connect: cannot connect to 127.0.0.1:{fake.port}", message
            )
    # The breakers open at each replica's second failure: the pool is out from the second step.
    assert "the edge pool is out" not in messages[0]
    assert all("the edge pool is out, every breaker open" in message for message in messages[1:])
    assert "(not tried: its breaker is open)" in messages[2]


# -- settings that would do nothing, or misread load --------------------------------------------


@pytest.mark.parametrize(
    ("edge", "message"),
    [
        ({"balance": "round_robin"}, "balance (round_robin) is set, but this upstream has no endpoints"),
        (
            {"pool": {"breaker_s": 1, "scrape_interval_s": 5}},
            "pool.breaker_s and pool.scrape_interval_s are set, but this upstream has no endpoints",
        ),
        (
            {"endpoints": ["http://gpu-box:8000/a/v1", "http://gpu-box:8000/a"]},
            "would have their load read from one metrics URL (http://gpu-box:8000/a/metrics)",
        ),
    ],
    ids=["balance", "pool", "one-metrics-url"],
)
def test_pool_settings_that_would_do_nothing_or_misread_load_are_refused(edge: dict[str, Any], message: str) -> None:
    upstreams = {
        "edge": {"base_url": None if "endpoints" in edge else "http://a/v1", "model": "e", **edge},
        "cloud": {"base_url": "http://127.0.0.1:2/v1", "model": "c"},
    }
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_settings(upstreams=upstreams)


def test_pool_settings_at_their_defaults_without_endpoints_pass() -> None:
    # As deploy/tandem.example.yaml writes every key out for one base_url.
    settings = load_settings(
        upstreams={
            "edge": {"base_url": "http://a/v1", "model": "e", "balance": "affinity", "pool": {"breaker_s": 10}},
            "cloud": {"base_url": "http://127.0.0.1:2/v1", "model": "c"},
        }
    )
    assert settings.upstreams["edge"].endpoints == []


def test_each_replica_s_load_is_read_under_its_own_base_url() -> None:
    assert metrics_url("http://10.0.0.1:8000/v1", "/metrics") == "http://10.0.0.1:8000/metrics"
    assert metrics_url("http://10.0.0.1:8000/v1/", "/metrics") == "http://10.0.0.1:8000/metrics"
    assert metrics_url("http://gpu-box:8000/gpu0/v1", "/metrics") == "http://gpu-box:8000/gpu0/metrics"
    assert metrics_url("http://u:p@gpu-box/gpu1/v1", "/m") == "http://u:p@gpu-box/gpu1/m"


@dataclass
class PathRouter(FakeUpstream):
    """One host:port in front of two replicas by path (a path-routing proxy): /gpu0/v1/… and
    /gpu1/v1/…, each replica's own metrics at /gpu0/metrics and /gpu1/metrics."""

    by_path: dict[str, str] = field(default_factory=lambda: {"gpu0": "", "gpu1": ""})

    async def _serve(self, sock: socket.socket) -> None:
        app = web.Application()
        for name in self.by_path:
            app.router.add_post(f"/{name}/v1/chat/completions", self._chat)
            app.router.add_get(f"/{name}/metrics", self._metrics_of(name))
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1)
        await self._runner.setup()
        await web.SockSite(self._runner, sock).start()

    def _metrics_of(self, name: str) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def metrics(request: web.Request) -> web.Response:
            return web.Response(text=self.by_path[name], content_type="text/plain")

        return metrics


@pytest.fixture()
def path_router() -> Iterator[PathRouter]:
    router = PathRouter(name="router", model="edge-model").start()
    assert isinstance(router, PathRouter)
    yield router
    router.stop()


def test_two_replicas_behind_one_host_port_each_have_their_own_load(
    make_gateway: MakeGateway, path_router: PathRouter, cloud: FakeUpstream
) -> None:
    """Both were read from the host's /metrics: each replica got the other's queue."""
    base = f"http://127.0.0.1:{path_router.port}"
    path_router.by_path = {
        "gpu0": 'vllm:num_requests_waiting{model_name="m"} 3\n',
        "gpu1": 'vllm:num_requests_waiting{model_name="m"} 7\n',
    }
    edge = {"endpoints": [f"{base}/gpu0/v1", f"{base}/gpu1/v1"], "base_url": None, "pool": {"scrape_interval_s": 0.05}}
    server = make_gateway(routes={"local": {"strategy": "edge"}}, upstream_overrides={"edge": edge})
    pool = server.app.state.engine.edge_pool
    assert wait_until(lambda: [r.load.waiting for r in pool.replicas] == [3.0, 7.0]), [
        r.load.waiting for r in pool.replicas
    ]
    with httpx.Client(timeout=10) as client:
        run(client, server, "routed", 1, model="local")
    assert len(path_router.received) == 1

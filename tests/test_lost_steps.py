"""Steps counted with no record are recorded lost once no step of their run can still be running.

A worker killed with a step in flight (a real `tandem serve --workers 2`, SIGKILL), and a step
refused while Redis was frozen whose start Redis ran when it resumed (`redis_failure: refuse`),
leave their step counted in Redis with no record. The idle sweep records it `lost` (status
error), adds it to the run's `errors` and counts it in the metrics of the process that wrote it,
so that steps equal records and the metrics equal the ledger. A step still running is not
lost (its run stays open until its record comes); two sweepers write one lost record; a late
real record is kept beside it, counted once; an outage's write-back makes no false lost step.
All against a real redis-server.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from prometheus_client.parser import text_string_to_metric_families

from router.ledger import StepRecord, Usage
from router.trajectory.lost import LOST_ERROR, longest_step_s, lost_after_s, lost_record
from router.trajectory.redis_store import RedisStore
from router.trajectory.resilient import ResilientStore
from router.trajectory.state import LostSteps, StepStart
from router.trajectory.store import MemoryStore
from tests.fake_clock import FakeClock
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, settings_for, wait_until
from tests.redis_server import RedisServer
from tests.serve_workers import serve_workers

MakeGateway = Callable[..., GatewayServer]
ROUTES = {"tandem": {"strategy": "edge"}}


@pytest.fixture()
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    # Persistent: a restart keeps what Redis acknowledged (the write-back test stops it).
    server = RedisServer(tmp_path / "redis", persistent=True).start()
    yield server
    server.stop()


# -- what the ledger and the metrics say ------------------------------------------------------


def samples(text: str) -> list[tuple[str, dict[str, str], float]]:
    return [(s.name, s.labels, s.value) for f in text_string_to_metric_families(text) for s in f.samples]


def metric_sum(text: str, name: str, **labels: str) -> float:
    return sum(value for sample, found, value in samples(text) if sample == name and labels.items() <= found.items())


def detail(client: httpx.Client, url: str, trajectory_id: str) -> dict[str, Any]:
    answer = client.get(f"{url}/v1/trajectories/{trajectory_id}")
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


def assert_metrics_equal_ledger(text: str, runs: list[dict[str, Any]]) -> None:
    """Every record counted once in `tandem_steps_total`: the answered ones under their target
    (the ledger's edge_steps and cloud_steps), the failed ones under none (its errors)."""
    assert metric_sum(text, "tandem_steps_total", target="edge") == sum(run["edge_steps"] for run in runs)
    assert metric_sum(text, "tandem_steps_total", target="cloud") == sum(run["cloud_steps"] for run in runs)
    assert metric_sum(text, "tandem_steps_total", target="none", status="error") == sum(run["errors"] for run in runs)
    assert metric_sum(text, "tandem_steps_total") == sum(len(run["records"]) for run in runs)


def assert_steps_equal_records(run: dict[str, Any]) -> None:
    assert sorted({record["step"] for record in run["records"]}) == list(range(1, run["steps"] + 1))


def assert_lost(record: dict[str, Any], step: int) -> None:
    assert record["step"] == step
    assert record["status"] == "error" and record["error"] == LOST_ERROR and record["error"].startswith("lost:")
    assert record["answered_by"] == "none" and record["usage"] is None and record["cost_usd"] == 0


# -- a worker killed with a step in flight ----------------------------------------------------


def holder_of(local_port: int, pids: list[int]) -> int | None:
    """Which of the processes holds the TCP connection whose local port is `local_port` (the
    worker whose call to the upstream arrived from that port)."""
    inode = None
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as lines:
            for line in list(lines)[1:]:
                fields = line.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == local_port:
                    inode = fields[9]
    if inode is None:
        return None
    for pid in pids:
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                if os.readlink(fd) == f"socket:[{inode}]":
                    return pid
        except OSError:
            continue
    return None


def test_a_killed_workers_step_in_flight_is_recorded_lost_and_the_metrics_equal_the_ledger(
    tmp_path: Path, edge: FakeUpstream, cloud: FakeUpstream, redis_url: str, client: httpx.Client
) -> None:
    more = "trajectories: {idle_close_s: 1, lost_step_after_s: 4}"
    with serve_workers(tmp_path, edge, cloud, redis_url, more) as served:
        url = served.url
        first = [{"role": "user", "content": "fix the failing test"}]
        for session in ("kept", "killed"):
            for number in range(2 if session == "kept" else 1):
                messages = [*first, *([{"role": "assistant", "content": "done"}] * number)]
                body = {"model": "tandem", "messages": messages}
                answer = client.post(f"{url}/v1/chat/completions", json=body, headers={"X-Session-ID": session})
                assert answer.status_code == 200, answer.text

        # Step 2 of "killed": its upstream answers in a minute; its worker is killed meanwhile.
        slow = {
            "model": "tandem",
            "messages": [*first, {"role": "assistant", "content": "done"}],
            "fake": {"kind": "text", "delay": 60},
        }
        outcome: list[object] = []

        def send() -> None:
            try:
                with httpx.Client(timeout=90) as own:
                    headers = {"X-Session-ID": "killed"}
                    outcome.append(own.post(f"{url}/v1/chat/completions", json=slow, headers=headers).status_code)
            except httpx.TransportError as exc:
                outcome.append(exc)

        sender = threading.Thread(target=send)
        sender.start()
        assert wait_until(lambda: any("fake" in r.body for r in edge.received), timeout=20)
        call = next(r for r in edge.received if "fake" in r.body)
        victim = holder_of(call.peer[1], list(served.workers()))
        assert victim is not None, "no worker holds the step's call to the upstream"
        os.kill(victim, signal.SIGKILL)
        sender.join(30)
        assert outcome and isinstance(outcome[0], httpx.TransportError), outcome  # no answer, no record

        def closed(session: str) -> bool:
            try:
                return detail(client, url, session)["close_reason"] == "idle"
            except httpx.TransportError:
                return False

        # Swept by whichever worker comes first (the killed one's replacement included).
        assert wait_until(lambda: closed("killed") and closed("kept"), timeout=60), (tmp_path / "serve.log").read_text()
        killed, kept = detail(client, url, "killed"), detail(client, url, "kept")
        assert killed["steps"] == 2 and killed["errors"] == 1 and killed["edge_steps"] == 1
        assert [record["status"] for record in killed["records"]] == ["ok", "error"]
        assert_lost(killed["records"][1], 2)
        assert kept["steps"] == 2 and kept["errors"] == 0 and len(kept["records"]) == 2
        for run in (killed, kept):
            assert_steps_equal_records(run)

        # Whichever worker answers the scrape sums them all (the killed one's counts too).
        text = client.get(f"{url}/metrics").text
        assert metric_sum(text, "tandem_steps_lost_total") == 1
        assert metric_sum(text, "tandem_steps_lost_total", route="tandem") == 1
        assert metric_sum(text, "tandem_steps_total", target="none", reason="undecided", status="error") == 1
        assert_metrics_equal_ledger(text, [killed, kept])
        assert "recorded lost" in (tmp_path / "serve.log").read_text()


# -- a step refused while Redis was frozen (refuse mode) ----------------------------------------


def test_a_step_refused_while_redis_was_frozen_is_recorded_lost(
    make_gateway: MakeGateway, client: httpx.Client, own_redis: RedisServer
) -> None:
    server = make_gateway(
        redis_url=own_redis.url,
        redis_failure="refuse",
        redis_timeout_s=0.5,
        routes=ROUTES,
        trajectories={"idle_close_s": 1, "lost_step_after_s": 2},
    )
    first = [{"role": "user", "content": "fix the failing test"}]
    headers = {"X-Session-ID": "frozen"}
    answer = client.post(
        f"{server.url}/v1/chat/completions", json={"model": "tandem", "messages": first}, headers=headers
    )
    assert answer.status_code == 200
    server.run(server.gateway.tracker.recorder.flush())
    own_redis.pause()
    try:
        second = [*first, {"role": "assistant", "content": "done"}]
        body = {"model": "tandem", "messages": second}
        refused = client.post(f"{server.url}/v1/chat/completions", json=body, headers=headers)
        assert refused.status_code == 503 and refused.json()["error"]["code"] == "store_unavailable"
    finally:
        own_redis.resume()
    direct = redis.Redis(port=own_redis.port, decode_responses=True)
    # What the gap is: Redis ran the refused step's start when it resumed.
    assert wait_until(lambda: direct.hget("tandem:t:frozen", "steps") == "2", timeout=10)
    assert direct.llen("tandem:t:frozen:r") == 1
    direct.close()
    assert wait_until(lambda: client.get(f"{server.url}/readyz").status_code == 200, timeout=15)
    assert wait_until(lambda: detail(client, server.url, "frozen")["close_reason"] == "idle", timeout=30)
    run = detail(client, server.url, "frozen")
    assert run["steps"] == 2 and run["errors"] == 1 and run["edge_steps"] == 1
    assert_lost(run["records"][1], 2)
    assert_steps_equal_records(run)
    text = client.get(f"{server.url}/metrics").text
    assert metric_sum(text, "tandem_steps_lost_total") == 1
    assert_metrics_equal_ledger(text, [run])


# -- a step still running is not lost ---------------------------------------------------------


def test_a_step_still_running_is_not_lost_and_its_run_closes_after_its_record(
    make_gateway: MakeGateway, client: httpx.Client, own_redis: RedisServer
) -> None:
    server = make_gateway(
        redis_url=own_redis.url, routes=ROUTES, trajectories={"idle_close_s": 0.4, "lost_step_after_s": 20}
    )
    body = {
        "model": "tandem",
        "messages": [{"role": "user", "content": "a long step"}],
        "fake": {"kind": "text", "delay": 3},
    }
    ended: list[float] = []

    def send() -> None:
        with httpx.Client(timeout=30) as own:
            answer = own.post(f"{server.url}/v1/chat/completions", json=body, headers={"X-Session-ID": "slow"})
            ended.append(time.time())
            assert answer.status_code == 200

    sender = threading.Thread(target=send)
    sender.start()
    # Idle by its last start for most of the step: swept many times, neither closed nor lost.
    time.sleep(2.0)
    assert detail(client, server.url, "slow")["close_reason"] is None
    sender.join(30)
    assert ended
    assert wait_until(lambda: detail(client, server.url, "slow")["close_reason"] == "idle", timeout=10)
    run = detail(client, server.url, "slow")
    assert run["closed_at"] >= ended[0] - 0.5
    assert run["errors"] == 0 and [r["status"] for r in run["records"]] == ["ok"]
    text = client.get(f"{server.url}/metrics").text
    assert metric_sum(text, "tandem_steps_lost_total") == 0
    assert_metrics_equal_ledger(text, [run])


# -- two sweepers, one lost record --------------------------------------------------------------


def start_of(trajectory_id: str, number: int) -> StepStart:
    return StepStart(trajectory_id, f"body {number}", False, "task", "tandem", "", time.time())


def answered(trajectory_id: str, step: int) -> StepRecord:
    return StepRecord(
        trajectory_id, step, "tandem", "edge", "route_fixed", None, "e", at=time.time(), usage=Usage(10, 0, 2)
    )


async def counted_with_a_gap(store: RedisStore, trajectory_id: str) -> None:
    """Steps 1 and 2 counted, step 1 recorded: a killed worker's step 2."""
    for number in (1, 2):
        await store.begin_step(start_of(trajectory_id, number))
    await store.record_many([answered(trajectory_id, 1)])


def test_two_sweepers_write_one_lost_record(
    make_gateway: MakeGateway, client: httpx.Client, own_redis: RedisServer
) -> None:
    replicas = [
        make_gateway(redis_url=own_redis.url, routes=ROUTES, trajectories={"idle_close_s": 0.2, "lost_step_after_s": 1})
        for _ in range(2)
    ]

    async def gaps() -> None:
        store = RedisStore(own_redis.url)
        try:
            for number in range(5):
                await counted_with_a_gap(store, f"gap-{number}")
        finally:
            await store.aclose()

    asyncio.run(gaps())
    ids = [f"gap-{number}" for number in range(5)]

    def all_closed() -> bool:
        return all(detail(client, replicas[0].url, i)["close_reason"] == "idle" for i in ids)

    assert wait_until(all_closed, timeout=20)
    runs = [detail(client, replicas[0].url, i) for i in ids]
    for run in runs:
        assert run["steps"] == 2 and run["errors"] == 1 and len(run["records"]) == 2
        assert_lost(run["records"][1], 2)
    texts = [client.get(f"{replica.url}/metrics").text for replica in replicas]
    assert sum(metric_sum(text, "tandem_steps_lost_total") for text in texts) == 5
    assert sum(metric_sum(text, "tandem_steps_total", target="none", status="error") for text in texts) == 5


async def test_the_record_script_refuses_a_second_lost_record_of_a_step(own_redis: RedisServer) -> None:
    first, second = RedisStore(own_redis.url), RedisStore(own_redis.url)
    try:
        await counted_with_a_gap(first, "race")
        await asyncio.sleep(0.3)
        found = await asyncio.gather(first.lost_steps("race", 0.2), second.lost_steps("race", 0.2))
        assert [f.steps for f in found] == [(2,), (2,)] and all(f.route == "tandem" for f in found)
        # Both sweepers saw step 2 lost and write its record at once: one is written.
        records = [lost_record("race", 2, "tandem", found[0].at) for _ in range(2)]
        written = await asyncio.gather(
            first.record_lost(records[:1], ["t-one"]), second.record_lost(records[1:], ["t-two"])
        )
        assert sorted(w[0] for w in written) == [False, True]
        # Sent again with its token (a reply that was lost), the written one says it was.
        winner = "t-one" if written[0][0] else "t-two"
        assert await first.record_lost(records[:1], [winner]) == [True]
        kept = await first.records("race")
        assert [(r.step, r.status) for r in kept] == [(1, "ok"), (2, "error")]
        trajectory = await first.get("race")
        assert trajectory is not None and trajectory.counts["errors"] == 1
        assert (await first.lost_steps("race", 0.2)).steps == ()
    finally:
        await first.aclose()
        await second.aclose()


# -- a late real record, and a real one first ---------------------------------------------------


async def test_a_late_real_record_after_the_lost_one_is_kept_and_counted_once(own_redis: RedisServer) -> None:
    store = RedisStore(own_redis.url)
    try:
        await counted_with_a_gap(store, "late")
        await asyncio.sleep(0.3)
        found = await store.lost_steps("late", 0.2)
        assert found.steps == (2,)
        assert await store.record_lost([lost_record("late", 2, found.route, found.at)], ["lost-token"]) == [True]
        # The step's own record comes after all (it should not within the bound): kept beside the
        # lost one, its answer counted once, the step counted once; the lost one stays an error,
        # as the metrics of the process that wrote it counted it.
        assert await store.record_many([answered("late", 2)]) == [False]
        trajectory = await store.get("late")
        assert trajectory is not None
        assert trajectory.steps == 2 and trajectory.counts["edge_steps"] == 2 and trajectory.counts["errors"] == 1
        kept = await store.records("late")
        assert [(r.step, r.status) for r in kept] == [(1, "ok"), (2, "error"), (2, "ok")]
        assert (await store.lost_steps("late", 0.2)).steps == ()

        # A real record first (between a sweep's look and its write): no lost record at all.
        await counted_with_a_gap(store, "first")
        await asyncio.sleep(0.3)
        found = await store.lost_steps("first", 0.2)
        assert found.steps == (2,)
        await store.record_many([answered("first", 2)])
        assert await store.record_lost([lost_record("first", 2, found.route, found.at)], ["too-late"]) == [False]
        trajectory = await store.get("first")
        assert trajectory is not None and trajectory.counts["errors"] == 0
        assert [r.status for r in await store.records("first")] == ["ok", "ok"]
    finally:
        await store.aclose()


async def test_a_step_within_the_bound_and_runs_without_a_gap_are_not_lost(own_redis: RedisServer) -> None:
    store = RedisStore(own_redis.url)
    direct = redis.Redis(port=own_redis.port, decode_responses=True)
    try:
        await counted_with_a_gap(store, "young")
        found = await store.lost_steps("young", 30)
        assert found.steps == () and 29 < found.wait_s <= 30
        # A run begun before the bitmap was kept (an older gateway's) is not read as all lost.
        await counted_with_a_gap(store, "older")
        direct.delete("tandem:t:older:d")
        await asyncio.sleep(0.3)
        assert await store.lost_steps("older", 0.2) == LostSteps()
        # A record an older gateway wrote (in the list, no bit): its step is not lost.
        await counted_with_a_gap(store, "mixed")
        direct.rpush("tandem:t:mixed:r", direct.lindex("tandem:t:mixed:r", 0).replace('"step":1,', '"step":2,'))
        await asyncio.sleep(0.3)
        assert (await store.lost_steps("mixed", 0.2)).steps == ()
    finally:
        direct.close()
        await store.aclose()


# -- an outage's write-back ---------------------------------------------------------------------


async def test_a_write_back_after_an_outage_makes_no_false_lost_step(own_redis: RedisServer) -> None:
    """A record kept in one replica's journal while Redis was out, longer than the bound: the
    replica that is back first marks the write-back, and no step is lost until the record is in."""
    clock = FakeClock()
    holder = ResilientStore(RedisStore(own_redis.url), MemoryStore(), "degrade", breaker_s=1.0, clock=clock)
    other = ResilientStore(RedisStore(own_redis.url), MemoryStore(), "degrade", breaker_s=0.1, write_back_mark_s=30)
    direct = redis.Redis(port=own_redis.port, decode_responses=True)
    try:
        slot = await holder.begin_step(start_of("kept", 1))
        own_redis.stop()
        await holder.record_many([answered("kept", slot.step)])  # kept in its journal
        assert holder.degraded and len(holder.journal) == 1
        await other.get("kept")
        assert other.degraded
        await asyncio.sleep(0.8)  # longer than the bound (0.5 s) since the step began
        own_redis.start()
        for _ in range(300):
            if not other.degraded:
                break
            await asyncio.sleep(0.01)
        assert not other.degraded and holder.degraded  # the holder's probe waits for the test's clock
        found = await other.lost_steps("kept", 0.5)
        assert found.steps == () and found.wait_s > 25
        # Without the mark the step would be taken for lost: the bound has passed.
        direct.delete("tandem:writeback")
        assert (await other.lost_steps("kept", 0.5)).steps == (1,)
        clock.advance(1.0)
        for _ in range(300):
            if not holder.degraded:
                break
            await asyncio.sleep(0.01)
        assert not holder.degraded
        assert (await other.lost_steps("kept", 0.5)).steps == ()
        assert [r.status for r in await other.records("kept")] == ["ok"]
    finally:
        direct.close()
        await holder.aclose()
        await other.aclose()


# -- the bound ----------------------------------------------------------------------------------


def test_the_bound_is_the_longest_step_by_the_timeouts_unless_set() -> None:
    settings = settings_for("http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1")
    # The tests' upstreams: connect 2 s, first byte 5 s, streams 600 s; a send stall 60 s, pool
    # waits 10 s: 6 calls before the answer (4 inner, the edge, the cloud) × 7 s + 607 s + 60 s +
    # 6 × 10 s + 60 s.
    assert longest_step_s(settings) == 6 * 7 + 607 + 60 + 60 + 60
    assert lost_after_s(settings) == longest_step_s(settings)
    # The defaults (connect 5 s, first byte 120 s, stream 600 s): under the idle close.
    defaults = settings_for(
        "http://127.0.0.1:9/v1",
        "http://127.0.0.1:9/v1",
        upstream_overrides={"edge": {"timeouts": {}}, "cloud": {"timeouts": {}}},
    )
    assert longest_step_s(defaults) < defaults.trajectories.idle_close_s
    pooled = settings_for(
        "http://127.0.0.1:9/v1",
        "http://127.0.0.1:9/v1",
        upstream_overrides={"edge": {"endpoints": ["http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"]}},
    )
    assert longest_step_s(pooled) == longest_step_s(settings) + 7  # one more replica tried
    chosen = settings_for("http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1", trajectories={"lost_step_after_s": 90})
    assert lost_after_s(chosen) == 90

"""What a step costs in Redis, and a Redis that lost its scripts, against a real redis-server.

The count is of what the gateway sends (MONITOR) and of the reads Redis makes from its clients'
sockets (`total_reads_processed`: one per round trip), so that a change that adds a command or a
round trip to every step fails here, not only in a benchmark.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import httpx
import redis

from benchmarks.workers.commands import Monitor
from router.ledger import StepRecord
from router.trajectory.redis_store import RedisStore
from router.trajectory.resilient import ResilientStore
from router.trajectory.state import StepStart
from tests.gateway_server import GatewayServer, wait_until
from tests.redis_server import RedisServer

MakeGateway = Callable[..., GatewayServer]
ROUTES = {"tandem": {"strategy": "edge"}}


def _run_of_one_step(client: httpx.Client, server: GatewayServer, number: int) -> httpx.Response:
    messages = [
        {"role": "system", "content": f"run {number}: you are a coding agent"},
        {"role": "user", "content": "fix the failing test in parse.py"},
    ]
    answer = client.post(f"{server.url}/v1/chat/completions", json={"model": "tandem", "messages": messages})
    assert answer.status_code == 200
    return answer


def test_a_step_costs_at_most_seven_commands_in_about_three_round_trips(
    make_gateway: MakeGateway, client: httpx.Client, tmp_path: Path
) -> None:
    """An agent step without a session id (stitched): its start, its record, its notes and its
    stitching. Before batching it took 11 commands (one a `SCRIPT EXISTS`) in 9 round trips, 5
    before the claim left with the step start; 10 in 4 before its stitching entries were edited
    where they are kept (the answer's notes read, then set: now one script)."""
    own = RedisServer(tmp_path / "redis").start()
    direct = redis.Redis(port=own.port, decode_responses=True)
    try:
        server = make_gateway(redis_url=own.url, routes=ROUTES)
        for number in range(2):  # warm: the scripts loaded, the pool's connections made
            _run_of_one_step(client, server, 1000 + number)
        monitor = Monitor(own.port)
        monitor.quiet()
        direct.config_resetstat()
        monitor.lines.clear()
        steps = 10
        for number in range(steps):
            _run_of_one_step(client, server, number)
        monitor.quiet()
        reads = int(direct.info("stats")["total_reads_processed"]) - 1  # less the INFO's own
        monitor.close()
        # Less this test's own commands, and a new pooled connection's greeting.
        sent = Counter(command for command in monitor.commands if command not in {"CONFIG", "INFO", "HELLO"})
        assert sent["SCRIPT"] == 0  # no `SCRIPT EXISTS` before a pipeline
        # The step start, the record, two notes, the claim's and the answer's stitching edits.
        assert sent["EVALSHA"] == 6 * steps
        assert sent["MGET"] == steps  # the stitching's one read
        assert sum(sent.values()) <= 7 * steps, sent
        # The claim leaves with the step start; the answer's record, notes and stitching edit
        # leave together, or in two turns of the loop (about 3 round trips a step on average).
        assert reads <= 3.5 * steps, (reads, sent)
    finally:
        direct.close()
        own.stop()


def test_a_flushed_script_cache_costs_no_step(make_gateway: MakeGateway, client: httpx.Client, tmp_path: Path) -> None:
    """`SCRIPT FLUSH` (what a restarted or failed-over Redis amounts to for the scripts) between
    steps and while records are in flight: every step answered and counted once, the store never
    degraded, no store error."""
    own = RedisServer(tmp_path / "redis").start()
    direct = redis.Redis(port=own.port, decode_responses=True)
    try:
        server = make_gateway(redis_url=own.url, routes=ROUTES)
        store = server.gateway.tracker.store
        assert isinstance(store, ResilientStore)
        body = {"model": "tandem", "messages": [{"role": "user", "content": "task"}]}
        steps = []
        for turn in range(6):
            direct.script_flush()
            messages = [*body["messages"], *([{"role": "assistant", "content": "ok"}] * turn)]
            answer = client.post(
                f"{server.url}/v1/chat/completions",
                json={**body, "messages": messages},
                headers={"X-Session-ID": "flushed"},
            )
            assert answer.status_code == 200
            steps.append(int(answer.headers["x-tandem-step"]))
        assert steps == [1, 2, 3, 4, 5, 6]
        assert wait_until(lambda: direct.llen("tandem:t:flushed:r") == 6, timeout=5)
        assert not store.degraded
        assert direct.hget("tandem:t:flushed", "steps") == "6"
        assert direct.hget("tandem:t:flushed", "edge_steps") == "6"  # each record counted once
        metrics = client.get(f"{server.url}/metrics").text.splitlines()
        errors = [line for line in metrics if line.startswith("tandem_store_errors_total{")]
        assert errors and all(line.endswith(" 0.0") for line in errors), errors
    finally:
        direct.close()
        own.stop()


def _record(trajectory_id: str, step: int) -> StepRecord:
    return StepRecord(
        trajectory_id=trajectory_id, step=step, route="r", target="edge", reason="x", score=None, model="m"
    )


async def test_a_batch_after_a_script_flush_runs_each_command_once(tmp_path: Path) -> None:
    """One pipeline of scripts and plain commands, sent to a Redis whose scripts were flushed:
    the plain ones ran once, the scripts are loaded and sent again once, in their order."""
    own = RedisServer(tmp_path / "redis").start()
    store = RedisStore(own.url)
    direct = redis.Redis(port=own.port, decode_responses=True)
    try:
        start = StepStart(
            trajectory_id="t1", fingerprint="f", retry=False, task="", route="r", namespace="", at=time.time()
        )
        await store.begin_step(start)
        direct.script_flush()
        direct.config_resetstat()
        values = [(f"vault:id:{n}", f"[EMAIL_{n}]") for n in range(5)]
        await asyncio.gather(
            store.record_many([_record("t1", 1), _record("t1", 1)]),
            store.vault_notes("t1", values),
            store.note("t1", "pin", "edge"),
            store.stitch_remember_many([("b:key", "t1")]),
        )
        stats = direct.info("commandstats")
        assert stats["cmdstat_set"]["calls"] >= 1
        assert stats["cmdstat_rpush"]["calls"] == 2 + 5  # two records, five vault entries: once each
        assert direct.llen("tandem:t:t1:r") == 2
        assert direct.lrange("tandem:t:t1:vl", 0, -1) == [key for key, _ in values]
        assert direct.hget("tandem:t:t1", "n:pin") == "edge"
        assert direct.get("tandem:s:b:key") == "t1"
        assert stats["cmdstat_script|load"]["calls"] == 3  # the record's, the vault note's, the note's
        assert "cmdstat_script|exists" not in stats
    finally:
        direct.close()
        await store.aclose()
        own.stop()


def test_a_batch_is_packed_in_c_into_the_bytes_redis_py_would_send() -> None:
    """The batches' packer is hiredis's (a dependency: its absence fails here, not silently
    slower), and it writes what redis-py's own packer writes for the values the store sends:
    text (UTF-8), bytes, integers and floats (as `repr`)."""
    from redis.asyncio.connection import Connection

    from router.trajectory import redis_batch

    assert redis_batch._pack_command is not None
    commands: list[tuple[object, ...]] = [
        ("EVALSHA", "ab" * 20, 2, "tandem:t:1", "tandem:r:1", "naïve ünïcode ✓", b"\x00\xffraw", 0.30000000000000004),
        ("SET", "tandem:s:b:key", "run-1 flight", "EX", 604800),
        ("MGET", "k1", "k2", "k3"),
        ("SCRIPT", "LOAD", "return redis.call('GET', KEYS[1])"),
        ("HSET", "h", "f", 1e-05, "g", -0.0, "big", 10**20),
    ]
    ours = b"".join(redis_batch._pack_command(command) for command in commands)  # type: ignore[arg-type]
    theirs = b"".join(Connection().pack_commands(commands))  # type: ignore[arg-type]
    assert ours == theirs


async def test_the_connection_kept_between_batches_is_replaced_once_redis_closed_it(tmp_path: Path) -> None:
    """A batch keeps its connection for the next one (no pool checkout a batch), but one that
    Redis closed since (a restart, `CLIENT KILL`, an idle timeout) is not used: the next batch
    takes a sound one from the pool, as the pool's own checks would have, and no step fails."""
    own = RedisServer(tmp_path / "redis").start()
    store = RedisStore(own.url)
    direct = redis.Redis(port=own.port, decode_responses=True)

    def start(number: int) -> StepStart:
        return StepStart(
            trajectory_id="t1", fingerprint=f"f{number}", retry=False, task="", route="r", namespace="", at=time.time()
        )

    try:
        first = await store.begin_step(start(1))
        direct.config_resetstat()
        for number in (2, 3):
            await store.begin_step(start(number))
        # No checkout's connection made between them: the kept connection carried both.
        assert int(direct.info("stats")["total_connections_received"]) == 0
        killed = direct.client_kill_filter(_type="normal", skipme=True)
        assert killed >= 1
        await asyncio.sleep(0.1)  # the loop reads the close
        after = await store.begin_step(start(4))
        assert after.step == first.step + 3
    finally:
        direct.close()
        await store.aclose()
        own.stop()


async def test_a_pool_of_one_connection_keeps_none_between_batches(tmp_path: Path) -> None:
    """With `redis_pool_size: 1` the one connection goes back to the pool after each batch: the
    store's calls outside the batches (a count, a listing) get it, rather than waiting for a
    connection the batches would keep for themselves until the wait runs out."""
    own = RedisServer(tmp_path / "redis").start()
    store = RedisStore(own.url, pool_size=1, pool_wait_s=0.5)
    try:
        start = StepStart(
            trajectory_id="t1", fingerprint="f", retry=False, task="", route="r", namespace="", at=time.time()
        )
        await store.begin_step(start)
        assert await store.active_count() == 1
        await store.begin_step(start)  # and the batches still have it after
    finally:
        await store.aclose()
        own.stop()


async def test_a_batch_reads_its_replies_off_the_parser_and_times_out_on_a_frozen_redis(tmp_path: Path) -> None:
    """The batches write and read on a connection of their own (its socket's callbacks, redis-py's
    hiredis reader; no task and no timeout context a round trip); a Redis that stops answering
    fails the batch with redis-py's TimeoutError within the socket timeout, the connection is
    dropped, and once Redis answers again the next batch runs on a sound one."""
    from redis.exceptions import TimeoutError as RedisTimeoutError

    from router.trajectory.redis_pipe import Pipe

    own = RedisServer(tmp_path / "redis").start()
    store = RedisStore(own.url, timeout_s=0.3)

    def start(number: int) -> StepStart:
        return StepStart(
            trajectory_id="t1", fingerprint=f"f{number}", retry=False, task="", route="r", namespace="", at=time.time()
        )

    try:
        first = await store.begin_step(start(1))
        (kept,) = store._batch._idle
        assert isinstance(kept, Pipe) and kept.sound  # the batches' own, not redis-py's calls
        own.pause()
        began = time.monotonic()
        try:
            await store.begin_step(start(2))
        except RedisTimeoutError:
            pass
        else:
            raise AssertionError("a frozen Redis answered")
        assert time.monotonic() - began < 2.0
        assert not kept.sound and kept not in store._batch._idle  # dropped: its stream is out of step
        own.resume()
        after = await store.begin_step(start(3))
        # The frozen step's command may have run once Redis resumed; the stream is in step either way.
        assert after.step in (first.step + 1, first.step + 2)
        assert (await store.begin_step(start(4))).step == after.step + 1
    finally:
        own.resume()
        await store.aclose()
        own.stop()


async def test_batches_in_flight_at_once_each_have_a_connection_and_hear_only_their_replies(tmp_path: Path) -> None:
    """Batches sent in one turn after another are still waiting (each step's commands in turns
    of their own): each goes out on a connection of its own (a slow reply delays only its own
    batch), every caller hears its own reply, an error reply fails its own command alone, and
    the connections are kept for the next batches (at most `MAX_PIPES`; batches beyond them
    in flight go through redis-py on pooled connections)."""
    from redis.exceptions import ResponseError

    from router.trajectory.redis_batch import MAX_PIPES

    own = RedisServer(tmp_path / "redis").start()
    store = RedisStore(own.url)
    batch = store._batch
    direct = redis.Redis(port=own.port, decode_responses=True)
    try:
        await batch.command("SET", "warm", "1")

        async def turn(number: int) -> list[object]:
            await asyncio.sleep(0)  # each in a turn of its own: one batch each
            for _ in range(number % 3):
                await asyncio.sleep(0)
            return await batch.all(
                [batch.command("SET", f"k{number}", str(number)), batch.command("GET", f"k{number}")]
            )

        results = await asyncio.gather(*(turn(number) for number in range(40)))
        assert results == [["OK", str(number)] for number in range(40)]  # replies as Redis gives them
        assert 1 <= len(batch._idle) <= MAX_PIPES
        assert len(batch._pipes) == len(batch._idle)  # none left in flight
        with_error = batch.all([batch.command("INCR", "k1"), batch.command("HGET", "k1", "f")])
        try:
            await with_error
        except ResponseError as exc:
            assert "WRONGTYPE" in str(exc)
        else:
            raise AssertionError("a command on a key of another type succeeded")
        assert direct.get("k1") == "2"  # the other command of that batch ran
        connections = int(direct.info("clients")["connected_clients"])
        await store.aclose()
        assert wait_until(lambda: int(direct.info("clients")["connected_clients"]) < connections, timeout=5)
    finally:
        direct.close()
        own.stop()


async def test_the_batches_connections_are_made_as_redis_py_makes_them(tmp_path: Path) -> None:
    """A password and a database in the URL: the batches' connections are redis-py's, taken over
    once made (its `AUTH` and `SELECT`), so the steps land in that database; a wrong password
    fails the batch with redis-py's own error, not a hang."""
    from redis.exceptions import AuthenticationError

    own = RedisServer(tmp_path / "redis").start()
    direct = redis.Redis(port=own.port, decode_responses=True)
    direct.config_set("requirepass", "s3cret")
    direct = redis.Redis(port=own.port, password="s3cret", db=2, decode_responses=True)
    store = RedisStore(f"redis://:s3cret@127.0.0.1:{own.port}/2")
    wrong = RedisStore(f"redis://:wrong@127.0.0.1:{own.port}/2", timeout_s=0.5)

    def start(number: int) -> StepStart:
        return StepStart(
            trajectory_id="t1", fingerprint=f"f{number}", retry=False, task="", route="r", namespace="", at=time.time()
        )

    try:
        for number in range(3):
            slot = await store.begin_step(start(number))
        assert slot.step == 3
        assert len(store._batch._pipes) == 1  # the batches' own connection, kept
        assert direct.hget("tandem:t:t1", "steps") == "3"
        try:
            await wrong.begin_step(start(9))
        except AuthenticationError:
            pass
        else:
            raise AssertionError("a wrong password was taken")
        assert direct.hget("tandem:t:t1", "steps") == "3"
    finally:
        direct.close()
        await store.aclose()
        await wrong.aclose()
        own.stop()


async def test_a_push_on_an_idle_connection_is_handed_to_redis_py_and_the_connection_kept_once(
    tmp_path: Path,
) -> None:
    """A RESP3 push that comes while no batch waits (here a client-tracking invalidation; a
    maintenance notification in production) goes to redis-py's handler as its own reads hand it;
    the connection stays kept once (listed twice, two batches would share it) and carries the
    next batch."""
    own = RedisServer(tmp_path / "redis").start()
    store = RedisStore(own.url)
    batch = store._batch
    direct = redis.Redis(port=own.port, decode_responses=True)
    try:
        assert await batch.all([batch.command("CLIENT", "TRACKING", "ON"), batch.command("GET", "k")]) == ["OK", None]
        (kept,) = batch._idle
        direct.set("k", "1")  # Redis pushes an invalidation of `k` to the tracking connection
        await asyncio.sleep(0.2)  # the loop reads the push
        assert batch._idle == [kept] and kept.sound
        assert await batch.command("GET", "k") == "1"
        assert batch._idle == [kept]
    finally:
        direct.close()
        await store.aclose()
        own.stop()

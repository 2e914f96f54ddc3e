"""The outage journal on disk: a gateway stopped while Redis is out loses no answered step.

Real `tandem serve` processes (killed with SIGKILL, stopped with SIGTERM), a real redis-server
that is stopped for ~8 s under load, and a second gateway started on the same journal folder.
Run with `-s` to print the figures.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import redis

from router.ledger import StepRecord
from router.metrics.route_series import SeriesScope
from router.result import Stream
from router.trajectory.journal_file import JournalFile
from router.trajectory.redis_store import RedisStore
from router.trajectory.resilient import ResilientStore
from router.trajectory.state import StepStart
from router.trajectory.store import MemoryStore
from tests.fake_upstream import FakeUpstream, free_port
from tests.gateway_server import serve_process, wait_until
from tests.redis_server import RedisServer

CLIENTS = 24
OUTAGE_AT_S = 1.5  # Redis stops this long into the load
STOP_AT_S = 4.5  # the gateway is stopped this long into the load (mid-outage)
OUTAGE_S = 8.0  # Redis is back this long after it stopped
EMAIL, CARD = "alice.journal@example.com", "4111 1111 1111 1111"


@pytest.fixture()
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    # Persistent: the gateway cannot bring back what Redis itself forgets on a restart.
    server = RedisServer(tmp_path / "redis", persistent=True).start()
    yield server
    server.stop()


def config_for(tmp_path: Path, edge: FakeUpstream, cloud: FakeUpstream, redis_url: str, journal: Path | None) -> Path:
    config = tmp_path / "tandem.yaml"
    folder = f"trajectories: {{outage_journal_dir: '{journal}'}}" if journal is not None else ""
    config.write_text(
        f"""
upstreams:
  edge: {{base_url: "{edge.base_url}", model: e}}
  cloud: {{base_url: "{cloud.base_url}", model: c}}
routes:
  tandem: {{strategy: edge}}
  private: {{strategy: cloud, privacy: redact}}
redis_url: "{redis_url}"
{folder}
"""
    )
    return config


async def agents(url: str, answered: dict[str, list[int]], stop: threading.Event, kinds: Counter[str]) -> None:
    """Agent-like clients, each one trajectory of steps (the history grows), a quarter of them
    streamed; each stops at its first dropped connection (the gateway went away). Only a 200
    counts as answered, a stream only once its `[DONE]` was read."""

    async def one(http: httpx.AsyncClient, session: str, stream: bool) -> None:
        messages: list[dict[str, Any]] = [{"role": "user", "content": f"task of {session}"}]
        while not stop.is_set():
            try:
                response = await http.post(
                    f"{url}/v1/chat/completions",
                    json={"model": "tandem", "messages": messages, "stream": stream},
                    headers={"X-Session-ID": session},
                )
            except httpx.TransportError:
                return
            if response.status_code != 200:
                await asyncio.sleep(0.05)
                continue
            if stream and not response.text.rstrip().endswith("data: [DONE]"):
                return  # cut before its end: not an answer the client has
            kinds["streamed" if stream else "plain"] += 1
            trajectory = response.headers["x-tandem-trajectory"]
            answered.setdefault(trajectory, []).append(int(response.headers["x-tandem-step"]))
            messages = [*messages, {"role": "assistant", "content": f"step {len(messages)} done"}]

    limits = httpx.Limits(max_connections=CLIENTS, max_keepalive_connections=CLIENTS)
    async with httpx.AsyncClient(timeout=20, limits=limits) as http:
        await asyncio.gather(*(one(http, f"agent-{i}", i % 4 == 0) for i in range(CLIENTS)))


def records_by_index(url: str) -> dict[str, Counter[int]]:
    """trajectory id -> how many first-attempt records each step index has in Redis."""
    found: dict[str, Counter[int]] = {}
    with redis.Redis.from_url(url, decode_responses=True) as direct:
        for key in direct.scan_iter("tandem:t:*:r", count=1000):
            records = [orjson.loads(line) for line in direct.lrange(key, 0, -1)]
            found[key[len("tandem:t:") : -2]] = Counter(r["step"] for r in records if r["attempt"] == 1)
    return found


def stop_mid_outage(
    tmp_path: Path, edge: FakeUpstream, cloud: FakeUpstream, redis_server: RedisServer, how: str, journal: Path | None
) -> tuple[dict[str, list[int]], str, dict[str, Counter[int]], str]:
    """Load a gateway, stop Redis, stop the gateway mid-outage, bring Redis back and start a new
    gateway on the same journal folder. Returns what was answered, the first gateway's output,
    what Redis holds, and the second gateway's metrics."""
    config = config_for(tmp_path, edge, cloud, redis_server.url, journal)
    edge.default = {"kind": "text", "delay": 0.02}
    first_port = free_port()
    first = serve_process(config, first_port)
    answered: dict[str, list[int]] = {}
    stop = threading.Event()
    kinds: Counter[str] = Counter()
    load = threading.Thread(target=lambda: asyncio.run(agents(f"http://127.0.0.1:{first_port}", answered, stop, kinds)))
    started = time.monotonic()
    load.start()
    time.sleep(OUTAGE_AT_S)
    redis_server.stop()
    outage_began = time.monotonic()
    time.sleep(STOP_AT_S - OUTAGE_AT_S)
    first.send_signal(signal.SIGKILL if how == "sigkill" else signal.SIGTERM)
    output, _ = first.communicate(timeout=30)
    stop.set()
    load.join(30)
    time.sleep(max(0.0, OUTAGE_S - (time.monotonic() - outage_began)))
    redis_server.start()
    port = free_port()
    second = serve_process(config, port)  # up once its start wrote back what the first kept
    try:
        metrics = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
    finally:
        second.send_signal(signal.SIGTERM)
        second.communicate(timeout=30)
    print(f"\n{how}: {sum(map(len, answered.values()))} answered ({dict(kinds)}) in {time.monotonic() - started:.1f} s")
    assert kinds["streamed"] > 0 and kinds["plain"] > 0
    return answered, output, records_by_index(redis_server.url), metrics


def metric(metrics: str, name: str) -> float:
    return sum(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines() if line.startswith(name))


@pytest.mark.parametrize("how", ["sigkill", "sigterm"])
def test_a_gateway_stopped_mid_outage_loses_no_answered_step(
    tmp_path: Path, edge: FakeUpstream, cloud: FakeUpstream, own_redis: RedisServer, how: str
) -> None:
    journal = tmp_path / "journal"
    answered, output, recorded, metrics = stop_mid_outage(tmp_path, edge, cloud, own_redis, how, journal)
    total = sum(len(steps) for steps in answered.values())
    lost = [(t, s) for t, steps in answered.items() for s in steps if recorded.get(t, Counter())[s] == 0]
    twice = [(t, s) for t, steps in recorded.items() for s, count in steps.items() if count > 1]
    print(
        "journal figures:",
        orjson.dumps({"how": how, "answered": total, "lost": len(lost), "recorded_twice": len(twice)}).decode(),
    )
    assert total > CLIENTS * 3  # the load ran, through the outage too
    assert lost == []
    assert twice == []
    assert metric(metrics, "tandem_store_written_back_total") > 0  # the second gateway wrote the first's back
    assert metric(metrics, "tandem_journal_lost_total") == 0
    assert metric(metrics, "tandem_store_outage_pending") == 0
    if how == "sigterm":
        assert "not written back to the trajectory store: kept in" in output, output[-3000:]
    # Written back: the first gateway's file is empty of entries now (a header at most).
    assert all(path.stat().st_size < 200 for path in journal.glob("journal-*.tj"))


def test_without_the_journal_folder_a_stopped_gateway_loses_steps_and_says_so(
    tmp_path: Path, edge: FakeUpstream, cloud: FakeUpstream, own_redis: RedisServer
) -> None:
    """Today's in-memory journal (the folder unset): what the test above proves is not trivial."""
    answered, output, recorded, _ = stop_mid_outage(tmp_path, edge, cloud, own_redis, "sigterm", None)
    lost = [(t, s) for t, steps in answered.items() for s in steps if recorded.get(t, Counter())[s] == 0]
    total = sum(len(steps) for steps in answered.values())
    print(
        "journal figures:", orjson.dumps({"how": "sigterm, no folder", "answered": total, "lost": len(lost)}).decode()
    )
    assert lost
    assert "they are lost (set trajectories.outage_journal_dir" in output, output[-3000:]


def test_the_journal_file_holds_no_value_in_clear(
    tmp_path: Path, edge: FakeUpstream, cloud: FakeUpstream, own_redis: RedisServer
) -> None:
    journal = tmp_path / "journal"
    config = config_for(tmp_path, edge, cloud, own_redis.url, journal)
    port = free_port()
    process: subprocess.Popen[str] = serve_process(config, port)
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    try:
        own_redis.stop()
        content = f"mail {EMAIL} and charge card {CARD} for the order"
        with httpx.Client(timeout=10) as http:
            for model in ("private", "tandem"):  # a redact route, and one that keeps values as they are
                response = http.post(
                    url,
                    json={"model": model, "messages": [{"role": "user", "content": content}]},
                    headers={"X-Session-ID": f"sealed-{model}"},
                )
                assert response.status_code == 200, response.text
        assert wait_until(lambda: sum(p.stat().st_size for p in journal.glob("journal-*.tj")) > 1000)
    finally:
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=10)
    data = b"".join(path.read_bytes() for path in journal.glob("journal-*.tj"))
    for value in (EMAIL, CARD, CARD.replace(" ", ""), "alice.journal", "task of"):
        assert value.encode() not in data
    assert b"sealed-" not in data and b"trajectory_id" not in data  # sealed whole, not only the values


# -- the file itself: replayed twice, full, claimed by one worker at a time ----------------------


def journal_store(folder: Path, redis_url: str, key: bytes, max_bytes: int = 1 << 20) -> ResilientStore:
    from router.metrics.core import Metrics

    metrics = Metrics()
    metrics.describe(SeriesScope(store=True))
    file = JournalFile(
        folder, key, max_bytes, 0.001, on_lost=lambda reason, count: metrics.journal_lost.labels(reason).inc(count)
    )
    mirror = MemoryStore(1000, 3600, keep_records=False)
    return ResilientStore(RedisStore(redis_url), mirror, "degrade", metrics, breaker_s=0.1, journal_file=file)


async def outage_steps(store: ResilientStore, trajectory_id: str, steps: int) -> None:
    for index in range(steps):
        start = StepStart(trajectory_id, f"fp{index}", False, "task", "tandem", "", time.time(), token=f"{index:032x}")
        slot = await store.begin_step(start)
        record = StepRecord(trajectory_id, slot.step, "tandem", "edge", "fixed", None, "e", at=time.time())
        await store.record_many([record])
    await store.durable()


def test_a_journal_replayed_after_its_write_back_counts_each_step_once(tmp_path: Path, own_redis: RedisServer) -> None:
    """Killed after writing back but before the file learned of it: the next start replays
    entries Redis holds already; their tokens make each count once."""
    folder, key = tmp_path / "journal", os.urandom(32)

    async def scenario() -> None:
        first = journal_store(folder, own_redis.url, key)
        await first.start()
        own_redis.stop()
        await outage_steps(first, "t:replayed", 6)
        assert first.degraded and len(first.journal) == 12
        (path,) = folder.glob("journal-*.tj")
        kept = path.read_bytes()
        own_redis.start()
        for _ in range(100):
            if not first.degraded:
                break
            await asyncio.sleep(0.05)
        assert not first.degraded and len(first.journal) == 0
        await first.aclose()
        path.write_bytes(kept)  # as if the worker died before the file learned of the write-back
        second = journal_store(folder, own_redis.url, key)
        await second.start()
        assert len(second.journal) == 0 and not second.degraded
        await second.aclose()

    asyncio.run(scenario())
    recorded = records_by_index(own_redis.url)
    assert recorded == {"t:replayed": Counter(dict.fromkeys(range(1, 7), 1))}
    with redis.Redis.from_url(own_redis.url, decode_responses=True) as direct:
        assert direct.hget("tandem:t:t:replayed", "steps") == "6"


def test_a_full_journal_file_keeps_the_rest_in_memory_and_counts_it(tmp_path: Path, own_redis: RedisServer) -> None:
    folder = tmp_path / "journal"

    async def scenario() -> tuple[int, float]:
        store = journal_store(folder, own_redis.url, os.urandom(32), max_bytes=64 * 1024)
        await store.start()
        own_redis.stop()
        await outage_steps(store, "t:full", 200)  # ~1 KB a step: over 64 KB
        lost = store._metrics.journal_lost.labels("file_full")._value.get()
        pending = len(store.journal)
        await store.aclose()
        return pending, lost

    pending, lost = asyncio.run(scenario())
    assert pending == 400  # every write is still kept in memory
    assert 0 < lost < 400
    assert sum(path.stat().st_size for path in folder.glob("journal-*.tj")) <= 64 * 1024


def test_workers_of_one_host_claim_a_file_each_and_take_over_a_stopped_one(
    tmp_path: Path, own_redis: RedisServer
) -> None:
    folder, key = tmp_path / "journal", os.urandom(32)

    async def scenario() -> tuple[list[str], int, int]:
        first = journal_store(folder, own_redis.url, key)
        second = journal_store(folder, own_redis.url, key)
        await first.start()
        await second.start()
        names = sorted(str(s.journal_file.path.name) for s in (first, second) if s.journal_file and s.journal_file.path)
        own_redis.stop()
        await outage_steps(second, "t:second", 3)
        await second.aclose()  # its lock is free now; its entries are still in its file
        third = journal_store(folder, own_redis.url, key)
        await third.start()  # Redis is out: it takes the stopped worker's file over and waits
        taken_over = len(third.journal)
        own_redis.start()
        for _ in range(100):
            if not third.degraded:
                break
            await asyncio.sleep(0.05)
        left = len(third.journal)
        await third.aclose()
        await first.aclose()
        return names, taken_over, left

    names, taken_over, left = asyncio.run(scenario())
    assert names == ["journal-0.tj", "journal-1.tj"]
    assert taken_over == 6 and left == 0
    assert records_by_index(own_redis.url) == {"t:second": Counter({1: 1, 2: 1, 3: 1})}


# -- a streamed step: its record is on disk before the client has [DONE] ------------------------


def test_a_streamed_step_is_on_disk_before_its_done(tmp_path: Path, own_redis: RedisServer) -> None:
    """During an outage a streamed step's record is made after its last byte: it is written to
    the journal (and synced) before `[DONE]` goes out, so that a gateway killed the moment the
    client has its whole answer keeps it. The journal folder is copied as the client reads
    `[DONE]` (what a SIGKILL then would leave) and written back from that copy alone."""
    from router.streaming import DONE_EVENT
    from tests.inprocess import engine_settings, in_process

    folder, copy = tmp_path / "journal", tmp_path / "at-done"

    async def scenario() -> None:
        settings = engine_settings(redis_url=own_redis.url, trajectories={"outage_journal_dir": str(folder)})
        async with in_process(settings) as env:
            own_redis.stop()
            env.edge.push({"kind": "text", "text": "a streamed answer"})
            result = await env.run(session="streamed", stream=True)
            assert isinstance(result, Stream)
            async for chunk in result.chunks:
                if chunk.endswith(DONE_EVENT):
                    shutil.copytree(folder, copy)
            await result.close()
            key = env.engine.vault.journal_key
        own_redis.start()
        second = journal_store(copy, own_redis.url, key)
        await second.start()  # Redis is back: what the copy holds is written back at once
        assert not second.degraded and len(second.journal) == 0
        await second.aclose()

    asyncio.run(scenario())
    (steps,) = records_by_index(own_redis.url).values()
    assert steps == Counter({1: 1})

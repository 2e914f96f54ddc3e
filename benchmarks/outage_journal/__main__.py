"""What the outage journal on disk adds to an answer while Redis is out.

During an outage an answer waits until its step's start and record are in the journal file and
synced (`Tracker.kept`); many steps share one sync (the group commit, `outage_journal_sync_ms`).
This runs `--agents` concurrent agent-like loops against a tracker whose Redis is down (a closed
port: degraded from the first step), each step: count it (`Tracker.begin`), record it, wait as an
answer waits (`Tracker.kept`); once with the journal in memory only, once on disk per sync window.

    python -m benchmarks.outage_journal [--agents 50] [--seconds 5] [--sync-ms 0,5,20] [--dir PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import shutil
import socket
import statistics
import tempfile
import time
from pathlib import Path

import orjson
from starlette.datastructures import Headers

from router.ledger import StepRecord, Usage
from router.metrics.core import Metrics
from router.privacy.runs import RoutePrivacy
from router.privacy.vault import VaultCipher
from router.protocol.chat import parse_chat_request
from router.settings import load_settings
from router.trajectory.resilient import ResilientStore
from router.trajectory.tracker import Tracker


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _agent(tracker: Tracker, name: str, until: float, waits: list[float], steps: list[float]) -> None:
    messages: list[dict[str, object]] = [{"role": "user", "content": f"task of {name}: fix the failing test"}]
    headers = Headers({"x-session-id": name})
    while time.monotonic() < until:
        body = orjson.dumps({"model": "tandem", "messages": messages})
        started = time.perf_counter()
        identity = await tracker.begin(parse_chat_request(body), headers, None, "", "tandem")
        record = StepRecord(
            identity.trajectory_id, identity.step, "tandem", "edge", "route_fixed", None, "e", at=time.time()
        )
        record.usage = Usage(1000, 0, 30)
        ticket = tracker.record(record)
        answered = time.perf_counter()
        await tracker.kept(ticket)
        done = time.perf_counter()
        waits.append(done - answered)
        steps.append(done - started)
        messages = [*messages, {"role": "assistant", "content": f"step {identity.step} done"}]
        await asyncio.sleep(0)  # the answer goes out (a real server yields here): other agents run


Figures = tuple[list[float], list[float], int]


async def _run(folder: Path | None, sync_ms: float, agents: int, seconds: float) -> Figures:
    trajectories: dict[str, object] = {"stitch_by_history": False}
    if folder is not None:
        trajectories |= {"outage_journal_dir": str(folder), "outage_journal_sync_ms": sync_ms}
    settings = load_settings(redis_url=f"redis://127.0.0.1:{_closed_port()}/0", trajectories=trajectories)
    key = VaultCipher.from_env("TANDEM_VAULT_KEY", required=True).journal_key
    tracker = Tracker(settings, Metrics(), RoutePrivacy(settings.routes, settings.privacy_weights), journal_key=key)
    await tracker.start()
    store = tracker.store
    assert isinstance(store, ResilientStore)
    waits: list[float] = []
    steps: list[float] = []
    until = time.monotonic() + seconds
    await asyncio.gather(*(_agent(tracker, f"agent-{i}-{time.time_ns()}", until, waits, steps) for i in range(agents)))
    assert store.degraded
    kept = len(store.journal)
    await tracker.aclose()
    return waits, steps, kept


async def _main(args: argparse.Namespace) -> None:
    os.environ.setdefault("TANDEM_VAULT_KEY", base64.b64encode(os.urandom(32)).decode())
    base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="tandem-bench-journal-"))
    print(f"{args.agents} agents, {args.seconds:g} s each run, Redis down; journal folder: {base}")
    print(f"{'journal':16} {'steps/s':>8} {'wait p50':>9} {'wait p99':>9} {'step p50':>9} {'step p99':>9}  (ms)")
    runs: list[tuple[str, Path | None, float]] = [("memory", None, 0.0)]
    runs += [(f"disk, {ms:g} ms sync", base / f"sync-{ms:g}", ms) for ms in args.sync_ms]
    await _run(None, 0.0, args.agents, 1.0)  # warm-up (imports, first connections), not shown
    try:
        for name, folder, sync_ms in runs:
            waits, steps, kept = await _run(folder, sync_ms, args.agents, args.seconds)
            print(
                f"{name:16} {len(steps) / args.seconds:>8.0f} {statistics.median(waits) * 1e3:>9.3f} "
                f"{_percentile(waits, 0.99) * 1e3:>9.3f} {statistics.median(steps) * 1e3:>9.3f} "
                f"{_percentile(steps, 0.99) * 1e3:>9.3f}  ({kept} writes kept)"
            )
    finally:
        if not args.dir:
            shutil.rmtree(base, ignore_errors=True)
    print("wait: what an answer waits for its step to be on disk; step: count + record + that wait")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--sync-ms", type=lambda s: [float(x) for x in s.split(",")], default=[0.0, 5.0, 20.0])
    parser.add_argument("--dir", help="the journal folder (default: a temporary one)")
    asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    main()

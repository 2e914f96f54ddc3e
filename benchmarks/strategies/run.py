"""Per strategy: the inner calls it makes per step, the latency they add, their tokens.

The demo's simulated edge and cloud answer every call in a fixed time (edge 20 ms, cloud 60 ms by
default), the demo's agent works the demo's tasks through a real gateway (uvicorn on 127.0.0.1)
until each strategy has done at least `--steps` steps, and every number comes from the gateway's
ledger. The strategies run one after another, so that none slows another down.

Added latency of a step = the step's latency in the ledger (request in to last byte relayed)
minus the fixed time of its main call (the one that answered it: 20 ms on the edge, 60 ms on the
cloud). What is left is the strategy's inner calls plus the gateway's own work and the loopback
hops; the edge-only row, which makes no inner call, shows the latter alone.

    python -m benchmarks.strategies [--steps 40] [--seed 7] [--edge-ms 20] [--cloud-ms 60]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import time
from dataclasses import dataclass
from typing import Any

import httpx

from sim.agent import run_task
from sim.gateway import running_gateway
from sim.run import fetch_ledger, gateway_settings, pick_tasks
from sim.server import SimServer
from sim.strategies import STRATEGIES, Strategy
from sim.tasks import Task

TASK_POOL = 36  # distinct tasks (the catalog, round after round), so runs differ
LIMIT_S = 110  # stop starting new strategies past this, to stay under two minutes


@dataclass
class Row:
    strategy: Strategy
    records: list[dict[str, Any]]
    main_s: dict[str, float]
    wall_s: float

    @property
    def steps(self) -> int:
        return len(self.records)

    def per_step(self, count: float) -> float:
        return count / self.steps if self.steps else 0.0

    @property
    def inner(self) -> list[dict[str, Any]]:
        return [call for record in self.records for call in record["inner"]]

    def added_ms(self) -> list[float]:
        # The gateway's first step opens its connections to the upstreams: a one-off, not counted.
        return [1000 * (r["latency_s"] - self.main_s[r["target"]]) for r in self.records[1:]]

    def inner_tokens(self, index: int) -> int:
        return sum(call["usage"][index] for call in self.inner if call.get("usage"))


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile: the smallest value with at least a share q of the values at or below it."""
    ordered = sorted(values)
    return ordered[min(len(ordered), max(1, math.ceil(q * len(ordered)))) - 1]


async def bench_strategy(
    strategy: Strategy, tasks: list[Task], seed: int, edge: SimServer, cloud: SimServer, steps: int
) -> list[dict[str, Any]]:
    settings = gateway_settings(edge.base_url, cloud.base_url, strategy.route_settings(seed))
    records: list[dict[str, Any]] = []
    async with (
        running_gateway(settings) as (base_url, _app),
        httpx.AsyncClient(base_url=base_url, timeout=60) as client,
    ):
        for task in tasks:
            if len(records) >= steps:
                break
            session = f"bench-{strategy.key}-{task.id}"
            run = await run_task(client, task, model="tandem", session_id=session)
            records += (await fetch_ledger(client, session, run.steps))["records"]
    return records


async def bench(steps: int, seed: int, edge_ms: float, cloud_ms: float) -> list[Row]:
    tasks = pick_tasks(TASK_POOL)
    main_s = {"edge": edge_ms / 1000, "cloud": cloud_ms / 1000}
    edge = await SimServer("edge", tasks, seed, latency_s=main_s["edge"]).start()
    cloud = await SimServer("cloud", tasks, seed, latency_s=main_s["cloud"]).start()
    rows = []
    started = time.perf_counter()
    try:
        for strategy in STRATEGIES:
            if time.perf_counter() - started > LIMIT_S:
                print(f"  (time limit: {strategy.label} and later strategies skipped)")
                break
            began = time.perf_counter()
            records = await bench_strategy(strategy, tasks, seed, edge, cloud, steps)
            rows.append(Row(strategy, records, main_s, time.perf_counter() - began))
    finally:
        await edge.stop()
        await cloud.stop()
    return rows


def render(rows: list[Row], edge_ms: float, cloud_ms: float) -> str:
    header = (
        f"{'strategy':<20} {'steps':>5} {'extra calls/step':>16} {'to cloud/step':>13} "
        f"{'added ms mean':>13} {'p50':>5} {'p99':>6} {'inner tok/step in':>17} {'out':>5} {'wall s':>6}"
    )
    lines = [header, "-" * len(header)]
    for row in rows:
        added = row.added_ms()
        cloud_inner = sum(call["target"] == "cloud" for call in row.inner)
        lines.append(
            f"{row.strategy.label:<20} {row.steps:>5} {row.per_step(len(row.inner)):>16.2f} "
            f"{row.per_step(cloud_inner):>13.2f} {statistics.mean(added):>13.1f} {statistics.median(added):>5.1f} "
            f"{percentile(added, 0.99):>6.1f} "
            f"{row.per_step(row.inner_tokens(0)):>17.0f} {row.per_step(row.inner_tokens(2)):>5.0f} {row.wall_s:>6.1f}"
        )
    lines += [
        "",
        f"  Simulated upstreams (no model runs): each edge call takes {edge_ms:g} ms, each cloud call {cloud_ms:g} ms.",
        "  extra calls/step: the strategy's inner calls (probe, judge, draft, verify, advisor, plan, …) per",
        "  step, from each step's `inner` list in the ledger; to cloud/step: those that went to the cloud.",
        "  added ms: the step's latency in the ledger minus the fixed time of the call that answered it",
        f"  ({edge_ms:g} ms edge, {cloud_ms:g} ms cloud): its inner calls plus the gateway's own work and the",
        "  loopback hops (the edge-only row is that work alone). Mean, median and nearest-rank p99 over",
        "  the steps, less each gateway's first (it opens the upstream connections). A step answered by",
        "  an inner call's answer (a draft kept, an edge that did not delegate) is relayed from memory,",
        "  not streamed from the upstream, so it can add less than an edge-only step.",
        "  inner tok/step: prompt (in) and completion (out) tokens of the inner calls, per step.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.strategies", description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=40, help="at least this many steps per strategy (whole runs)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--edge-ms", type=float, default=20.0)
    parser.add_argument("--cloud-ms", type=float, default=60.0)
    args = parser.parse_args(argv)
    if args.steps < 1 or args.edge_ms < 0 or args.cloud_ms < 0:
        parser.error("--steps must be at least 1 and the latencies at least 0")
    print(f"strategies benchmark: >= {args.steps} steps per strategy, seed {args.seed}; please wait ...", flush=True)
    started = time.perf_counter()
    rows = asyncio.run(bench(args.steps, args.seed, args.edge_ms, args.cloud_ms))
    print(render(rows, args.edge_ms, args.cloud_ms))
    print(f"  total wall time {time.perf_counter() - started:.1f} s")
    return 0

"""Time what the edge pool adds to a step's decision: placing the step on a replica
(`EdgePool.place`, affinity with bounded load, or least_loaded / round_robin) and asking whether
the pool is full (`EdgePool.full`, by queue length and estimated wait), with the replicas' load
already read in the background. Trajectories are a mix of new ones and ones with a home; replicas carry load.

    python -m benchmarks.edge_placement [--replicas 2,4,8] [--steps 20000]

Target: ≤ 20 µs per step (issue 31); the figure is the p50 and p99 of single steps.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from benchmarks.report import figure, write_result
from router.edge.pool import EdgePool, ReplicaLoad


def _pool(replicas: int, balance: str) -> EdgePool:
    urls = [(f"http://10.0.0.{i}:8000/v1", None) for i in range(replicas)]
    pool = EdgePool(urls, balance, stale_s=1e9)  # type: ignore[arg-type]
    for index, replica in enumerate(pool.replicas):
        replica.in_flight = index * 3
        replica.load = ReplicaLoad(running=4, waiting=index, run_s=0.5, at=time.monotonic())
    return pool


def measure(replicas: int, balance: str, steps: int) -> tuple[float, float]:
    pool = _pool(replicas, balance)
    rng = random.Random(7)
    ids = [f"ns:trajectory-{n:06d}" for n in range(1000)]
    homes: dict[str, str] = {}
    timings: list[float] = []
    for _ in range(steps):
        trajectory = rng.choice(ids)
        home = homes.get(trajectory)
        started = time.perf_counter()
        placement = pool.place(trajectory, home)
        pool.full(4, 2.0)  # a queue length and an estimated wait (edge_full_waiting, edge_full_wait_s)
        timings.append(time.perf_counter() - started)
        if placement.new_home is not None:
            homes[trajectory] = placement.new_home
    timings.sort()
    return timings[len(timings) // 2] * 1e6, timings[int(len(timings) * 0.99)] * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replicas", default="2,4,8")
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument(
        "--json", type=Path, default=None, help="also write the figures for `python -m benchmarks.report` to this file"
    )
    args = parser.parse_args()
    print("| replicas | balance | p50 µs | p99 µs |")
    print("|---:|---|---:|---:|")
    figures = []
    for replicas in (int(n) for n in args.replicas.split(",")):
        for balance in ("affinity", "least_loaded", "round_robin"):
            p50, p99 = measure(replicas, balance, args.steps)
            print(f"| {replicas} | {balance} | {p50:.1f} | {p99:.1f} |")
            if balance == "affinity":
                # Issue 31's target: the added decision cost of a step <= 20 us.
                name = f"placing an edge step (affinity) plus the full-pool check, p50 / p99, {replicas} replicas"
                figures.append(figure(name, f"{p50:.1f} / {p99:.1f} us", "p50 <= 20 us", p50 <= 20))
    if args.json is not None:
        command = f"python -m benchmarks.edge_placement --replicas {args.replicas} --steps {args.steps}"
        write_result(args.json, "edge_placement", command, figures)
        print(f"figures written to {args.json}")


if __name__ == "__main__":
    main()

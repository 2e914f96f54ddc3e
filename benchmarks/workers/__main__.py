"""Workers that scale: requests per gateway CPU-second and wrk's c=64 tail, 1 worker against 2,
both with Redis, in one run.

`python -m benchmarks.workers [--rounds 4] [--seconds 5] [--no-wrk] [--json PATH] [--baseline DIR]`

Method: a fake upstream answering at once (`benchmarks.overhead.fakeupstream`), a real
`redis-server` (no persistence) and, per round, a fresh `tandem serve --workers N` with
`redis_url` set (the overhead benchmark's 1.6 KB agent step on its edge route, no session id),
N = 1 and 2, and beside them one worker without Redis (what the shared state costs), in turns,
the order reversed each round. Pinning on two cores: the upstream, Redis
and the load generator on the second core; one worker on the first; two workers unpinned (one
per core as the kernel places them), so the second worker shares its core with the load, the
upstream and Redis: the figure is what adding a worker on this machine gives. Per round: 0.5 s of
warm-up, then `--seconds` of 64 keep-alive connections (the project's closed-loop generator);
the CPU is utime + stime of every process of the gateway's tree (the supervisor and its
workers, from /proc) over that window. Reported: the median of the rounds' requests per
gateway CPU-second (target: 2 workers >= 0.9 x 1 worker) and requests per second; then, with
`wrk` installed, `wrk -t1 -c64 -d5s --latency` against a second fake upstream answering after
100 ms (as `benchmarks.wrk`), straight and through each variant after a 2 s window of its own
(wrk has no warm-up): the added p50 and p99. `--rounds 0` leaves out the CPU part.
`--tasks`: wrk's requests each a run's first step of a task of its own under the one system
prompt (the agent step's user message numbered), as an agent's runs come, rather than one body
again and again. `--baseline DIR` (repeatable) adds, in the same turns, one and two workers with
Redis run from another checkout (e.g. a worktree of main), and its three variants to the tails:
a change's before and after side by side in one run.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import shutil
import statistics
import sys
from pathlib import Path

import yaml

from benchmarks.cpu.__main__ import cpu_s
from benchmarks.overhead.gateways import _base_env
from benchmarks.overhead.loadgen import chat_body, http_request, run_load
from benchmarks.overhead.procs import Service, free_port, pinned
from benchmarks.report import figure, write_result

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / ".bench" / "workers"
KEY = "sk-bench"
# 0 stands for one worker without Redis: what Redis itself costs, beside what a worker adds.
WORKERS = (0, 1, 2)
LABELS = {0: "1 worker, no Redis", 1: "1 worker with Redis", 2: "2 workers with Redis"}
# A variant: (workers, the checkout its gateway runs from; None: this one).
Variant = tuple[int, Path | None]


def _label(variant: Variant) -> str:
    workers, tree = variant
    return LABELS[workers] + ("" if tree is None else f", baseline {tree.name}")


def _config(upstream_port: int, redis_port: int, workers: int) -> Path:
    base = f"http://127.0.0.1:{upstream_port}/v1"
    config = {
        "log_level": "warning",
        "client_api_keys": [KEY],
        "server": {"workers": max(1, workers)},
        "upstreams": {
            "edge": {"base_url": base, "model": "fake-model", "prices": {"input": 0.1, "output": 0.15}},
            "cloud": {"base_url": base, "model": "fake-model", "prices": {"input": 2.5, "output": 15.0}},
        },
        "routes": {"fast": {"strategy": "edge"}},
    }
    if workers:
        config["redis_url"] = f"redis://127.0.0.1:{redis_port}/0"
    path = OUT / f"tandem-{workers}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _gateway(upstream_port: int, redis_port: int, workers: int, cpu: int | None, tree: Path | None = None) -> Service:
    port = free_port()
    config = _config(upstream_port, redis_port, workers)
    command = [sys.executable, "-m", "router.cli", "serve", "--config", str(config), "--port", str(port)]
    root = tree or REPO
    env = {**_base_env(), "PYTHONPATH": str(root), "TANDEM_VAULT_KEY": base64.b64encode(os.urandom(32)).decode()}
    log = OUT / f"tandem-{workers}{'-baseline' if tree else ''}.log"
    return Service.start(f"tandem-{workers}", port, pinned(command, cpu if workers <= 1 else None), log, env, cwd=root)


def _tree_cpu_s(service: Service) -> dict[int, float]:
    found = {}
    for pid in service.tree():
        try:
            found[pid] = cpu_s(pid)
        except OSError:
            continue
    return found


async def _round(
    upstream_port: int, redis_port: int, variant: Variant, seconds: float, cpu: int | None
) -> tuple[float, float]:
    """(requests per gateway CPU-second, requests per second) of a fresh gateway of `variant`."""
    workers, tree = variant
    gateway = _gateway(upstream_port, redis_port, workers, cpu, tree)
    try:
        await gateway.wait_ready("/healthz", 60)
        request = http_request(gateway.port, "/v1/chat/completions", chat_body("fast", False))
        await run_load(gateway.port, request, streamed=False, concurrency=64, warmup_s=0.0, duration_s=0.5)
        before = _tree_cpu_s(gateway)
        result = await run_load(gateway.port, request, streamed=False, concurrency=64, warmup_s=0.0, duration_s=seconds)
        after = _tree_cpu_s(gateway)
        if result.errors:
            raise RuntimeError(f"{_label(variant)}: {result.errors} errors, first: {result.first_error}")
        spent = sum(after[pid] - before.get(pid, 0.0) for pid in after)
        return result.answered / spent, result.answered / seconds
    finally:
        gateway.stop()


def _wrk(port: int, seconds: int, cpu: int | None, tasks: bool = False) -> tuple[float, float]:
    """wrk's p50 and p99 (ms) at c=64 for the agent step on the `fast` route, wrk on `cpu`
    (`tasks`: each request a task of its own under the one system prompt)."""
    from benchmarks.wrk.__main__ import OUT as WRK_OUT
    from benchmarks.wrk.__main__ import _wrk as run_wrk

    WRK_OUT.mkdir(parents=True, exist_ok=True)
    return run_wrk(port, "fast", 64, seconds, cpu, tasks)


async def main_async(args: argparse.Namespace) -> int:
    two = (os.cpu_count() or 1) >= 2
    gateway_cpu, other_cpu = (0, 1) if two else (None, None)
    OUT.mkdir(parents=True, exist_ok=True)
    upstream_port, slow_port, redis_port = free_port(), free_port(), free_port()
    upstreams = [
        _upstream(upstream_port, other_cpu),
        _upstream(slow_port, other_cpu, "--delay-ms", "100"),
    ]
    redis_command = ["redis-server", "--port", str(redis_port), "--save", "", "--appendonly", "no"]
    redis = Service.start("redis", redis_port, pinned(redis_command, other_cpu), OUT / "redis.log", _base_env())
    if other_cpu is not None:
        os.sched_setaffinity(0, {other_cpu})
    figures = []
    try:
        for upstream in upstreams:
            await upstream.wait_ready("/v1/models", 20)
        if args.rounds > 0:
            figures += await _scaling(args, upstream_port, redis_port, gateway_cpu)
        if not args.no_wrk and shutil.which("wrk") is not None:
            figures += await _tails(slow_port, redis_port, gateway_cpu, other_cpu, args.baseline, args.tasks)
        elif not args.no_wrk:
            print("wrk is not installed (apt-get install wrk): the tail is not measured")
        if args.json is not None:
            command = f"python -m benchmarks.workers --rounds {args.rounds} --seconds {args.seconds:g}"
            command += " --no-wrk" if args.no_wrk else " --tasks" if args.tasks else ""
            command += "".join(" --baseline DIR" for _ in args.baseline)
            write_result(args.json, "workers", command, figures)
        return 0
    finally:
        for upstream in upstreams:
            upstream.stop()
        redis.stop()


def _upstream(port: int, cpu: int | None, *options: str) -> Service:
    command = [sys.executable, "-m", "benchmarks.overhead.fakeupstream", "--port", str(port), *options]
    return Service.start(
        f"upstream-{port}", port, pinned(command, cpu), OUT / f"upstream-{port}.log", _base_env(), cwd=REPO
    )


async def _scaling(
    args: argparse.Namespace, upstream_port: int, redis_port: int, gateway_cpu: int | None
) -> list[dict[str, object]]:
    """Requests per gateway CPU-second of each variant, in turns; their figures."""
    variants: list[Variant] = [(n, None) for n in WORKERS]
    for tree in args.baseline:
        variants += [(1, tree), (2, tree)]
    per_cpu: dict[Variant, list[float]] = {v: [] for v in variants}
    rates: dict[Variant, list[float]] = {v: [] for v in variants}
    for number in range(args.rounds):
        for variant in variants if number % 2 == 0 else list(reversed(variants)):
            efficiency, rate = await _round(upstream_port, redis_port, variant, args.seconds, gateway_cpu)
            per_cpu[variant].append(efficiency)
            rates[variant].append(rate)
            load = os.getloadavg()[0]
            said = f"{efficiency:.0f} requests per CPU-s, {rate:.0f} requests/s, load {load:.1f}"
            print(f"round {number + 1}, {_label(variant)}: {said}")
    lines = [
        f"{_label(v)}: {statistics.median(per_cpu[v]):.0f} requests per gateway CPU-s "
        f"({1000 / statistics.median(per_cpu[v]):.2f} ms a request), {statistics.median(rates[v]):.0f} requests/s"
        for v in variants
    ]
    figures = [
        figure(
            f"{_label(v)}: requests per gateway CPU-second",
            f"{statistics.median(per_cpu[v]):.0f} ({statistics.median(rates[v]):.0f} requests/s)",
        )
        for v in variants
    ]
    for tree in [None, *args.baseline]:
        ratio = statistics.median(per_cpu[(2, tree)]) / statistics.median(per_cpu[(1, tree)])
        name = "2 workers / 1 worker, requests per gateway CPU-second" + ("" if tree is None else f", {tree.name}")
        lines.append(f"{name}: {ratio:.2f} (target >= 0.9)")
        figures.append(figure(name, f"{ratio:.2f}", ">= 0.9", ratio >= 0.9))
    print("\n" + "\n".join(lines))
    return figures


async def _tails(
    slow_port: int,
    redis_port: int,
    gateway_cpu: int | None,
    other_cpu: int | None,
    trees: list[Path] | None = None,
    tasks: bool = False,
) -> list[dict[str, object]]:
    """wrk at c=64 against the 100 ms upstream, straight and through each variant (and each
    baseline checkout's, `trees`): added p50/p99."""
    direct = _wrk(slow_port, 5, other_cpu, tasks)
    bodies = ", a task of its own each" if tasks else ""
    print(f"wrk c=64{bodies}, straight to the 100 ms upstream: p50 {direct[0]:.2f} ms, p99 {direct[1]:.2f} ms")
    figures = [
        figure(f"wrk c=64{bodies}, straight to the 100 ms upstream", f"p50 {direct[0]:.2f} ms, p99 {direct[1]:.2f} ms")
    ]
    for tree in [None, *(trees or [])]:
        for workers in WORKERS:
            gateway = _gateway(slow_port, redis_port, workers, gateway_cpu, tree)
            try:
                await gateway.wait_ready("/healthz", 60)
                _wrk(gateway.port, 2, other_cpu, tasks)  # wrk has no warm-up: the gateway's first connections
                p50, p99 = _wrk(gateway.port, 5, other_cpu, tasks)
            finally:
                gateway.stop()
            added = f"added p50 {p50 - direct[0]:.2f} ms, p99 {p99 - direct[1]:.2f} ms"
            label = _label((workers, tree))
            print(f"wrk c=64{bodies}, {label}: {added}")
            figures.append(figure(f"wrk c=64{bodies} through the gateway, {label}", added))
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=5.0, help="measured window per round")
    parser.add_argument("--no-wrk", action="store_true", help="leave out wrk's tail")
    parser.add_argument(
        "--tasks",
        action="store_true",
        help="wrk's requests each a run's first step of a task of its own under the one system prompt",
    )
    parser.add_argument("--json", type=Path, help="write the figures here (benchmarks.report's shape)")
    parser.add_argument(
        "--baseline",
        type=Path,
        action="append",
        default=[],
        help="another checkout (a worktree of main): its 1 and 2 workers with Redis beside these; repeatable",
    )
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    raise SystemExit(main())

"""The gateway's CPU time per request at saturation, for this checkout and others, alternating.

`python -m benchmarks.cpu [--rounds 4] [--seconds 5] [--baseline DIR ...] [--route edge|judge ...]
 [--pure-too] [--json PATH]`

Throughput and latency on a machine shared with other jobs move by a third from one run to the
next; the CPU time the gateway's process spends per request (utime + stime from
/proc/<pid>/stat over a window of thousands of requests) barely does, so it is what compares two
checkouts there. Method: the fast fake upstream of `benchmarks.overhead` on the second core, a
fresh gateway per round on the first (`tandem serve`, the overhead benchmark's config), the
overhead benchmark's 1.6 KB agent step sent non-streamed by 64 keep-alive connections (no
session id: history stitching runs, as in that benchmark's saturation scenario), 0.5 s warm-up,
then `--seconds` measured; the checkouts take turns, the order reversed each round. `--route`
(repeatable; `edge` by default): the route the body names, `edge` (the config's `fast`, strategy
edge) or `judge` (strategy judge, the shipped ONNX judge). Reported:
the median CPU µs per request of each checkout, with every round's figure. `--pure-too` adds each
checkout a second time with `TANDEM_PURE=1` (its pure-Python modules though a compiled build of
them exists, `router/native.py`): the compiled modules' gain in one run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks.checkouts import add_arguments, cores, start_checkout, start_upstream
from benchmarks.overhead.loadgen import chat_body, http_request, run_load
from benchmarks.overhead.procs import free_port
from benchmarks.report import figure, write_result

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / ".bench" / "cpu"
KEY = "sk-bench"
_TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """utime + stime of a process, in seconds."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


PURE = {"TANDEM_PURE": "1"}
# The model name each `--route` sends (the overhead benchmark's config, `benchmarks.checkouts`).
ROUTES = {"edge": "fast", "judge": "judge"}


def mode_of(source: Path, env: dict[str, str]) -> str:
    """What `router.native` says in a process of `source` with `env` (`compiled: N modules …`)."""
    code = "import router.native as n; print(n.state().describe())"
    environ = {**os.environ, "PYTHONPATH": str(source), **env}
    done = subprocess.run(
        [sys.executable, "-c", code], env=environ, cwd=source, capture_output=True, text=True, timeout=60
    )
    return done.stdout.strip() or "unknown (this checkout has no router.native)"


async def _round(
    source: Path, upstream_port: int, seconds: float, cpu: int | None, env: dict[str, str], route: str = "edge"
) -> tuple[float, float]:
    """(CPU µs per request, requests/s) of a fresh gateway from `source` with `env`, on `route`."""
    gateway, port = start_checkout(source, upstream_port, OUT, cpu, KEY, env)
    try:
        await gateway.wait_ready("/healthz", 30)
        request = http_request(port, "/v1/chat/completions", chat_body(ROUTES[route], False))
        await run_load(port, request, streamed=False, concurrency=64, warmup_s=0.0, duration_s=0.5)
        before = cpu_s(gateway.process.pid)
        result = await run_load(port, request, streamed=False, concurrency=64, warmup_s=0.0, duration_s=seconds)
        spent = cpu_s(gateway.process.pid) - before
        if result.errors:
            raise RuntimeError(f"{source}: {result.errors} errors, first: {result.first_error}")
        return spent / result.answered * 1e6, result.answered / seconds
    finally:
        gateway.stop()


async def main_async(args: argparse.Namespace) -> int:
    gateway_cpu, other_cpu = cores()
    runs: list[tuple[str, Path, dict[str, str], str]] = []
    for route in args.route or ["edge"]:
        for source in [REPO, *args.baseline]:
            runs.append((f"{route} route, {source} ({mode_of(source, {})})", source, {}, route))
            if args.pure_too:
                runs.append((f"{route} route, {source} ({mode_of(source, PURE)})", source, PURE, route))
    upstream_port = free_port()
    upstream = start_upstream(upstream_port, other_cpu, OUT / "upstream.log")
    figures: dict[str, list[float]] = {label: [] for label, _, _, _ in runs}
    try:
        await upstream.wait_ready("/v1/models", 20)
        for number in range(args.rounds):
            for label, source, env, route in runs if number % 2 == 0 else list(reversed(runs)):
                per_request, rate = await _round(source, upstream_port, args.seconds, gateway_cpu, env, route)
                figures[label].append(per_request)
                load = os.getloadavg()[0]
                line = f"round {number + 1} {label}: {per_request:.0f} µs/request, {rate:.0f} requests/s"
                print(f"{line}, load {load:.2f}")
        print("\ngateway CPU per request at saturation (c=64, no session id), median of the rounds:")
        for label, values in figures.items():
            rounds = ", ".join(f"{v:.0f}" for v in values)
            print(f"  {label}: {statistics.median(values):.0f} µs (rounds: {rounds})")
        if args.json is not None:
            results = [
                figure(
                    f"gateway CPU µs per request, {label.replace(str(REPO), 'this checkout')}",
                    f"{statistics.median(values):.0f}",
                )
                for label, values in figures.items()
            ]
            command = f"python -m benchmarks.cpu --rounds {args.rounds} --seconds {args.seconds:g}"
            command += "".join(f" --route {route}" for route in args.route or [])
            write_result(args.json, "cpu", command + (" --pure-too" if args.pure_too else ""), results)
        return 0
    finally:
        upstream.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser, seconds=5.0)
    parser.add_argument("--route", action="append", choices=sorted(ROUTES), help="the route measured (repeatable)")
    parser.add_argument("--pure-too", action="store_true", help="each checkout also with TANDEM_PURE=1")
    parser.add_argument("--json", type=Path, help="write the figures here (benchmarks.report's shape)")
    args = parser.parse_args()
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    raise SystemExit(main())

"""Added latency at c=64 over a 100 ms upstream, for this checkout and others, side by side.

`python -m benchmarks.paired [--rounds 4] [--seconds 4] [--streamed] [--route slow] [--baseline DIR ...]`

`benchmarks.overhead` runs one checkout; between two of its runs this shared machine drifts by
more than a change moves the c=64 figures (its added p50 of one checkout has spread over
0.8–1.3 ms). Here the checkouts take turns within one run, the order reversed each round, on the
same fake upstream: a fresh gateway per round on the first core (`tandem serve`, the overhead
benchmark's config), the fake upstream (100 ms, the overhead benchmark's slow one) and the load
on the second; 64 keep-alive connections spread over one upstream period (as the overhead
benchmark's c=64 scenarios), 0.5 s warm-up, then `--seconds` measured, through the gateway and
straight to the upstream just before. Reported per round and as medians: added p50 and p99 of
the whole answer (of the first token with `--streamed`), and the gateway's CPU per request.
The default route, `slow`, is a cloud route (its calls measured by the privacy stage); `fast`
is an edge route.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
from pathlib import Path

from benchmarks.checkouts import add_arguments, cores, start_checkout, start_upstream
from benchmarks.cpu.__main__ import cpu_s
from benchmarks.overhead.loadgen import LoadResult, chat_body, http_request, run_load
from benchmarks.overhead.procs import free_port
from benchmarks.overhead.scenarios import SLOW, percentile

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / ".bench" / "paired"
KEY = "sk-bench"
CONCURRENCY = 64
STAGGER_S = 0.1
WARMUP_S = 0.5


def _times(result: LoadResult, streamed: bool) -> list[float]:
    return [t * 1000 for t in (result.ttfts_s if streamed else result.latencies_s)]


async def _round(
    source: Path, upstream_port: int, args: argparse.Namespace, cpu: int | None
) -> tuple[float, float, float]:
    """(added p50 ms, added p99 ms, CPU µs per request) of a fresh gateway from `source`."""
    gateway, port = start_checkout(source, upstream_port, OUT, cpu, KEY)
    load = {"streamed": args.streamed, "concurrency": CONCURRENCY, "warmup_s": WARMUP_S}
    try:
        await gateway.wait_ready("/healthz", 30)
        direct_request = http_request(upstream_port, "/v1/chat/completions", chat_body("fake-model", args.streamed))
        direct = await run_load(upstream_port, direct_request, **load, duration_s=args.seconds, stagger_s=STAGGER_S)
        request = http_request(port, "/v1/chat/completions", chat_body(args.route, args.streamed))
        before = cpu_s(gateway.process.pid)
        through = await run_load(port, request, **load, duration_s=args.seconds, stagger_s=STAGGER_S)
        spent = cpu_s(gateway.process.pid) - before
        if through.errors or direct.errors:
            raise RuntimeError(f"{source}: {through.errors + direct.errors} errors, first: {through.first_error}")
        near, far = _times(direct, args.streamed), _times(through, args.streamed)
        added_p50 = percentile(far, 50) - percentile(near, 50)
        added_p99 = percentile(far, 99) - percentile(near, 99)
        return added_p50, added_p99, spent / through.answered * 1e6
    finally:
        gateway.stop()


async def main_async(args: argparse.Namespace) -> int:
    gateway_cpu, other_cpu = cores()
    sources: list[Path] = [REPO, *args.baseline]
    upstream_port = free_port()
    slow = [f"--delay-ms={SLOW['delay_ms']}", f"--chunks={int(SLOW['chunks'])}"]
    slow += [f"--chunk-interval-ms={SLOW['chunk_interval_ms']}"]
    upstream = start_upstream(upstream_port, other_cpu, OUT / "upstream.log", *slow)
    figures: dict[Path, list[tuple[float, float, float]]] = {source: [] for source in sources}
    what = "first token" if args.streamed else "whole answer"
    try:
        await upstream.wait_ready("/v1/models", 20)
        for number in range(args.rounds):
            for source in sources if number % 2 == 0 else reversed(sources):
                p50, p99, cpu = await _round(source, upstream_port, args, gateway_cpu)
                figures[source].append((p50, p99, cpu))
                load = os.getloadavg()[0]
                line = f"round {number + 1} {source}: added p50 {p50:.2f} ms, p99 {p99:.2f} ms"
                print(f"{line}, {cpu:.0f} µs CPU/request, load {load:.2f}")
        print(f"\nadded latency ({what}), route {args.route}, c={CONCURRENCY}, 100 ms upstream; medians of the rounds:")
        for source, values in figures.items():
            p50 = statistics.median(v[0] for v in values)
            p99 = statistics.median(v[1] for v in values)
            cpu = statistics.median(v[2] for v in values)
            print(f"  {source}: p50 {p50:.2f} ms, p99 {p99:.2f} ms, {cpu:.0f} µs CPU/request")
        return 0
    finally:
        upstream.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser, seconds=4.0)
    parser.add_argument("--streamed", action="store_true", help="streamed answers: time to first token")
    parser.add_argument("--route", choices=("slow", "fast"), default="slow", help="slow: a cloud route; fast: edge")
    args = parser.parse_args()
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    raise SystemExit(main())

"""Time what the metrics cost: per step on the request path, and per scrape of `/metrics`.

Per step: the metric calls the pipeline makes when it closes a step's record (three token
counters, cost, counterfactual, the step counter, latency and time-to-first-token histograms),
on label values that vary like real traffic (100 routes, both targets, several reasons), in
one process and in multiprocess mode (values in memory-mapped files, `--workers N`).

Per scrape: a real gateway (uvicorn on a loopback port) configured with 100 routes, its
metrics filled as if every route had served traffic (steps by target, reason and status,
fallbacks, judge scores, privacy values, closed-trajectory histograms), then `GET /metrics`
timed end to end over HTTP. In multiprocess mode, the exposition is read from the files of
four worker processes that each filled the same series.

Targets (issue 8): ≤ 50 µs per step, ≤ 50 ms per scrape with 100 routes.

    python -m benchmarks.metrics [--steps 20000] [--scrapes 40] [--routes 100]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from benchmarks.metrics.workload import REASONS, fill, fill_worker, route_names, step_calls

ROUTES = 100


def per_step_us(steps: int, routes: int) -> list[float]:
    """Microseconds per step, one figure per pass of `steps` steps."""
    from router.metrics.core import Metrics

    metrics = Metrics()
    names = route_names(routes)
    plan = [
        (names[i % routes], ("edge", "cloud")[i % 3 == 0], REASONS[i % len(REASONS)], ("ok", "error")[i % 50 == 0])
        for i in range(steps)
    ]
    figures = []
    for _ in range(5):
        started = time.perf_counter()
        for route, target, reason, status in plan:
            step_calls(metrics, route, target, reason, status)
        figures.append((time.perf_counter() - started) / steps * 1e6)
    return figures


def scrape_ms_multiprocess(routes: int, scrapes: int, workers: int = 4) -> tuple[list[float], int]:
    """Run in a process whose PROMETHEUS_MULTIPROC_DIR was set before prometheus-client loaded."""
    from router.metrics.core import Metrics, multiprocess_active

    assert multiprocess_active(), "PROMETHEUS_MULTIPROC_DIR must be set before the import"
    context = multiprocessing.get_context("spawn")
    for _ in range(workers):
        process = context.Process(target=fill_worker, args=(routes,))
        process.start()
        process.join()
    metrics = Metrics()
    figures = []
    size = 0
    for _ in range(scrapes):
        started = time.perf_counter()
        size = len(metrics.exposition())
        figures.append((time.perf_counter() - started) * 1e3)
    return figures, size


def scrape_ms_http(routes: int, scrapes: int) -> tuple[list[float], int]:
    """`GET /metrics` on a real gateway with `routes` routes configured and filled."""
    import httpx
    import uvicorn

    from router.app import create_app
    from router.runtime import tune_process
    from router.settings import load_settings

    names = route_names(routes)
    settings = load_settings(
        upstreams={
            "edge": {"base_url": "http://127.0.0.1:9/v1", "model": "edge"},
            "cloud": {"base_url": "http://127.0.0.1:9/v1", "model": "cloud"},
        },
        routes={name: {"strategy": "random", "p": 0.4} for name in names},
    )
    app = create_app(settings, on_started=tune_process)  # as `tandem serve` runs it
    fill(app.state.engine.metrics, names)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on", loop="asyncio")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    figures = []
    size = 0
    try:
        with httpx.Client() as client:
            client.get(f"http://127.0.0.1:{port}/metrics")
            for _ in range(scrapes):
                started = time.perf_counter()
                response = client.get(f"http://127.0.0.1:{port}/metrics")
                figures.append((time.perf_counter() - started) * 1e3)
                size = len(response.content)
    finally:
        server.should_exit = True
        thread.join(10)
    return figures, size


def _in_multiprocess_mode(arguments: list[str]) -> str:
    """Run this module again with PROMETHEUS_MULTIPROC_DIR set before anything imports
    prometheus-client; returns what it printed."""
    with tempfile.TemporaryDirectory(prefix="tandem-bench-metrics-") as folder:
        env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": folder}
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.metrics", "--child", *arguments],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    return done.stdout


def _summary(figures: list[float]) -> str:
    return f"{statistics.median(figures):8.2f} {max(figures):8.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.metrics", description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--scrapes", type=int, default=40)
    parser.add_argument("--routes", type=int, default=ROUTES)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        step = per_step_us(args.steps, args.routes)
        scrape, size = scrape_ms_multiprocess(args.routes, args.scrapes)
        print(f"multiprocess  per-step-us {_summary(step)}")
        print(f"multiprocess  scrape-ms   {_summary(scrape)}  {size // 1024} KiB (4 workers' files)")
        return 0
    print(f"metrics cost, {args.routes} routes                     median      max")
    step = per_step_us(args.steps, args.routes)
    print(f"one process   per-step-us {_summary(step)}")
    scrape, size = scrape_ms_http(args.routes, args.scrapes)
    print(f"one process   scrape-ms   {_summary(scrape)}  {size // 1024} KiB (GET /metrics over HTTP)")
    print(
        _in_multiprocess_mode(
            ["--steps", str(args.steps), "--scrapes", str(args.scrapes), "--routes", str(args.routes)]
        ),
        end="",
    )
    print("targets: per step <= 50 us, scrape <= 50 ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

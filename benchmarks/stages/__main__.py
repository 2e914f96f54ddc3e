"""Where a step's CPU goes, stage by stage: the engine's per-stage times (`TANDEM_STAGE_TIMES=1`)
for an edge route, a judge route and a redact route.

`python -m benchmarks.stages [--requests 300] [--steps 60] [--redis] [--json PATH]`

Method: the fake upstream of `benchmarks.overhead` (answering at once) in its own process on
the second core when there are two; the engine in this process on the first, with its stage
times on, sending one step at a time through `Engine.chat` (the chat handler's entry point: the
body's parse, then the chain) over the built-in HTTP/1.1 client. After each step its answer's
`after` work runs and the recorder is flushed, outside the times, so that the next step's
stages do not pay for them. Each time is the thread's CPU time: a stage waiting on the network
costs nothing; the forward stage's time is the client's work on the call (the upstream's
process is elsewhere). Two workloads per route:

- `agent step`: the overhead benchmark's 1.6 KB agent step (`benchmarks.cpu`'s body), sent
  `--requests` times with no session id (history stitching finds its trajectory);
- `long run`: one generated agent run (`benchmarks.longrun`'s, `--steps` steps to ~250 KB, its
  own session id), the mean over its last 10 steps.

Reported: µs per step for each stage, and their sum. Not in it: the server, the ASGI app and the
handler around the engine, and the work a step leaves off its answer's path (the record's
write, a put-off privacy scan): `benchmarks.cpu` measures the whole process. Beside the stages,
the `whole step` row: the process's CPU time per agent step with all of that (the answer's
after-work, the recorder's flush, the store's round trips), the stage timers aside.

`--redis`: the trajectory store is a `redis-server` of its own (started on a free port, no
persistence; `redis-server` on PATH), as `server.workers` or replicas use it: the stitching's
reads and claim, the step start and the record go to Redis.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from benchmarks.checkouts import cores, start_upstream
from benchmarks.longrun.trajectory import RunShape, request_body, run_messages
from benchmarks.overhead.loadgen import chat_body
from benchmarks.overhead.procs import free_port
from benchmarks.report import figure, write_result

ROUTES = ("edge", "judge", "redact")
STAGES = ("parse", "identify", "scan", "decide", "context", "redact", "forward", "restore", "record")


def _settings(upstream_port: int, redis_url: str | None = None) -> Any:
    from router.settings import load_settings

    base = f"http://127.0.0.1:{upstream_port}/v1"
    config = {
        "log_level": "warning",
        "upstreams": {
            "edge": {"base_url": base, "model": "fake-model", "prices": {"input": 0.1, "output": 0.15}},
            "cloud": {
                "base_url": base,
                "model": "fake-model",
                "prices": {"input": 2.50, "cached_input": 0.25, "output": 15.00},
            },
        },
        "routes": {
            "edge": {"strategy": "edge"},
            "judge": {"strategy": "judge"},
            "redact": {"strategy": "cloud", "privacy": "redact"},
        },
        "trajectories": {"max_in_memory": 1000},
    }
    if redis_url is not None:
        config["redis_url"] = redis_url
    path = Path(tempfile.mkdtemp(prefix="tandem-stages-")) / "tandem.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return load_settings(path)


async def _step(engine: Any, body: bytes, headers: dict[str, str]) -> None:
    from router.result import Answer, Failure, StepMeta, Stream

    result = await engine.chat(body, StepMeta(headers, ""))
    if isinstance(result, Failure):
        raise SystemExit(f"the step failed: {result.status} {result.error['message']}")
    if isinstance(result, Stream):
        async for _ in result.chunks:
            pass
        await result.close()
    if isinstance(result, Answer) and result.after is not None:
        await result.after()
    await engine.tracker.recorder.flush()


async def _measure(
    upstream: Any, requests: int, steps: int, redis_url: str | None = None
) -> tuple[dict[str, dict[str, dict[str, float]]], dict[str, float]]:
    """Per route, the stages' µs per step of each workload; and the whole agent step's."""
    from router.engine import Engine

    await upstream.wait_ready("/v1/models", 20)
    upstream_port = upstream.port
    os.environ["TANDEM_STAGE_TIMES"] = "1"
    engine = Engine(_settings(upstream_port, redis_url))
    times = engine.stage_times
    assert times is not None
    await engine.start()
    table: dict[str, dict[str, dict[str, float]]] = {}
    wholes: dict[str, float] = {}
    try:
        for route in ROUTES:
            body = chat_body(route, False)
            for _ in range(20):  # warm-up: imports, the judge's first run, the pools
                await _step(engine, body, {})
            times.clear()
            started = time.process_time()
            for _ in range(requests):
                await _step(engine, body, {})
            whole = (time.process_time() - started) * 1e6 / requests
            short = times.per_step_us()
            shape = RunShape(steps=steps, target_bytes=250_000, dump_values=200 if route == "redact" else 0)
            headers = {"x-session-id": f"stages-{route}-{time.time_ns()}"}
            for index, messages in enumerate(run_messages(7, shape)):
                if index == steps - 10:
                    times.clear()
                await _step(engine, request_body(route, messages), headers)
            table[route] = {"agent step": short, "long run": times.per_step_us()}
            wholes[route] = whole
    finally:
        await engine.close()
    return table, wholes


def _render(table: dict[str, dict[str, dict[str, float]]], wholes: dict[str, float]) -> str:
    columns = [(route, load) for route in ROUTES for load in ("agent step", "long run")]
    lines = [
        "| stage | " + " | ".join(f"{route}, {load}" for route, load in columns) + " |",
        "|---|" + "---:|" * len(columns),
    ]
    for stage in STAGES:
        cells = [f"{table[route][load].get(stage, 0.0):.0f}" for route, load in columns]
        lines.append(f"| {stage} | " + " | ".join(cells) + " |")
    totals = [f"**{sum(table[route][load].values()):.0f}**" for route, load in columns]
    lines.append("| **sum** | " + " | ".join(totals) + " |")
    cells = [f"{wholes[route]:.0f}" if load == "agent step" else "-" for route, load in columns]
    lines.append("| whole step (process CPU) | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _redis_server() -> tuple[subprocess.Popen[bytes], str]:
    """A `redis-server` of the benchmark's own: no persistence, on a free port."""
    port = free_port()
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return process, f"redis://127.0.0.1:{port}/0"
        time.sleep(0.05)
    process.kill()
    raise SystemExit("redis-server did not start")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300, help="agent steps per route")
    parser.add_argument("--steps", type=int, default=60, help="steps of the long run per route")
    parser.add_argument("--redis", action="store_true", help="the trajectory store in a redis-server of its own")
    parser.add_argument("--json", type=Path, help="write the figures here (benchmarks.report's shape)")
    args = parser.parse_args()
    redis: subprocess.Popen[bytes] | None = None
    redis_url = None
    if args.redis:
        redis, redis_url = _redis_server()
        # The vault's key, which a Redis store requires: a benchmark's own, for this process.
        os.environ.setdefault("TANDEM_VAULT_KEY", base64.b64encode(os.urandom(32)).decode())
    gateway_cpu, upstream_cpu = cores()
    port = free_port()
    log = Path(tempfile.mkdtemp(prefix="tandem-stages-")) / "upstream.log"
    upstream = start_upstream(port, upstream_cpu, log)
    if gateway_cpu is not None:
        os.sched_setaffinity(0, {gateway_cpu})
    try:
        table, wholes = asyncio.run(_measure(upstream, args.requests, args.steps, redis_url))
    finally:
        upstream.stop()
        if redis is not None:
            redis.terminate()
            redis.wait()
    store = "Redis" if args.redis else "in memory"
    print(f"CPU µs per step, by stage (TANDEM_STAGE_TIMES=1; the engine only; trajectory store {store})")
    print(_render(table, wholes))
    if args.json is not None:
        figures = []
        for route in ROUTES:
            for load in ("agent step", "long run"):
                stages = table[route][load]
                parts = ", ".join(f"{stage} {stages.get(stage, 0.0):.0f}" for stage in STAGES)
                total = f"{sum(stages.values()):.0f} ({parts})"
                if load == "agent step":
                    total += f"; whole step (process CPU) {wholes[route]:.0f}"
                figures.append(figure(f"{route} route, {load}: CPU µs per step", total))
        command = f"python -m benchmarks.stages --requests {args.requests} --steps {args.steps}" + (
            " --redis" if args.redis else ""
        )
        write_result(args.json, "stages.redis" if args.redis else "stages", command, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Time what trajectory bookkeeping adds to a step, per store and per trajectory length.

Per step: identify the trajectory and count the step (`Tracker.begin`, on the request path)
and write its record (`store.record_many`, off the request path but timed here too). Bodies
grow like an agent's (each step appends an assistant turn and a tool result), so a 200-step
trajectory's last steps carry ~200 messages: if bookkeeping re-read the history, it would show.

    python -m benchmarks.bookkeeping [--steps 5,200] [--trajectories 20] [--no-redis]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import orjson
from starlette.datastructures import Headers

from router.ledger import StepRecord, Usage
from router.metrics.core import Metrics
from router.privacy.runs import RoutePrivacy
from router.protocol.chat import parse_chat_request
from router.settings import load_settings
from router.trajectory.tracker import Tracker


def _bodies(steps: int) -> list[bytes]:
    messages: list[dict[str, object]] = [{"role": "user", "content": "Fix the failing test in calc.py " * 4}]
    bodies = []
    for index in range(steps):
        bodies.append(orjson.dumps({"model": "tandem", "messages": messages}))
        messages = [
            *messages,
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{index}",
                        "type": "function",
                        "function": {"name": "bash", "arguments": '{"command": "pytest -q"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": f"c{index}", "content": "1 failed, 3 passed\n" * 20},
        ]
    return bodies


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _measure(redis_url: str | None, steps: int, trajectories: int) -> tuple[list[float], list[float]]:
    settings = load_settings(redis_url=redis_url, trajectories={"stitch_by_history": False})
    tracker = Tracker(settings, Metrics(), RoutePrivacy(settings.routes, settings.privacy_weights))
    bodies = _bodies(steps)
    requests = [parse_chat_request(body) for body in bodies]
    begin_s: list[float] = []
    record_s: list[float] = []
    for run in range(trajectories):
        headers = Headers({"x-session-id": f"bench-{steps}-{run}-{time.time_ns()}"})
        for index, (body, request) in enumerate(zip(bodies, requests, strict=True)):
            started = time.perf_counter()
            identity = await tracker.begin(request, body, headers, None, "", "tandem")
            begin_s.append(time.perf_counter() - started)
            record = StepRecord(
                identity.trajectory_id,
                identity.step,
                "tandem",
                "edge",
                "random_draw",
                0.5,
                "m",
                at=time.time(),
                usage=Usage(1000 + index * 50, 0, 30),
                cost_usd=0.0001,
                counterfactual_usd=0.003,
                tools=["bash"],
                error_signals=identity.error_signals,
            )
            started = time.perf_counter()
            await tracker.store.record_many([record])
            record_s.append(time.perf_counter() - started)
    await tracker.store.aclose()
    return begin_s, record_s


async def _main(args: argparse.Namespace) -> None:
    stores: list[tuple[str, str | None]] = [("memory", None)]
    server = None
    if not args.no_redis:
        from tests.redis_server import RedisServer

        folder = Path(tempfile.mkdtemp(prefix="tandem-bench-redis-"))
        server = RedisServer(folder).start()
        stores.append(("redis", server.url))
    print(
        "trajectory bookkeeping per step (ms): begin = identify + count (request path); "
        "record = write the step (off the request path)"
    )
    print(f"{'store':8} {'steps':>6} {'begin p50':>10} {'begin p99':>10} {'record p50':>11} {'record p99':>11}")
    try:
        for name, url in stores:
            for steps in args.steps:
                begin, record = await _measure(url, steps, args.trajectories)
                print(
                    f"{name:8} {steps:>6} {statistics.median(begin) * 1e3:>10.3f} "
                    f"{_percentile(begin, 0.99) * 1e3:>10.3f} {statistics.median(record) * 1e3:>11.3f} "
                    f"{_percentile(record, 0.99) * 1e3:>11.3f}"
                )
    finally:
        if server is not None:
            server.stop()
            shutil.rmtree(server.folder, ignore_errors=True)
    print("targets: begin p50 <= 0.2 ms (memory), <= 1 ms (redis); 200 steps no dearer per step than 5")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=lambda s: [int(x) for x in s.split(",")], default=[5, 200])
    parser.add_argument("--trajectories", type=int, default=20)
    parser.add_argument("--no-redis", action="store_true")
    asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    main()

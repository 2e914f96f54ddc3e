"""The gateway's memory while it holds many trajectories: peak RSS with a judge route loaded.

`python -m benchmarks.memory [--trajectories 1000] [--steps 100] [--workers 16]`

Method: one scripted fake upstream (benchmarks.overhead.fakeupstream, answering at once) and one
gateway process (in-memory store, records without features), pinned to different cores when
there are two. `--workers` clients each drive their share of the trajectories (each with its
own `x-session-id`) step by step through the `judge` route (the shipped ONNX judge, so its
runtime is loaded and scores every step), until every trajectory has `--steps` steps; the
bodies grow like an agent's (an assistant tool call and its output per step, ~350 bytes a step).
Reported: the gateway's RSS before any step, its peak RSS (VmHWM), the RSS at the end, and per
step and per trajectory what the store holds (from the RSS growth, so everything a step leaves
behind counts: its record, the trajectory's totals and notes, the privacy stage's memory).
Target (issue 16): peak RSS <= 200 MB for 1,000 trajectories of 100 steps.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

import orjson
import yaml

from benchmarks.overhead.gateways import _base_env
from benchmarks.overhead.loadgen import connect
from benchmarks.overhead.procs import Service, _status_kb, free_port, pinned

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / ".bench" / "memory"
TARGET_MB = 200.0
SYSTEM = "You are a coding agent. Run one command per turn with the bash tool. " * 6


def _config(path: Path, upstream_port: int) -> Path:
    base = f"http://127.0.0.1:{upstream_port}/v1"
    config = {
        "log_level": "warning",
        "upstreams": {
            "edge": {"base_url": base, "model": "fake-model", "prices": {"input": 0.1, "output": 0.15}},
            "cloud": {"base_url": base, "model": "fake-model", "prices": {"input": 2.5, "output": 15.0}},
        },
        "routes": {"judge": {"strategy": "judge"}},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _body(trajectory: int, step: int) -> bytes:
    messages: list[dict[str, object]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"Task {trajectory}: make tests/test_{trajectory % 97}.py pass."},
    ]
    for n in range(1, step):
        call = {"id": f"c{n}", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        output = f"step {n}: " + "ok tests/test_x.py::test_case PASSED\n" * 5
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": output})
    return orjson.dumps({"model": "judge", "messages": messages, "max_tokens": 64})


def _request(port: int, body: bytes, session: str) -> bytes:
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
        f"x-session-id: {session}\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def _worker(port: int, trajectories: list[int], steps: int, gateway: Service) -> None:
    connection = await connect(port)
    try:
        # Step by step across the worker's trajectories, as concurrent runs interleave.
        for step in range(1, steps + 1):
            for trajectory in trajectories:
                answer = await connection.send(_request(port, _body(trajectory, step), f"mem-{trajectory}"))
                if answer.status != 200:
                    why = f"HTTP {answer.status} {answer.body[:200]!r}"
                    raise RuntimeError(f"trajectory {trajectory} step {step}: {why}")
            gateway.sample()
    finally:
        if connection.transport is not None:
            connection.transport.close()


async def main_async(args: argparse.Namespace) -> int:
    cores = os.cpu_count() or 1
    gateway_cpu, other_cpu = (0, 1) if cores >= 2 else (None, None)
    upstream_port, gateway_port = free_port(), free_port()
    env = _base_env()
    upstream = Service.start(
        "upstream",
        upstream_port,
        pinned([sys.executable, "-m", "benchmarks.overhead.fakeupstream", "--port", str(upstream_port)], other_cpu),
        OUT / "upstream.log",
        env,
        cwd=REPO,
    )
    config = _config(OUT / "tandem.yaml", upstream_port)
    command = [sys.executable, "-m", "router.cli", "serve", "--config", str(config), "--port", str(gateway_port)]
    gateway = Service.start("tandem", gateway_port, pinned(command, gateway_cpu), OUT / "tandem.log", env, cwd=REPO)
    if other_cpu is not None:
        os.sched_setaffinity(0, {other_cpu})
    try:
        await upstream.wait_ready("/v1/models", 20)
        await gateway.wait_ready("/healthz", 30)
        # One step through the judge first, so that the model and the code paths are loaded.
        warm = await connect(gateway_port)
        await warm.send(_request(gateway_port, _body(0, 1), "mem-warm-up"))
        if warm.transport is not None:
            warm.transport.close()
        start_kb = sum(_status_kb(pid, "VmRSS:") for pid in gateway.tree())
        started = time.monotonic()
        shares = [list(range(w, args.trajectories, args.workers)) for w in range(args.workers)]
        await asyncio.gather(*(_worker(gateway_port, share, args.steps, gateway) for share in shares if share))
        took = time.monotonic() - started
        end_kb = sum(_status_kb(pid, "VmRSS:") for pid in gateway.tree())
        peak_kb = gateway.hwm_kb()
        steps = args.trajectories * args.steps
        grown = (end_kb - start_kb) * 1024
        lines = [
            f"memory: {args.trajectories} trajectories x {args.steps} steps through a judge route "
            f"({steps} steps in {took:.0f} s, {args.workers} clients)",
            "",
            "| figure | value |",
            "|---|---|",
            f"| RSS after start-up and one step | {start_kb / 1024:.0f} MB |",
            f"| RSS at the end | {end_kb / 1024:.0f} MB |",
            f"| peak RSS (VmHWM) | {peak_kb / 1024:.0f} MB (target <= {TARGET_MB:.0f} MB: "
            f"{'met' if peak_kb / 1024 <= TARGET_MB else 'missed'}) |",
            f"| growth per step | {grown / steps:.0f} bytes |",
            f"| growth per trajectory of {args.steps} steps | {grown / args.trajectories / 1024:.1f} KB |",
            "",
            f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}",
        ]
        text = "\n".join(lines)
        print(text)
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / "report.md").write_text(text + "\n")
        return 0 if peak_kb / 1024 <= TARGET_MB else 1
    finally:
        gateway.stop()
        upstream.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trajectories", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--workers", type=int, default=16)
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    raise SystemExit(main())

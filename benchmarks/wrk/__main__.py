"""The gateway's tail under `wrk`, beside the project's own load generator, in one run.

`python -m benchmarks.wrk [--duration 10]` (skipped, with a line saying so, when `wrk` is not
installed: `apt-get install wrk`)

Method: a fake upstream answering after 100 ms (benchmarks.overhead.fakeupstream) and the
gateway (`slow` route → that upstream), the gateway pinned to one core, the upstream and the
load to the other. For c=64 and c=16, non-streamed, the 1.6 KB agent step of the overhead
benchmark: `wrk -t1 -c<c> --latency` straight to the upstream and through the gateway, twice in
a row (wrk has no warm-up; added p50/p99 = the difference), then the project's closed-loop
generator (1 s warm-up) through the gateway twice: its workers started at once (as wrk's
connections are), and spread over one upstream period (as `benchmarks.overhead` does). The
gateway is fresh when the c=64 rows begin. Targets (issue 16): added p50 <= 0.8 ms, p99 <= 3 ms at c=64.

Then the floor (`benchmarks.longrun.floor`: uvicorn and the gateway's HTTP client passing the
bytes through, none of the gateway's work) on the same core under the same two wrk windows: what
any gateway on this stack adds when wrk's connections arrive together (`--no-floor` leaves it out).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from benchmarks.overhead.gateways import Upstreams, _base_env, tandem_config
from benchmarks.overhead.loadgen import chat_body, http_request, run_load
from benchmarks.overhead.procs import Service, free_port, pinned
from benchmarks.overhead.scenarios import percentile

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / ".bench" / "wrk"
KEY = "sk-bench"
LUA = """wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
wrk.headers["authorization"] = "Bearer sk-bench"
wrk.body = io.open("{body}", "rb"):read("*a")
"""
# Each request a run's first step of its own task under the one system prompt (the agent step's
# user message numbered): an agent's runs, rather than one body sent again and again.
LUA_TASKS = """local body = io.open("{body}", "rb"):read("*a")
local number = 0
local headers = {{["content-type"] = "application/json", ["authorization"] = "Bearer sk-bench"}}
request = function()
  number = number + 1
  local task = body:gsub('"role":"user","content":"', '"role":"user","content":"task ' .. number .. ': ', 1)
  return wrk.format("POST", nil, headers, task)
end
"""
_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def _wrk_ms(output: str, label: str) -> float:
    """A percentile line of `wrk --latency` (`     99%   12.34ms`) in ms."""
    found = re.search(rf"^\s*{label}%\s+([\d.]+)(us|ms|s)\s*$", output, re.MULTILINE)
    if found is None:
        raise RuntimeError(f"no {label}% line in wrk's output:\n{output}")
    return float(found.group(1)) * _UNITS[found.group(2)]


def _wrk(
    port: int, model: str, connections: int, duration_s: int, cpu: int | None, tasks: bool = False
) -> tuple[float, float]:
    """wrk's p50 and p99 (ms) for the agent step on `model`; `tasks`: each request with a task
    of its own (`LUA_TASKS`)."""
    body = OUT / f"body-{model}.json"
    body.write_bytes(chat_body(model, False))
    if tasks and b'"role":"user","content":"' not in body.read_bytes():
        raise RuntimeError("the agent step's body has no user message to number")
    script = OUT / f"post-{model}{'-tasks' if tasks else ''}.lua"
    script.write_text((LUA_TASKS if tasks else LUA).format(body=body))
    command = ["wrk", "-t1", f"-c{connections}", f"-d{duration_s}s", "--latency", "-s", str(script)]
    command.append(f"http://127.0.0.1:{port}/v1/chat/completions")
    output = subprocess.run(pinned(command, cpu), capture_output=True, text=True, check=True).stdout
    if "Non-2xx" in output:
        raise RuntimeError(f"wrk got errors:\n{output}")
    return _wrk_ms(output, "50"), _wrk_ms(output, "99")


async def _loadgen(port: int, model: str, connections: int, duration_s: int, stagger_s: float) -> tuple[float, float]:
    request = http_request(port, "/v1/chat/completions", chat_body(model, False))
    result = await run_load(
        port,
        request,
        streamed=False,
        concurrency=connections,
        warmup_s=1.0,
        duration_s=float(duration_s),
        stagger_s=stagger_s,
    )
    if result.errors:
        raise RuntimeError(f"load generator: {result.errors} errors, first: {result.first_error}")
    return percentile(result.latencies_s, 50) * 1000, percentile(result.latencies_s, 99) * 1000


async def main_async(args: argparse.Namespace) -> int:
    if shutil.which("wrk") is None:
        print("wrk is not installed (apt-get install wrk): the wrk comparison is skipped")
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    cores = os.cpu_count() or 1
    gateway_cpu, other_cpu = (0, 1) if cores >= 2 else (None, None)
    env = _base_env()
    slow_port, gateway_port = free_port(), free_port()
    fake = [sys.executable, "-m", "benchmarks.overhead.fakeupstream", "--port", str(slow_port), "--delay-ms", "100"]
    upstream = Service.start("upstream", slow_port, pinned(fake, other_cpu), OUT / "upstream.log", env, cwd=REPO)
    config = tandem_config(OUT / "tandem.yaml", Upstreams(slow_port, slow_port), KEY)
    # This checkout's code (`python -m` from its directory), whatever `tandem` is installed.
    command = [sys.executable, "-m", "router.cli", "serve", "--config", str(config), "--port", str(gateway_port)]
    gateway = Service.start("tandem", gateway_port, pinned(command, gateway_cpu), OUT / "tandem.log", env, cwd=REPO)
    if other_cpu is not None:
        os.sched_setaffinity(0, {other_cpu})
    try:
        await upstream.wait_ready("/v1/models", 20)
        await gateway.wait_ready("/healthz", 30)
        lines = [
            f"wrk and the project's load generator, non-streamed, 100 ms upstream, {args.duration} s windows",
            "",
            "| c | load | direct p50 / p99 ms | through Tandem p50 / p99 ms | added p50 / p99 ms |",
            "|---|---|---|---|---|",
        ]
        for connections in (64, 16):
            direct = _wrk(slow_port, "fake-model", connections, args.duration, other_cpu)
            # wrk has no warm-up: its first window at c=64 holds the gateway's first requests
            # (64 at once, each opening a connection to the upstream); the second does not.
            first = _wrk(gateway_port, "slow", connections, args.duration, other_cpu)
            second = _wrk(gateway_port, "slow", connections, args.duration, other_cpu)
            rows = [("wrk -t1, first window", direct, first), ("wrk -t1, second window", direct, second)]
            for label, stagger in (("load generator, workers start together", 0.0), ("load generator, spread", 0.1)):
                base = await _loadgen(slow_port, "fake-model", connections, args.duration, stagger)
                via = await _loadgen(gateway_port, "slow", connections, args.duration, stagger)
                rows.append((label, base, via))
            for label, (d50, d99), (t50, t99) in rows:
                lines.append(
                    f"| {connections} | {label} | {d50:.2f} / {d99:.2f} | {t50:.2f} / {t99:.2f} | "
                    f"{t50 - d50:.2f} / {t99 - d99:.2f} |"
                )
            print(f"c={connections}: done", flush=True)
        if args.floor:
            lines += await _floor_rows(slow_port, gateway_cpu, other_cpu, args.duration, env)
        lines += ["", f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}"]
        text = "\n".join(lines)
        print(text)
        (OUT / "report.md").write_text(text + "\n")
        return 0
    finally:
        gateway.stop()
        upstream.stop()


async def _floor_rows(
    upstream_port: int, cpu: int | None, other_cpu: int | None, duration_s: int, env: dict[str, str]
) -> list[str]:
    """The wrk rows of the bare pass-through, started fresh on the gateway's core."""
    port = free_port()
    command = [sys.executable, "-m", "benchmarks.longrun.floor", "--port", str(port)]
    command += ["--upstream", f"http://127.0.0.1:{upstream_port}"]
    floor = Service.start("floor", port, pinned(command, cpu), OUT / "floor.log", env, cwd=REPO)
    rows: list[str] = []
    try:
        await floor.wait_ready("/healthz", 30)
        for connections in (64, 16):
            direct = _wrk(upstream_port, "fake-model", connections, duration_s, other_cpu)
            for label in ("first", "second"):
                t50, t99 = _wrk(port, "fake-model", connections, duration_s, other_cpu)
                d50, d99 = direct
                rows.append(
                    f"| {connections} | floor (bare pass-through), wrk -t1, {label} window | {d50:.2f} / {d99:.2f} | "
                    f"{t50:.2f} / {t99:.2f} | {t50 - d50:.2f} / {t99 - d99:.2f} |"
                )
        print("floor: done", flush=True)
    finally:
        floor.stop()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=10, help="seconds per measured window")
    parser.add_argument("--no-floor", dest="floor", action="store_false", help="without the bare pass-through's rows")
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    raise SystemExit(main())

"""Long runs through the gateway: added latency against step index and body size.

`python -m benchmarks.longrun [--runs 20] [--steps 120] [--quick] [--surface chat|messages|responses]
[--real] [--shape tools|text] [--json PATH]`

`--real` replays the real public runs of benchmarks/longrun/data (mini-swe-agent on SWE-bench) as
their client sent them; `--shape text` generates runs shaped like them (benchmarks/longrun/text_runs.py).

`--surface messages` sends the same runs to `/v1/messages` as Claude Code shapes them (tool_use
and tool_result blocks, `cache_control` moved onto the newest turn at every step), `responses`
to `/v1/responses` as Codex does (instructions, function_call and function_call_output items);
the direct request is still the chat body (what the gateway sends upstream), so the added
latency includes the translation. `chat-marked`: chat completions with `cache_control` on the
newest message, moved at every step (LiteLLM's Anthropic-style prompt caching, as OpenHands
sends it).

Method: one scripted fake upstream (benchmarks.overhead.fakeupstream, answering at once) and one
gateway process, pinned to different cores when there are two; one client at a time (c=1).
Each step of each run is sent twice on keep-alive connections, straight to the upstream and then
through the gateway, with the same body; the added latency is the difference. Routes:
`edge` (strategy edge), `judge` (the shipped ONNX judge), `redact` (strategy cloud with
`privacy: redact`, whose runs open with a dump of `--vault-values` distinct sensitive values,
so the trajectory's vault holds that many), and `stitched` (the edge route with no session id:
the gateway finds the trajectory from the message history). Reported per route: p50/p99 of the
added latency over every run's first 10 and last 10 steps, and p50 by body size; and the
gateway's CPU time per step (p50, first and last 10 steps; from /proc/<pid>/schedstat, from one
step's request to the next's), which other processes on a shared machine barely move.

`--baseline DIR` runs a second gateway from another checkout (`git archive <commit> | tar -x -C
DIR`) on the same core, each run through one gateway and then the other, so that both meet the
same load on a shared, noisy machine: compare the two tables, not figures from different runs.

Beside the edge route runs the floor (`--no-floor` leaves it out): a bare uvicorn + router/transport/http1/
pass-through on the same core (benchmarks/longrun/floor.py), what the stack itself adds to a
step of that size before the gateway does anything.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import yaml

from benchmarks.longrun.text_runs import text_run_messages
from benchmarks.longrun.trajectory import (
    RunShape,
    anthropic_body,
    marked_chat_body,
    real_body,
    real_runs,
    request_body,
    responses_body,
    run_messages,
)
from benchmarks.overhead.gateways import _base_env
from benchmarks.overhead.loadgen import connect
from benchmarks.overhead.procs import Service, free_port, pinned

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / ".bench" / "longrun"
ROUTES = ("edge", "judge", "redact", "stitched")


@dataclass
class RouteFigures:
    first: list[float] = field(default_factory=list)  # added ms, each run's first 10 steps
    last: list[float] = field(default_factory=list)  # added ms, each run's last 10 steps
    by_size: dict[int, list[float]] = field(default_factory=dict)  # 100 KB bucket -> added ms
    cpu_first: list[float] = field(default_factory=list)  # the gateway's CPU ms, first 10 steps
    cpu_last: list[float] = field(default_factory=list)  # the gateway's CPU ms, last 10 steps


def on_cpu_ms(pid: int) -> float:
    """Time the process has run on a CPU (ns in /proc/<pid>/schedstat), in ms: unlike the
    latency, it barely moves when other processes take the core, so it compares checkouts on a
    shared machine."""
    with open(f"/proc/{pid}/schedstat") as stat:
        return int(stat.read().split()[0]) / 1e6


PATHS = {
    "chat": b"/v1/chat/completions",
    "chat-marked": b"/v1/chat/completions",
    "messages": b"/v1/messages",
    "responses": b"/v1/responses",
}
SURFACE_BODIES = {"chat-marked": marked_chat_body, "messages": anthropic_body, "responses": responses_body}


def _request(port: int, body: bytes, session: str | None, path: bytes = PATHS["chat"]) -> bytes:
    head = b"POST %s HTTP/1.1\r\nhost: 127.0.0.1:%d\r\ncontent-type: application/json\r\n" % (path, port)
    if session is not None:
        head += b"x-session-id: %s\r\n" % session.encode()
    return head + b"content-length: %d\r\n\r\n" % len(body) + body


def _config(path: Path, upstream_port: int) -> Path:
    base = f"http://127.0.0.1:{upstream_port}/v1"
    prices = {"input": 2.50, "cached_input": 0.25, "output": 15.00}
    config = {
        "log_level": "warning",
        "upstreams": {
            "edge": {"base_url": base, "model": "fake-model", "prices": {"input": 0.1, "output": 0.15}},
            "cloud": {"base_url": base, "model": "fake-model", "prices": prices},
        },
        "routes": {
            "edge": {"strategy": "edge"},
            "judge": {"strategy": "judge"},
            "redact": {"strategy": "cloud", "privacy": "redact"},
        },
        "trajectories": {"max_in_memory": 1000},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


async def _one_run(
    route: str,
    run: int,
    shape: RunShape,
    upstream: int,
    gateway: Service,
    figures: RouteFigures,
    surface: str = "chat",
    real: list[list[dict[str, Any]]] | None = None,
    text: bool = False,
) -> None:
    """One run through the gateway (and straight to the upstream): a generated one (with tool
    calls, or in mini-swe-agent's `text` shape), or `real`'s steps (a real run's messages before
    each of its steps, sent as its client sent them)."""
    direct = await connect(upstream)
    through = await connect(gateway.port)
    pid = gateway.process.pid
    # A step's CPU: from its request to the next one's (the work it leaves off the answer's path
    # included; the gateway does nothing else meanwhile).
    cpu: list[float] = []
    model = "edge" if route == "stitched" else route
    session = None if route == "stitched" else f"longrun-{route}-{run}"
    try:
        # Each route its own runs: the same texts again would find the detections of an earlier
        # route's runs in the gateway's cache (router/privacy/detect.py) and flatter the later one.
        seed = run + 1000 * (ROUTES.index(route) if route in ROUTES else len(ROUTES))
        as_text = real is not None or text
        generated = text_run_messages if text else run_messages
        sequence = real if real is not None else list(generated(seed, shape))
        for index, messages in enumerate(sequence, start=1):
            body = real_body(model, messages) if as_text else request_body(model, messages)
            translated = SURFACE_BODIES.get(surface) if gateway.name != "floor" and not as_text else None
            sent = translated(model, messages) if translated is not None else body
            path = PATHS[surface] if gateway.name != "floor" else PATHS["chat"]
            started = time.perf_counter()
            answer = await direct.send(_request(upstream, body, None))
            direct_s = time.perf_counter() - started
            cpu.append(on_cpu_ms(pid))
            started = time.perf_counter()
            answer = await through.send(_request(gateway.port, sent, session, path))
            gateway_s = time.perf_counter() - started
            if answer.status != 200:
                raise RuntimeError(f"{route} run {run} step {index}: HTTP {answer.status} {answer.body[:300]!r}")
            added_ms = (gateway_s - direct_s) * 1000
            if index <= 10:
                figures.first.append(added_ms)
            if index > len(sequence) - 10:
                figures.last.append(added_ms)
            figures.by_size.setdefault(len(sent) // 100_000, []).append(added_ms)
        await asyncio.sleep(0.05)
        cpu.append(on_cpu_ms(pid))
        steps = [after - before for before, after in itertools.pairwise(cpu)]
        figures.cpu_first += steps[:10]
        figures.cpu_last += steps[-10:]
    finally:
        for connection in (direct, through):
            if connection.transport is not None:
                connection.transport.close()


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def _report(figures: dict[str, RouteFigures], shape: RunShape, runs: int, surface: str = "chat", real: str = "") -> str:
    surface_note = f"; surface {surface} ({PATHS[surface].decode()})"
    what = (
        f"{runs} runs x {shape.steps} steps per route, bodies to ~{shape.target_bytes // 1000} KB, "
        f"redact vault {shape.dump_values} values"
    )
    lines = [
        f"long runs: {real or what}; added latency in ms (c=1)" + surface_note,
        "",
        "| route | first 10 p50 | last 10 p50 | last - first | last 10 p99 | gateway CPU ms/step, first / last 10 |",
        "|---|---|---|---|---|---|",
    ]
    for route, f in figures.items():
        first, last = statistics.median(f.first), statistics.median(f.last)
        cpu = f"{statistics.median(f.cpu_first):.2f} / {statistics.median(f.cpu_last):.2f}"
        lines.append(f"| {route} | {first:.2f} | {last:.2f} | {last - first:+.2f} | {_pct(f.last, 0.99):.2f} | {cpu} |")
    buckets = sorted({b for f in figures.values() for b in f.by_size})
    sizes = " | ".join(f"{b * 100}-{b * 100 + 100} KB" for b in buckets)
    lines += ["", "p50 added ms by body size:", "", f"| route | {sizes} |"]
    lines.append("|---|" + "---|" * len(buckets))
    for route, f in figures.items():
        cells = [f"{statistics.median(f.by_size[b]):.2f}" if b in f.by_size else "" for b in buckets]
        lines.append(f"| {route} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _write_json(args: argparse.Namespace, results: dict[str, dict[str, RouteFigures]], runs: int) -> None:
    """The last-10 and first-10 p50 of each route (and the floor) in benchmarks.report's shape."""
    from benchmarks.report import figure, write_result

    kind = "real runs (mini-swe-agent)" if args.real else f"generated runs ({args.shape}) of {args.steps} steps"
    figures = []
    for name, routes in results.items():
        for route, f in routes.items():
            where = route if name == "tandem" else f"{name} {route}"
            value = (
                f"last 10 p50 {statistics.median(f.last):.2f} ms, first 10 p50 {statistics.median(f.first):.2f} ms, "
                f"gateway CPU last 10 p50 {statistics.median(f.cpu_last):.2f} ms/step"
            )
            met = statistics.median(f.last) <= 1.0 if name == "tandem" else None
            figures.append(figure(f"long runs, {kind}, {where}: added latency", value, "last 10 p50 <= 1.0 ms", met))
    command = f"python -m benchmarks.longrun --runs {runs} --routes {' '.join(args.routes)}"
    command += " --real" if args.real else f" --steps {args.steps} --shape {args.shape}"
    write_result(args.json, "longrun", command, figures)


def _floor(upstream_port: int, cpu: int | None) -> Service:
    """The stack's own cost (benchmarks/longrun/floor.py), on the gateway's core."""
    port = free_port()
    upstream = f"http://127.0.0.1:{upstream_port}"
    command = [sys.executable, "-m", "benchmarks.longrun.floor", "--port", str(port), "--upstream", upstream]
    return Service.start("floor", port, pinned(command, cpu), OUT / "floor" / "floor.log", _base_env(), cwd=REPO)


def _gateway(name: str, source: Path, upstream_port: int, cpu: int | None) -> Service:
    port = free_port()
    env = {**_base_env(), "PYTHONPATH": str(source)}
    config = _config(OUT / name / "tandem.yaml", upstream_port)
    command = [sys.executable, "-m", "router.cli", "serve", "--config", str(config), "--port", str(port)]
    # The checkout's own directory: `python -m` puts the working directory first on the path.
    return Service.start(name, port, pinned(command, cpu), OUT / name / "tandem.log", env, cwd=source)


async def main_async(args: argparse.Namespace) -> int:
    cores = os.cpu_count() or 1
    gateway_cpu, other_cpu = (0, 1) if cores >= 2 else (None, None)
    upstream_port = free_port()
    upstream = Service.start(
        "upstream",
        upstream_port,
        pinned([sys.executable, "-m", "benchmarks.overhead.fakeupstream", "--port", str(upstream_port)], other_cpu),
        OUT / "upstream.log",
        _base_env(),
        cwd=REPO,
    )
    sources = {"tandem": REPO}
    if args.baseline is not None:
        sources["baseline"] = args.baseline
    gateways = {name: _gateway(name, source, upstream_port, gateway_cpu) for name, source in sources.items()}
    if not args.no_floor:
        gateways["floor"] = _floor(upstream_port, gateway_cpu)
    if other_cpu is not None:
        os.sched_setaffinity(0, {other_cpu})
    try:
        await upstream.wait_ready("/v1/models", 20)
        for gateway in gateways.values():
            await gateway.wait_ready("/healthz", 30)
        results: dict[str, dict[str, RouteFigures]] = {name: {} for name in gateways}
        replayed = real_runs()[: args.runs] if args.real else []
        for route in args.routes:
            shape = RunShape(steps=args.steps, dump_values=args.vault_values if route == "redact" else 0)
            for run in range(len(replayed) if args.real else args.runs):
                # Alternate which gateway goes first, so neither always meets a warmer machine.
                order = list(gateways.items()) if run % 2 == 0 else list(reversed(gateways.items()))
                for name, gateway in order:
                    if name == "floor" and route != "edge":
                        continue  # the pass-through has no routes: it runs beside the edge route
                    figures = results[name].setdefault("pass-through" if name == "floor" else route, RouteFigures())
                    real = replayed[run][1] if args.real else None
                    text = args.shape == "text"
                    await _one_run(route, run, shape, upstream_port, gateway, figures, args.surface, real, text)
                    gateway.sample()
            print(f"{route}: done", flush=True)
        text = ""
        for name, gateway in gateways.items():
            if len(gateways) > 1:
                where = sources.get(name, "a bare uvicorn + http1 pass-through, benchmarks/longrun/floor.py")
                text += f"## {name} ({where})\n\n"
            shape = RunShape(steps=args.steps, dump_values=args.vault_values)
            title = ""
            if args.real:
                steps = ", ".join(f"{run} ({len(steps)} steps)" for run, steps in replayed)
                title = f"real mini-swe-agent runs replayed (benchmarks/longrun/data): {steps}"
            surface = "chat" if name == "floor" else args.surface
            text += _report(results[name], shape, len(replayed) if args.real else args.runs, surface, title)
            text += f"\n\ngateway RSS (largest seen after a run): {gateway.peak_rss_kb / 1024:.0f} MB\n\n"
        text += f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
        print(text)
        (OUT / "report.md").write_text(text + "\n")
        raw = {
            name: {route: {"first": f.first, "last": f.last} for route, f in figures.items()}
            for name, figures in results.items()
        }
        (OUT / "figures.json").write_bytes(orjson.dumps(raw))
        if args.json is not None:
            _write_json(args, results, len(replayed) if args.real else args.runs)
        return 0
    finally:
        for gateway in gateways.values():
            gateway.stop()
        upstream.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--vault-values", type=int, default=5000)
    parser.add_argument("--quick", action="store_true", help="3 runs of 100 steps (a smoke run)")
    parser.add_argument("--no-floor", action="store_true", help="without the bare pass-through beside the edge route")
    parser.add_argument("--routes", nargs="+", choices=ROUTES, default=list(ROUTES), help="the routes to run")
    parser.add_argument("--baseline", help="a second checkout to run side by side (see the module's doc)")
    parser.add_argument("--surface", choices=sorted(PATHS), default="chat", help="the API the runs speak")
    parser.add_argument(
        "--real",
        action="store_true",
        help="replay the real public runs of benchmarks/longrun/data (up to --runs of them) instead of generated ones",
    )
    parser.add_argument("--json", type=Path, help="write the figures here (benchmarks.report's shape)")
    parser.add_argument(
        "--shape",
        choices=("tools", "text"),
        default="tools",
        help="generated runs: actions as tool calls, or as text like the real runs (benchmarks/longrun/text_runs.py)",
    )
    args = parser.parse_args()
    if (args.real or args.shape == "text") and args.surface != "chat":
        parser.error("--real replays the runs as their client sent them: chat completions only")
    if args.quick:
        args.runs, args.steps = 3, 100
    if args.baseline is not None:
        args.baseline = Path(args.baseline).resolve()
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    raise SystemExit(main())

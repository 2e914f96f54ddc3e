"""Agent load on the shared store: do answered steps, the gateway's ledger and Redis agree, and
does a healthy Redis stay healthy in the gateway's eyes?

`python -m benchmarks.agent_load [--duration 300] [--clients 200] [--workers 2] [--cpus 0,1]
[--stream-share 0.25] [--stitched-share 0] [--outage-at S --outage-s S]`

Starts a real redis-server, the scripted fake upstream (50-200 ms a step), and `tandem serve`
with `--workers` workers and `redis_url` set; runs the agent-like clients (benchmarks.agent_load.
agents) in this process for `--duration` seconds; every process, this one included, pinned to
`--cpus` with taskset / sched_setaffinity. Then waits for the gateways to write what they hold,
reads the gateway's metrics and audits Redis. See README.md beside this file for the method.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import shutil
import signal
import statistics
import sys
import time
from pathlib import Path

import orjson
import yaml

from benchmarks.agent_load.agents import LoadFigures, Shape, run_clients
from benchmarks.overhead.gateways import _base_env
from benchmarks.overhead.loadgen import fetch, http_request
from benchmarks.overhead.procs import Service, free_port
from tests.ledger_audit import Audit, audit


def redis_audit(port: int) -> Audit:
    """What Redis holds: steps counted, steps recorded, missing and duplicate records."""
    return audit(f"redis://127.0.0.1:{port}/0")


REPO = Path(__file__).resolve().parents[2]
OUT = REPO / ".bench" / "agent_load"


def pinned(command: list[str], cpus: str) -> list[str]:
    if shutil.which("taskset") is None:
        raise SystemExit("taskset is needed to pin the processes (util-linux)")
    return ["taskset", "-c", cpus, *command]


def gateway_config(path: Path, upstream_port: int, redis_port: int, workers: int, pool_size: int | None) -> Path:
    upstream = {"base_url": f"http://127.0.0.1:{upstream_port}/v1", "model": "fake-model"}
    config = {
        "log_level": "warning",
        "redis_url": f"redis://127.0.0.1:{redis_port}/0",
        "upstreams": {
            "edge": {**upstream, "prices": {"input": 0.10, "cached_input": 0.10, "output": 0.15}},
            "cloud": {**upstream, "prices": {"input": 2.50, "cached_input": 0.25, "output": 15.0}},
        },
        # EdgeWise's random delegation: both targets take steps, each its own ledger entries.
        "routes": {"tandem": {"strategy": "random", "p": 0.4}},
        "server": {"workers": workers},
    }
    if pool_size is not None:
        config["redis_pool_size"] = pool_size
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


async def metrics_page(port: int) -> str:
    answer = await fetch(port, http_request(port, "/metrics"), timeout_s=10)
    return answer.body.decode()


def metric_sum(page: str, name: str, labels: str = "") -> float:
    total = 0.0
    for line in page.splitlines():
        if line.startswith((name + "{", name + " ")) and labels in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def declared_outages(log_path: Path) -> int:
    """The gateway log's lines announcing an outage or a store refusing writes."""
    text = log_path.read_text(errors="replace")
    return text.count("trajectory store is out") + text.count("trajectory store refuses writes")


def percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def outage(
    redis: Service, gateway_port: int, at_s: float, length_s: float, found: dict[str, float], curve: list[object]
) -> None:
    """Freeze Redis (SIGSTOP) for `length_s` from `at_s`; then time until the gateways have
    written back what they kept (pending 0), with the pending writes every half second."""
    await asyncio.sleep(at_s)
    os.kill(redis.process.pid, signal.SIGSTOP)
    await asyncio.sleep(length_s)
    os.kill(redis.process.pid, signal.SIGCONT)
    resumed = time.monotonic()
    await asyncio.sleep(0.5)
    while True:
        page = await metrics_page(gateway_port)
        pending = metric_sum(page, "tandem_store_outage_pending")
        found["peak_pending"] = max(found.get("peak_pending", 0.0), pending)
        curve.append((round(time.monotonic() - resumed, 1), int(pending)))
        if pending == 0:
            found["catch_up_s"] = time.monotonic() - resumed
            return
        await asyncio.sleep(0.5)


async def settle(gateway_port: int, redis_port: int, timeout_s: float = 60.0) -> None:
    """Until the gateways hold nothing for Redis: records leave the request path, so the last
    ones land a moment after the last answer."""
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        page = await metrics_page(gateway_port)
        held = redis_audit(redis_port)
        now = (held.counted, held.recorded, metric_sum(page, "tandem_store_outage_pending"))
        if now == last and now[2] == 0 and held.missing == 0:
            return
        last = now
        await asyncio.sleep(1.0)


async def main_async(args: argparse.Namespace) -> dict[str, object]:
    cpus = args.cpus
    os.sched_setaffinity(0, {int(cpu) for cpu in cpus.split(",")})
    out = OUT / time.strftime("%Y%m%d-%H%M%S")
    env = _base_env()
    env["TANDEM_VAULT_KEY"] = base64.b64encode(os.urandom(32)).decode()
    redis_port, upstream_port, gateway_port = free_port(), free_port(), free_port()
    services: list[Service] = []
    try:
        redis_command = ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", ""]
        redis_command += ["--appendonly", "no", "--dir", str(out)]
        out.mkdir(parents=True, exist_ok=True)
        redis = Service.start("redis", redis_port, pinned(redis_command, cpus), out / "redis.log", env)
        services.append(redis)
        upstream_command = [sys.executable, "-m", "benchmarks.overhead.fakeupstream", "--port", str(upstream_port)]
        upstream_command += ["--delay-ms", "50", "--delay-max-ms", "200", "--chunks", "20", "--chunk-interval-ms", "2"]
        services.append(Service.start("upstream", upstream_port, pinned(upstream_command, cpus), out / "up.log", env))
        config = gateway_config(out / "tandem.yaml", upstream_port, redis_port, args.workers, args.pool_size)
        serve = [sys.executable, "-m", "router.cli", "serve", "--config", str(config), "--port", str(gateway_port)]
        gateway = Service.start("gateway", gateway_port, pinned(serve, cpus), out / "gateway.log", env, cwd=REPO)
        services.append(gateway)
        await gateway.wait_ready("/healthz", 60)
        await asyncio.sleep(2)  # every worker up, not only the first
        shape = Shape(steps=args.steps, max_body_kb=args.max_body_kb)
        found: dict[str, float] = {}
        curve: list[object] = []
        load = run_clients(gateway_port, args.clients, shape, args.duration, args.stream_share, args.stitched_share)
        tasks: list[asyncio.Future[object]] = [asyncio.ensure_future(load)]
        if args.outage_s > 0:
            tasks.append(
                asyncio.ensure_future(outage(redis, gateway_port, args.outage_at, args.outage_s, found, curve))
            )
        started = time.monotonic()
        done = await asyncio.gather(*tasks)
        elapsed = time.monotonic() - started
        figures = done[0]
        assert isinstance(figures, LoadFigures)
        await settle(gateway_port, redis_port)
        page = await metrics_page(gateway_port)
        held = redis_audit(redis_port)
        result: dict[str, object] = {
            "duration_s": round(elapsed, 1),
            "clients": args.clients,
            "workers": args.workers,
            "cpus": cpus,
            "outage_s": args.outage_s,
            # Each time a worker switched to its journal it logged it (also before the metric existed).
            "outages_declared": declared_outages(gateway.log_path),
            "outages_metric": metric_sum(page, "tandem_store_outages_total"),
            "store_errors": metric_sum(page, "tandem_store_errors_total"),
            "store_busy": metric_sum(page, "tandem_store_busy_total"),
            "write_back_failures": metric_sum(page, "tandem_store_errors_total", 'operation="write_back"')
            + metric_sum(page, "tandem_store_reply_errors_total", 'operation="write_back"'),
            "answered": figures.answered,
            "failed": figures.failed,
            "dropped": figures.dropped,
            "statuses": figures.statuses,
            "first_problem": figures.first_problem,
            "runs": figures.runs,
            "ledger_steps": metric_sum(page, "tandem_steps_total"),
            "redis_counted": held.counted,
            "redis_recorded": held.recorded,
            "redis_missing": held.missing,
            "redis_duplicates": held.duplicates,
            "steps_per_s": round(figures.answered / elapsed, 1),
            "p50_ms": round(1000 * statistics.median(figures.latencies_s), 1) if figures.latencies_s else None,
            "p99_ms": round(1000 * percentile(figures.latencies_s, 0.99), 1),
            **{key: round(value, 2) for key, value in found.items()},
        }
        if curve:
            result["pending_after_resume"] = curve  # (seconds after SIGCONT, writes pending)
        (out / "result.json").write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS))
        return result
    finally:
        for service in reversed(services):
            if service.name == "redis" and service.process.poll() is None:
                os.kill(service.process.pid, signal.SIGCONT)  # a frozen Redis must get SIGTERM
            service.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=300.0, help="seconds of load (300: the target run)")
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=20, help="steps a run")
    parser.add_argument("--max-body-kb", type=int, default=100, help="a run's last body, about")
    parser.add_argument("--stream-share", type=float, default=0.25)
    parser.add_argument("--stitched-share", type=float, default=0.0, help="clients sending no session id")
    parser.add_argument(
        "--pool-size", type=int, default=None, help="redis_pool_size of each worker (default: its default)"
    )
    parser.add_argument("--cpus", default="0,1", help="the cores every process is pinned to (taskset -c)")
    parser.add_argument("--outage-at", type=float, default=30.0, help="with --outage-s: seconds into the load")
    parser.add_argument("--outage-s", type=float, default=0.0, help="freeze Redis this long (SIGSTOP) mid-load")
    args = parser.parse_args(argv)
    result = asyncio.run(main_async(args))
    width = max(len(key) for key in result)
    for key, value in result.items():
        print(f"{key:<{width}}  {value}")
    ok = result["answered"] == result["ledger_steps"] == result["redis_counted"] == result["redis_recorded"]
    if args.outage_s == 0:
        # Redis stayed healthy the whole run: any outage declared was a false one.
        ok = ok and result["outages_declared"] == 0 and result["outages_metric"] == 0
    print("PASS: answered = ledger = Redis" if ok else "FAIL: the figures above disagree")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()

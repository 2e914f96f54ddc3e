"""Orchestration: fake upstreams, gateways, loads, runs; then the report.

Method (fixed, so that figures compare across turns): the gateways run on one core, the load
generator and the fake upstreams on another; each run starts fresh gateways and sends every
scenario's load straight to the fake upstream, through Tandem and through LiteLLM, one after
the other (the order rotates from run to run, so that a drift of the machine does not always
fall on the same target); the figures reported are medians over the runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import os
import platform
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.overhead import gateways, profile, report
from benchmarks.overhead.loadgen import chat_body, fetch, http_request, run_load
from benchmarks.overhead.procs import Service, free_port, pinned, sample_rss
from benchmarks.overhead.scenarios import FAST, SCENARIOS, SLOW, Scenario, figures

REPO = Path(__file__).resolve().parents[2]
BENCH_DIR = REPO / ".bench"
PROBE_DIR = Path(__file__).resolve().parent / "gcprobe"
CHAT_PATH = "/v1/chat/completions"
QUICK_FACTOR = 0.2
PROFILE_S = 6.0


@dataclass
class Options:
    runs: int
    quick: bool
    litellm: bool
    profile: bool
    gateway_cpu: int | None
    load_cpu: int | None
    out: Path


@dataclass
class Target:
    """Where one target's load goes: a port, and the model name for each fake upstream."""

    name: str
    port_for: dict[str, int]
    model_for: dict[str, str]
    service: Service | None = None


@dataclass
class Session:
    options: Options
    fakes: dict[str, Service] = field(default_factory=dict)
    litellm_binary: Path | None = None
    litellm_status: str = "not requested (--no-litellm)"
    runs: list[dict[str, Any]] = field(default_factory=list)
    profiles: dict[str, list[str]] = field(default_factory=dict)


def _python_module(module: str, *args: str) -> list[str]:
    return [sys.executable, "-m", module, *args]


async def _start_fakes(session: Session) -> None:
    options = session.options
    env = dict(os.environ, PYTHONPATH=str(REPO))
    for name, behaviour in (("fast", FAST), ("slow", SLOW)):
        port = free_port()
        args = [
            f"--port={port}",
            f"--delay-ms={behaviour['delay_ms']}",
            f"--chunks={int(behaviour['chunks'])}",
        ]
        args.append(f"--chunk-interval-ms={behaviour['chunk_interval_ms']}")
        command = pinned(_python_module("benchmarks.overhead.fakeupstream", *args), options.load_cpu)
        service = Service.start(f"fake-{name}", port, command, BENCH_DIR / "logs" / f"fake-{name}.log", env)
        session.fakes[name] = service
    for service in session.fakes.values():
        await service.wait_ready("/v1/models", 15)


async def _start_tandem(
    options: Options, upstreams: gateways.Upstreams, key: str, extra_env: dict[str, str] | None = None
) -> Service:
    work = BENCH_DIR / "overhead"
    port = free_port()
    command, env = gateways.tandem_command(gateways.tandem_config(work / "tandem.yaml", upstreams, key), port)
    env.update(extra_env or {})
    log = BENCH_DIR / "logs" / "tandem.log"
    service = Service.start("tandem", port, pinned(command, options.gateway_cpu), log, env, cwd=work)
    try:
        await service.wait_ready("/healthz", 60)
    except BaseException:
        service.stop()
        raise
    return service


async def _start_litellm(session: Session, upstreams: gateways.Upstreams, key: str) -> Service | None:
    """LiteLLM's proxy, or None (with the reason in the session) when it cannot run."""
    assert session.litellm_binary is not None
    port = free_port()
    config = gateways.litellm_config(BENCH_DIR / "overhead" / "litellm" / "config.yaml", upstreams, key)
    command, env = gateways.litellm_command(session.litellm_binary, config, port)
    log = BENCH_DIR / "logs" / "litellm.log"
    # Its own folder as the working directory: LiteLLM reads a `.env` there.
    service = Service.start("litellm", port, pinned(command, session.options.gateway_cpu), log, env, config.parent)
    try:
        await service.wait_ready("/health/liveliness", 120)
    except RuntimeError as exc:
        service.stop()
        session.litellm_status = f"did not start: {exc}"
        return None
    return service


async def _smoke(target: Target, key: str) -> str | None:
    """One request of each kind; why the target cannot take the load, or None."""
    for route in ("fast", "slow"):
        for streamed in (False, True):
            what = f"{route} {'streamed' if streamed else 'plain'}"
            body = chat_body(target.model_for[route], streamed)
            request = _with_key(http_request(target.port_for[route], CHAT_PATH, body), key)
            try:
                answer = await fetch(target.port_for[route], request, timeout_s=30)
            except (OSError, TimeoutError) as exc:
                return f"{what}: {type(exc).__name__}: {exc}"
            if answer.status != 200 or (streamed and not answer.body.endswith(b"data: [DONE]\n\n")):
                return f"{what}: HTTP {answer.status}: {answer.body[:300]!r}"
    return None


def _with_key(request: bytes, key: str) -> bytes:
    return request.replace(b"authorization: Bearer sk-bench", b"authorization: Bearer " + key.encode(), 1)


async def _load(target: Target, scenario: Scenario, key: str) -> dict[str, Any]:
    port = target.port_for[scenario.route]
    body = chat_body(target.model_for[scenario.route], scenario.streamed)
    request = _with_key(http_request(port, CHAT_PATH, body), key)
    result = await run_load(
        port,
        request,
        streamed=scenario.streamed,
        concurrency=scenario.concurrency,
        warmup_s=scenario.warmup_s,
        duration_s=scenario.duration_s,
        stagger_s=scenario.stagger_s,
    )
    return figures(result)


def _gateway_target(name: str, service: Service) -> Target:
    # Both gateways serve the route names `fast` and `slow` on one port.
    return Target(name, {"fast": service.port, "slow": service.port}, {"fast": "fast", "slow": "slow"}, service)


async def _one_run(session: Session, index: int, scenarios: list[Scenario]) -> None:
    options = session.options
    key = gateways.bench_key()
    upstreams = gateways.Upstreams(session.fakes["fast"].port, session.fakes["slow"].port)
    direct_ports = {name: fake.port for name, fake in session.fakes.items()}
    targets = [Target("direct", direct_ports, {"fast": "fake-model", "slow": "fake-model"})]
    started: list[Service] = []
    try:
        tandem = await _start_tandem(options, upstreams, key)
        started.append(tandem)
        targets.append(_gateway_target("tandem", tandem))
        if session.litellm_binary is not None:
            litellm = await _start_litellm(session, upstreams, key)
            if litellm is not None:
                started.append(litellm)
                targets.append(_gateway_target("litellm", litellm))
        for target in list(targets):
            problem = await _smoke(target, key)
            if problem is None:
                continue
            if target.name != "litellm":
                raise RuntimeError(f"{target.name} failed its first requests: {problem}")
            session.litellm_status = f"failed its first requests: {problem}"
            targets.remove(target)
        if any(t.name == "litellm" for t in targets):
            session.litellm_status = "measured"
        services = [t.service for t in targets if t.service is not None]
        run: dict[str, Any] = {"scenarios": {}, "rss_mb": {}, "rss_at_start_mb": {}, "answered": {}}
        for service in services:
            run["rss_at_start_mb"][service.name] = service.hwm_kb() / 1024
        sampler = asyncio.create_task(sample_rss(services))
        try:
            for scenario in scenarios:
                # Rotate the order from run to run; drift of the machine then spreads evenly.
                order = targets[index % len(targets) :] + targets[: index % len(targets)]
                row: dict[str, Any] = {}
                for target in order:
                    print(f"  run {index + 1}: {scenario.key:<11} {target.name:<8}", end="", flush=True)
                    row[target.name] = await _load(target, scenario, key)
                    print(report.progress(row[target.name], scenario.streamed), flush=True)
                    answered = run["answered"].get(target.name, 0) + row[target.name]["answered"]
                    run["answered"][target.name] = answered
                run["scenarios"][scenario.key] = row
        finally:
            sampler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sampler
        for service in services:
            run["rss_mb"][service.name] = max(service.peak_rss_kb, service.hwm_kb()) / 1024
        session.runs.append(run)
    finally:
        for service in started:
            service.stop()


PROFILED = ("plain_c64", "stream_c64", "saturation")


async def _profile(session: Session, scenarios: list[Scenario]) -> None:
    """A fresh Tandem, apart from the measured runs: py-spy samples where its time goes, and a
    probe loaded at start-up records its garbage-collection pauses, which py-spy cannot see."""
    binary = profile.py_spy()
    if binary is None:
        session.profiles["note"] = ["py-spy not found: `.venv/bin/pip install py-spy`, then run with --profile"]
        return
    key = gateways.bench_key()
    upstreams = gateways.Upstreams(session.fakes["fast"].port, session.fakes["slow"].port)
    gc_out = BENCH_DIR / "gc-tandem.json"
    gc_out.unlink(missing_ok=True)
    extra = {"PYTHONPATH": os.pathsep.join(filter(None, [str(PROBE_DIR), os.environ.get("PYTHONPATH")]))}
    extra["TANDEM_BENCH_GC_OUT"] = str(gc_out)
    tandem = await _start_tandem(session.options, upstreams, key, extra)
    target = _gateway_target("tandem", tandem)
    try:
        for scenario in scenarios:
            if scenario.key not in PROFILED:
                continue
            out = BENCH_DIR / f"profile-tandem-{scenario.key}.txt"
            spy = profile.start(binary, tandem.process.pid, PROFILE_S, out)
            await asyncio.sleep(0.5)  # let py-spy attach before the load starts
            print(f"  profiling tandem under {scenario.key} for {PROFILE_S:g} s ...", flush=True)
            began = time.time()
            await _load(target, dataclasses.replace(scenario, duration_s=PROFILE_S, warmup_s=0.3), key)
            ended = time.time()
            _, stderr = await asyncio.to_thread(spy.communicate)
            await asyncio.sleep(0.6)  # the probe rewrites its file twice a second
            lines = profile.gc_pauses(gc_out, began, ended)
            if spy.returncode != 0 or not out.exists():
                lines.append(f"py-spy failed: {stderr.decode(errors='replace')[-300:]}")
            else:
                lines += [f"collapsed stacks in {out.relative_to(REPO)}", *profile.summarise(out)]
            session.profiles[scenario.key] = lines
    finally:
        tandem.stop()


def _pin_self(options: Options) -> None:
    if options.load_cpu is not None:
        os.sched_setaffinity(0, {options.load_cpu})


async def _main(options: Options) -> int:
    scenarios = [s.scaled(QUICK_FACTOR) if options.quick else s for s in SCENARIOS]
    session = Session(options)
    if options.litellm:
        try:
            session.litellm_binary = await asyncio.to_thread(
                gateways.ensure_litellm, BENCH_DIR / "logs" / "litellm-install.log"
            )
            session.litellm_status = "installed"
        except gateways.LiteLLMUnavailable as exc:
            session.litellm_status = f"not installable: {exc}"
            print(f"LiteLLM comparison not possible: {exc}", file=sys.stderr)
    _pin_self(options)
    began = time.monotonic()
    try:
        await _start_fakes(session)
        for index in range(options.runs):
            await _one_run(session, index, scenarios)
        if options.profile:
            await _profile(session, scenarios)
    finally:
        for fake in session.fakes.values():
            fake.stop()
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Linux {platform.release()}",
        "python": platform.python_version(),
        "runs": options.runs,
        "quick": options.quick,
        "gateway_cpu": options.gateway_cpu,
        "load_cpu": options.load_cpu,
        "litellm": {"spec": gateways.LITELLM_SPEC, "status": session.litellm_status},
        "scenarios": {s.key: dataclasses.asdict(s) for s in scenarios},
        "upstreams": {"fast": FAST, "slow": SLOW},
        "wall_s": round(time.monotonic() - began, 1),
    }
    results = report.build(meta, session.runs, session.profiles)
    print(report.render(results))
    options.out.parent.mkdir(parents=True, exist_ok=True)
    options.out.write_text(report.to_json(results))
    print(f"\nresults written to {options.out}")
    # A missed target is a figure to report, not a failure of the tool; a failed request through
    # Tandem (or straight to the fake) is: the figures around it mean nothing.
    failed = sum(
        entry.get(target, {}).get("errors", 0)
        for entry in results["summary"].values()
        for target in ("direct", "tandem")
    )
    return 1 if failed else 0


def _cpus(args: argparse.Namespace) -> tuple[int | None, int | None]:
    available = sorted(os.sched_getaffinity(0))
    if args.no_pin or len(available) < 2:
        if not args.no_pin:
            print("fewer than 2 CPUs available: running unpinned; figures are not comparable", file=sys.stderr)
        return None, None
    gateway = available[0] if args.gateway_cpu is None else args.gateway_cpu
    load = available[1] if args.load_cpu is None else args.load_cpu
    return gateway, load


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.overhead",
        description="Latency, time to first token, throughput and memory that the gateway adds, "
        "beside the same load sent straight to a fake upstream and through LiteLLM's proxy.",
    )
    parser.add_argument("--runs", type=int, default=None, help="runs to take medians over (3; 1 with --quick)")
    parser.add_argument("--quick", action="store_true", help="short loads: a smoke check, not figures")
    parser.add_argument("--no-litellm", action="store_true", help="leave LiteLLM's proxy out")
    parser.add_argument("--profile", action="store_true", help="py-spy profiles of Tandem after the runs")
    parser.add_argument("--gateway-cpu", type=int, default=None, help="core of the gateways (first available)")
    parser.add_argument("--load-cpu", type=int, default=None, help="core of load and upstreams (second available)")
    parser.add_argument("--no-pin", action="store_true", help="do not pin (figures not comparable)")
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "overhead.json", help="JSON results")
    args = parser.parse_args(argv)
    gateway_cpu, load_cpu = _cpus(args)
    options = Options(
        runs=args.runs or (1 if args.quick else 3),
        quick=args.quick,
        litellm=not args.no_litellm,
        profile=args.profile,
        gateway_cpu=gateway_cpu,
        load_cpu=load_cpu,
        out=args.out,
    )
    try:
        import uvloop
    except ImportError:
        return asyncio.run(_main(options))
    return uvloop.run(_main(options))

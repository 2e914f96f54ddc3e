"""What the benchmarks that compare checkouts side by side share: the cores, the fake upstream,
and a fresh gateway from a checkout's directory (`git archive <commit> | tar -x -C DIR`)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from benchmarks.overhead.gateways import Upstreams, _base_env, tandem_config
from benchmarks.overhead.procs import Service, free_port, pinned


def cores() -> tuple[int | None, int | None]:
    """(the gateways' core, the load's and upstream's core); both None on one core (unpinned)."""
    return (0, 1) if (os.cpu_count() or 1) >= 2 else (None, None)


def start_upstream(port: int, cpu: int | None, log: Path, *options: str) -> Service:
    """`benchmarks.overhead.fakeupstream` on `port` (with `options`), pinned to `cpu`; the caller
    then moves itself to that core too, as the load generator."""
    command = [sys.executable, "-m", "benchmarks.overhead.fakeupstream", "--port", str(port), *options]
    upstream = Service.start("upstream", port, pinned(command, cpu), log, _base_env())
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    return upstream


# Routes a benchmark may add to the overhead benchmark's `fast` (edge) and `slow` (cloud).
EXTRA_ROUTES = {"judge": {"strategy": "judge"}}


def start_checkout(
    source: Path, upstream_port: int, out: Path, cpu: int | None, key: str, extra_env: dict[str, str] | None = None
) -> tuple[Service, int]:
    """A fresh `tandem serve` of the checkout in `source` (the overhead benchmark's config, both
    upstreams at `upstream_port`, and `judge`, the shipped judge's route), pinned to `cpu`, with
    `extra_env` in its environment (e.g. `TANDEM_PURE=1`: its pure-Python modules though a
    compiled build exists); with its port. Wait for `/healthz`."""
    port = free_port()
    upstreams = Upstreams(upstream_port, upstream_port)
    config = tandem_config(out / source.name / "tandem.yaml", upstreams, key, EXTRA_ROUTES)
    command = [sys.executable, "-m", "router.cli", "serve", "--config", str(config), "--port", str(port)]
    env = {**_base_env(), "PYTHONPATH": str(source), **(extra_env or {})}
    log = out / source.name / "tandem.log"
    return Service.start(source.name, port, pinned(command, cpu), log, env, cwd=source), port


def add_arguments(parser: argparse.ArgumentParser, seconds: float) -> None:
    """--rounds, --seconds (a round's measured window) and --baseline (repeatable: another
    checkout to measure beside this one, as a resolved path)."""
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=seconds, help="measured window per round")
    parser.add_argument(
        "--baseline",
        action="append",
        default=[],
        type=lambda path: Path(path).resolve(),
        help="another checkout to measure beside",
    )

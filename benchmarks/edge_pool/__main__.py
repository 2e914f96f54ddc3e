"""Prefix-cache reuse of agent runs on a pool of edge replicas, by `balance` (issue 31, item 5).

Agent-like runs (each step resends the run's whole history plus a new tool result) are sent at
once through a real gateway whose edge is the pool (benchmarks/edge_pool/workload.py), once per
`balance`. The primary figure is the prompt tokens the replicas computed rather than served from
their prefix cache, read from vLLM's own counters (`vllm:prefix_cache_queries_total` −
`vllm:prefix_cache_hits_total`, before and after each pass); the secondary one the edge latency
per step. With `--stop-one`, a last affinity pass kills one replica (SIGKILL; the one home to the
most runs) once a run has answered half its steps: the table then says how many steps failed,
and how many of the runs homed there re-homed.

    python -m benchmarks.edge_pool --vllm [--runs 6] [--steps 30] [--kv-cache 4M] [--stop-one] [--json PATH]
    python -m benchmarks.edge_pool --edges http://host-a:8000/v1,http://host-b:8000/v1 --model NAME

`--vllm` starts two vLLM CPU replicas of the tiny test model (sim/vllm), each with a KV cache of
`--kv-cache` bytes (`--kv-cache-memory-bytes`; 4M holds 4,096 tokens of the tiny model) in blocks
of `--block-size` tokens; further vLLM arguments go after `--`.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.edge_pool.spill import SpillResult, spill_pass
from benchmarks.edge_pool.workload import BALANCES, PassResult, Shape, run_pass, start_replicas
from benchmarks.report import figure, write_result

TARGET_RATIO = 0.5  # issue 31: affinity recomputes at most half of what round_robin does
TARGET_SPILL_MS = 50.0  # issue 31: a step on a full pool goes to the cloud within 50 ms


HEAD = (
    "| balance | prompt tokens looked up | recomputed | prefix hit ratio | p50 step ms | steps per replica "
    "| answered | failed | re-homes | s |\n|---|---:|---:|---:|---:|---|---:|---:|---|---:|"
)


def row(name: str, result: PassResult) -> str:
    rehomes = ", ".join(f"{why} {count:.0f}" for why, count in result.rehomes.items() if count) or "0"
    return (
        f"| {name} | {result.looked_up:,.0f} | {result.recomputed:,.0f} | {result.hit_ratio:.2f} | "
        f"{result.p50_ms:.0f} | {' / '.join(map(str, result.placed))} | {result.answered} | {result.failed} | "
        f"{rehomes} | {result.seconds:.0f} |"
    )


def spill_figures(spill: SpillResult) -> list[dict[str, Any]]:
    name = "a step on a full pool of real vLLM replicas, edge_full: cloud (a stand-in cloud on 127.0.0.1), p50 / max"
    spilled = f"{spill.spilled_to_cloud} of {len(spill.spilled_ms)} spilled"
    value = f"{spill.p50_ms:.1f} / {max(spill.spilled_ms):.1f} ms, {spilled}"
    rows = [figure(name, value, f"<= {TARGET_SPILL_MS:g} ms", spill.p50_ms <= TARGET_SPILL_MS)]
    estimates = " / ".join(f"{wait:.1f}" for wait in spill.estimated_wait_s)
    value = f"{spill.queued_s:.1f} s (replicas' estimated waits {estimates} s)"
    rows.append(figure("the same step with edge_full: wait, queued at a replica", value))
    return rows


def print_spill(spill: SpillResult) -> None:
    print(
        f"pool full {spill.became_full_s:.1f} s after the flood began; waiting per replica "
        f"{' / '.join(f'{w:.0f}' for w in spill.waiting)}, estimated wait "
        f"{' / '.join(f'{w:.1f}' for w in spill.estimated_wait_s)} s"
    )
    print(
        f"edge_full: cloud: p50 {spill.p50_ms:.1f} ms, max {max(spill.spilled_ms):.1f} ms, "
        f"{spill.spilled_to_cloud} of {len(spill.spilled_ms)} answered by the cloud (target <= {TARGET_SPILL_MS:g} ms)"
    )
    print(f"  each, in order: {', '.join(f'{ms:.1f}' for ms in spill.spilled_ms)} ms")
    print(f"edge_full: wait: {spill.queued_s:.2f} s, answered by the {spill.queued_target}")


def figures_of(results: dict[str, PassResult], lost: PassResult | None, setup: str) -> list[dict[str, Any]]:
    rows = []
    for balance, result in results.items():
        value = f"{result.recomputed:,.0f} of {result.looked_up:,.0f} ({result.hit_ratio:.0%} served from the cache)"
        rows.append(figure(f"prompt tokens recomputed, {balance}, {setup}", value))
    if "affinity" in results and "round_robin" in results and results["round_robin"].recomputed:
        ratio = results["affinity"].recomputed / results["round_robin"].recomputed
        name = "prompt tokens recomputed, affinity ÷ round_robin (vLLM's prefix-cache counters)"
        rows.append(figure(name, f"{ratio:.2f}", f"<= {TARGET_RATIO}", ratio <= TARGET_RATIO))
    latency = " / ".join(f"{results[b].p50_ms:.0f}" for b in results)
    rows.append(figure(f"edge step latency p50, {' / '.join(results)}", f"{latency} ms"))
    if lost is not None:
        value = (
            f"{lost.failed} failed of {lost.answered + lost.failed}; "
            f"{lost.rehomed} of the {lost.orphans} runs homed there that stepped on re-homed"
        )
        rows.append(figure("one replica of two killed halfway (affinity): steps failed", value, "0", lost.failed == 0))
    return rows


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    vllm_args: list[str] = []
    if "--" in arguments:
        index = arguments.index("--")
        arguments, vllm_args = arguments[:index], arguments[index + 1 :]
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--edges", default="", help="base URLs of running replicas, comma-separated")
    parser.add_argument("--model", default="tiny-edge")
    parser.add_argument("--vllm", action="store_true", help="start two vLLM CPU replicas of the tiny model")
    parser.add_argument("--kv-cache", default="4M", help="with --vllm: each replica's KV cache, in bytes")
    parser.add_argument("--block-size", type=int, default=32, help="with --vllm: tokens per KV block (CPU: k x 32)")
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--balance", default=",".join(BALANCES))
    parser.add_argument("--stop-one", action="store_true", help="with --vllm: a last pass kills one replica halfway")
    parser.add_argument("--spill", action="store_true", help="flood the replicas, then time steps on the full pool")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures for `benchmarks.report`")
    args = parser.parse_args(arguments)
    shape = Shape(runs=args.runs, steps=args.steps)
    began = time.perf_counter()
    with contextlib.ExitStack() as stack:
        servers: list[Any] = []
        if args.vllm:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tandem-pool-")))
            sizes = ("--kv-cache-memory-bytes", args.kv_cache, "--block-size", str(args.block_size))
            servers = start_replicas(folder, args.model, (*sizes, *vllm_args))
            for server in servers:
                stack.callback(server.stop)
            edges = [server.base_url for server in servers]
            setup = f"2 vLLM CPU replicas, KV cache {args.kv_cache} bytes each in blocks of {args.block_size} tokens"
        else:
            edges = [url for url in args.edges.split(",") if url]
            setup = f"{len(edges)} replicas"
        if len(edges) < 2:
            parser.error("two replicas or more: --vllm, or --edges URL,URL")
        started_s = time.perf_counter() - began
        print(f"{shape.runs} runs x {shape.steps} steps at once; {setup}; replicas up in {started_s:.0f} s")
        print(HEAD)
        results: dict[str, PassResult] = {}
        for balance in [name for name in args.balance.split(",") if name]:
            results[balance] = run_pass(edges, args.model, balance, shape)
            print(row(balance, results[balance]), flush=True)
        spill = None
        if args.spill:
            spill = spill_pass(edges, args.model)
            print_spill(spill)
        lost = None
        if args.stop_one and servers:
            by_url = {server.base_url: server for server in servers}
            lost = run_pass(
                edges,
                args.model,
                "affinity",
                shape,
                stop_at=shape.steps // 2,
                stop=lambda url: by_url[url].kill(),
                label="lost",
            )
            print(row("affinity, one replica killed halfway", lost))
            print(
                f"runs homed on the killed replica that sent a step once it was down: {lost.orphans}; "
                f"re-homed by the end: {lost.rehomed}"
            )
            for failure in lost.failures[:5]:
                print(f"  failed step: {failure}")
        longest = max((result.longest_prompt for result in results.values()), default=0)
        total_s = time.perf_counter() - began
        print(f"longest prompt: {longest} tokens; whole benchmark: {total_s:.0f} s")
        if "affinity" in results and "round_robin" in results and results["round_robin"].recomputed:
            ratio = results["affinity"].recomputed / results["round_robin"].recomputed
            verdict = "met" if ratio <= TARGET_RATIO else "NOT met"
            print(f"recomputed, affinity / round_robin: {ratio:.2f} (target <= {TARGET_RATIO}: {verdict})")
        if args.json is not None:
            command = "python -m benchmarks.edge_pool " + (
                f"--runs {shape.runs} --steps {shape.steps}" if results else "--balance ''"
            )
            if args.vllm:
                command += f" --vllm --kv-cache {args.kv_cache} --block-size {args.block_size}"
            command += " --stop-one" if args.stop_one else ""
            command += " --spill" if args.spill else ""
            shape_text = f"{shape.runs} runs x {shape.steps} steps, {setup}"
            rows = figures_of(results, lost, shape_text) if results else []
            rows += spill_figures(spill) if spill is not None else []
            rows.append(figure("benchmark wall time (replicas' start included)", f"{total_s:.0f} s"))
            # A --spill run alone is its own entry, so that it does not replace the balance figures.
            write_result(args.json, "edge_pool" if results else "edge_pool.spill", command, rows)
            print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Prefix-cache reuse of agent runs on a pool of edge replicas, by `balance` (issue 31, item 5).

Agent-like runs (each step resends the run's whole history plus a new tool result) are sent,
interleaved step by step so that they compete for the replicas' KV caches, through a real
gateway whose edge is the pool. The primary figure is the prompt tokens the replicas computed
rather than served from their prefix cache, read from vLLM's own counters
(`vllm:prefix_cache_queries_total` − `vllm:prefix_cache_hits_total`, before and after); the
secondary one the edge latency per step. With `--stop-one`, one replica is stopped halfway
through the affinity pass: the table then says how many steps failed and how many runs re-homed.

    python -m benchmarks.edge_pool --vllm [--runs 8] [--steps 24] [--stop-one] [-- VLLM_ARGS...]
    python -m benchmarks.edge_pool --edges http://host-a:8000/v1,http://host-b:8000/v1 --model NAME

`--vllm` starts two vLLM CPU replicas of the tiny test model (sim/vllm; vLLM's own arguments
after `--`, e.g. a small KV cache so that runs evict each other). Status: written and run
against scripted upstreams only (no vLLM on the development machine); no figures yet.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from router.edge_scrape import metrics_url, parse_load

BALANCES = ("affinity", "round_robin", "least_loaded")


def prefix_counters(client: httpx.Client, edges: list[str]) -> dict[str, tuple[float, float]]:
    """Per replica that answers: tokens looked up in its prefix cache, and tokens found there."""
    found = {}
    for url in edges:
        with contextlib.suppress(httpx.HTTPError):
            load = parse_load(client.get(metrics_url(url, "/metrics"), timeout=5).content, 0.0)
            found[url] = (load.prefix_queries, load.prefix_hits)
    return found


@contextlib.contextmanager
def gateway(edges: list[str], model: str, balance: str) -> Iterator[tuple[str, Any]]:
    import uvicorn

    from router.app import create_app
    from router.settings import load_settings

    settings = load_settings(
        upstreams={
            "edge": {"endpoints": edges, "model": model, "balance": balance, "pool": {"breaker_failures": 1}},
            "cloud": {"base_url": "http://127.0.0.1:9/v1", "model": "none"},
        },
        routes={"bench": {"strategy": "edge", "failover": False}},
    )
    app = create_app(settings)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1", app.state.engine
    finally:
        server.should_exit = True
        thread.join(10)


def tool_output(rng: random.Random, words: int) -> str:
    return " ".join(f"w{rng.randrange(100_000)}" for _ in range(words))


def run_pass(edges: list[str], model: str, balance: str, runs: int, steps: int, stop: Any = None) -> dict[str, float]:
    rng = random.Random(f"{balance}-{runs}-{steps}")  # a fresh history per pass: no cache carried over
    histories = [
        [{"role": "system", "content": tool_output(rng, 200)}, {"role": "user", "content": tool_output(rng, 50)}]
        for _ in range(runs)
    ]
    latencies: list[float] = []
    failed = 0
    with httpx.Client(timeout=300) as client, gateway(edges, model, balance) as (base_url, engine):
        before = prefix_counters(client, edges)
        for step in range(steps):
            if stop is not None and step == steps // 2:
                stop()
            for run, messages in enumerate(histories):
                started = time.perf_counter()
                reply = client.post(
                    f"{base_url}/chat/completions",
                    json={"model": "bench", "messages": messages, "max_tokens": 8, "temperature": 0},
                    headers={"x-session-id": f"{balance}-{run}"},
                )
                latencies.append(time.perf_counter() - started)
                if reply.status_code != 200:
                    failed += 1
                    continue
                content = reply.json()["choices"][0]["message"].get("content") or ""
                messages += [
                    {"role": "assistant", "content": content},
                    {"role": "user", "content": tool_output(rng, 60)},
                ]
        # A replica stopped during the pass lost its counters: only those that lived count.
        after = prefix_counters(client, edges)
        rehomes = sum(
            engine.metrics.edge.rehomes.labels(reason)._value.get()
            for reason in ("replica_down", "replica_removed", "overloaded")
        )
    kept = [url for url in after if url in before]
    queries = sum(after[url][0] - before[url][0] for url in kept)
    hits = sum(after[url][1] - before[url][1] for url in kept)
    return {
        "looked_up": queries,
        "recomputed": queries - hits,
        "hit_ratio": hits / queries if queries else 0.0,
        "p50_ms": statistics.median(latencies) * 1e3,
        "failed": failed,
        "rehomes": rehomes,
    }


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
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--balance", default=",".join(BALANCES))
    parser.add_argument("--stop-one", action="store_true", help="stop one replica halfway through (with --vllm)")
    args = parser.parse_args(arguments)
    with contextlib.ExitStack() as stack:
        servers: list[Any] = []
        if args.vllm:
            from sim.vllm_edge import VLLMServer

            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tandem-pool-")))
            for index in range(2):
                server = VLLMServer(folder / f"replica-{index}", model_name=args.model, extra_args=tuple(vllm_args))
                servers.append(stack.enter_context(server))
            edges = [f"http://127.0.0.1:{server.port}/v1" for server in servers]
        else:
            edges = [url for url in args.edges.split(",") if url]
        if len(edges) < 2:
            parser.error("two replicas or more: --vllm, or --edges URL,URL")
        print(f"{args.runs} runs x {args.steps} steps, interleaved; replicas: {', '.join(edges)}")
        print("| balance | prompt tokens looked up | recomputed | prefix hit ratio | p50 step ms | failed | re-homed |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for balance in args.balance.split(","):
            stop = servers[-1].stop if args.stop_one and servers and balance == "affinity" else None
            row = run_pass(edges, args.model, balance, args.runs, args.steps, stop)
            print(
                f"| {balance} | {row['looked_up']:.0f} | {row['recomputed']:.0f} | {row['hit_ratio']:.2f} | "
                f"{row['p50_ms']:.0f} | {row['failed']:.0f} | {row['rehomes']:.0f} |"
            )
            if stop is not None:
                servers[-1].start()  # back for the next pass
    return 0


if __name__ == "__main__":
    sys.exit(main())

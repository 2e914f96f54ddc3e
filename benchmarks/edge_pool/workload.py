"""The workload of `benchmarks.edge_pool` (and of its short CI version, tests/vllm/test_pool_vllm.py):
agent-like runs sent concurrently through a real gateway whose edge is a pool of replicas, and
what the replicas' own counters say they computed.

Each run is a thread that sends its steps one after the other, every step resending the run's
whole history plus a new tool result, so its prompt grows step by step. The runs go at once, so
that they compete for the replicas' KV caches as an agent fleet's do. Each pass uses fresh
random text (a pass finds nothing of an earlier one in any cache).
"""

from __future__ import annotations

import contextlib
import random
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from router.edge.scrape import metrics_url, parse_load
from sim.vllm_edge import VLLMServer

BALANCES = ("affinity", "round_robin", "least_loaded")
REHOME_REASONS = ("replica_down", "replica_removed", "overloaded")


@dataclass(frozen=True, slots=True)
class Shape:
    """How big the runs are: the tiny model's tokenizer makes about 6 tokens of a `wNNNNN` word."""

    runs: int = 6
    steps: int = 30
    system_words: int = 10
    tool_words: int = 3
    max_tokens: int = 8


@dataclass(slots=True)
class PassResult:
    balance: str
    looked_up: float = 0.0  # prompt tokens the replicas looked up in their prefix cache
    hits: float = 0.0  # of those, found there (not computed again)
    answered: int = 0
    failed: int = 0
    rehomes: dict[str, float] = field(default_factory=dict)  # re-homes by reason (the gateway's counter)
    placed: list[int] = field(default_factory=list)  # steps placed first on each replica
    # What the gateway's own background read of each replica's /metrics last saw: the mean time a
    # request ran (for the estimated wait) and the tokens looked up in its prefix cache.
    scraped: list[tuple[float, float]] = field(default_factory=list)
    # With a replica stopped: runs whose home it was when it stopped and that sent a step once it
    # was down (a run that had sent its last step before had nothing to re-home), and of those,
    # runs whose home is another replica at the end (read from the trajectories' `pool:home` notes).
    orphans: int = 0
    rehomed: int = 0
    longest_prompt: int = 0  # prompt tokens of the longest step (the model's limit is 2048)
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def recomputed(self) -> float:
        return self.looked_up - self.hits

    @property
    def hit_ratio(self) -> float:
        return self.hits / self.looked_up if self.looked_up else 0.0

    @property
    def p50_ms(self) -> float:
        return statistics.median(self.latencies) * 1e3 if self.latencies else 0.0


def prefix_counters(client: httpx.Client, edges: list[str]) -> dict[str, tuple[float, float]]:
    """Per replica that answers: tokens looked up in its prefix cache, and tokens found there
    (`vllm:prefix_cache_queries_total`, `vllm:prefix_cache_hits_total`)."""
    found = {}
    for url in edges:
        with contextlib.suppress(httpx.HTTPError):
            load = parse_load(client.get(metrics_url(url, "/metrics"), timeout=5).content, 0.0)
            found[url] = (load.prefix_queries, load.prefix_hits)
    return found


@contextlib.contextmanager
def serving(app: Any) -> Iterator[str]:
    """An ASGI app served on a loopback port, in a thread; its root URL."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@contextlib.contextmanager
def gateway(
    edges: list[str],
    model: str,
    balance: str,
    routes: dict[str, Any] | None = None,
    cloud_url: str = "http://127.0.0.1:9/v1",
) -> Iterator[tuple[str, Any]]:
    """A real gateway on a loopback port whose edge is the pool `edges`; by default one edge-only
    route, `bench`, and no cloud."""
    from router.app import create_app
    from router.settings import load_settings

    settings = load_settings(
        upstreams={
            "edge": {
                "endpoints": edges,
                "model": model,
                "balance": balance,
                "pool": {"breaker_failures": 1, "scrape_interval_s": 0.5},
                "timeouts": {"connect": 2, "first_byte": 120, "idle": 60},
            },
            "cloud": {"base_url": cloud_url, "model": "cloud-model"},
        },
        routes=routes or {"bench": {"strategy": "edge", "failover": False}},
    )
    app = create_app(settings)
    with serving(app) as root:
        yield f"{root}/v1", app.state.engine


def start_replicas(folder: Path, model: str, vllm_args: tuple[str, ...], count: int = 2) -> list[VLLMServer]:
    """`count` vLLM servers started side by side (each start is ~30 s, mostly waiting)."""
    servers = [
        VLLMServer(folder / f"replica-{i}", model_name=model, extra_args=vllm_args, ready_timeout_s=600)
        for i in range(count)
    ]
    errors: list[BaseException] = []

    def start(server: VLLMServer) -> None:
        try:
            server.start()
        except BaseException as error:  # reported below, once every start has ended
            errors.append(error)

    threads = [threading.Thread(target=start, args=(server,)) for server in servers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        for server in servers:
            server.kill()
        raise errors[0]
    return servers


def homes(client: httpx.Client, base_url: str, runs: list[str]) -> dict[str, str | None]:
    """Each run's home replica, as its trajectory's notes say (GET /v1/trajectories/{id})."""
    found: dict[str, str | None] = {}
    for run in runs:
        reply = client.get(f"{base_url}/trajectories/{run}")
        found[run] = (reply.json().get("notes") or {}).get("pool:home") if reply.status_code == 200 else None
    return found


def words(rng: random.Random, count: int) -> str:
    return " ".join(f"w{rng.randrange(100_000)}" for _ in range(count))


def run_pass(
    edges: list[str],
    model: str,
    balance: str,
    shape: Shape,
    *,
    stop_at: int | None = None,
    stop: Callable[[str], None] | None = None,
    label: str = "",
) -> PassResult:
    """Send `shape.runs` runs of `shape.steps` steps at once through a gateway placing them by
    `balance`; with `stop`, once a run has answered `stop_at` steps, call it (in its own thread)
    with the base URL of the replica that is home to the most runs then, which it stops.
    The counters are those of the replicas that answered /metrics before and after."""
    result = PassResult(balance)
    tag = label or balance
    lock = threading.Lock()
    stopped = threading.Event()
    stopper: list[threading.Thread] = []
    names = [f"{tag}-{run}" for run in range(shape.runs)]
    before_stop: dict[str, str | None] = {}
    stopped_url: list[str] = []
    # When `stop` was called: a killed replica answers nothing from then on, and `stop` may
    # return seconds later (a killed vLLM's helper processes are waited for), by when a fast
    # run may have sent all its steps.
    down_at: list[float] = []
    last_sent = [0.0] * shape.runs  # when each run sent its last step

    def stop_then_mark(url: str) -> None:
        assert stop is not None
        down_at.append(time.perf_counter())
        stop(url)

    def one_run(run: int, base_url: str) -> None:
        rng = random.Random(f"{tag}-{shape}-{run}")  # fresh text per pass: no cache carried over
        messages = [{"role": "system", "content": words(rng, shape.system_words)}]
        with httpx.Client(timeout=300) as client:
            for step in range(shape.steps):
                if stop is not None and step == stop_at and not stopped.is_set():
                    stopped.set()
                    before_stop.update(homes(client, base_url, names))
                    held = [home for home in before_stop.values() if home is not None]
                    stopped_url.append(max(reversed(edges), key=held.count))
                    stopper.append(threading.Thread(target=stop_then_mark, args=(stopped_url[0],), daemon=True))
                    stopper[-1].start()
                messages.append({"role": "user", "content": words(rng, shape.tool_words)})
                body = {"model": "bench", "messages": messages, "max_tokens": shape.max_tokens, "temperature": 0}
                started = last_sent[run] = time.perf_counter()
                try:
                    reply = client.post(f"{base_url}/chat/completions", json=body, headers={"x-session-id": names[run]})
                    failure = None if reply.status_code == 200 else f"HTTP {reply.status_code}: {reply.text[:200]}"
                except httpx.HTTPError as error:
                    failure = f"{type(error).__name__}: {error}"
                took = time.perf_counter() - started
                with lock:
                    result.latencies.append(took)
                    if failure is not None:
                        result.failed += 1
                        result.failures.append(failure)
                    else:
                        result.answered += 1
                if failure is not None:
                    messages.pop()  # the agent would retry the step; this one moves on without it
                    continue
                answer = reply.json()
                with lock:
                    result.longest_prompt = max(result.longest_prompt, answer["usage"]["prompt_tokens"])
                messages.append({"role": "assistant", "content": answer["choices"][0]["message"].get("content") or ""})

    with httpx.Client(timeout=30) as client, gateway(edges, model, balance) as (base_url, engine):
        before = prefix_counters(client, edges)
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=shape.runs) as runs:
            for done in [runs.submit(one_run, run, base_url) for run in range(shape.runs)]:
                done.result()
        result.seconds = time.perf_counter() - started
        for thread in stopper:
            thread.join(60)
        # A replica stopped during the pass lost its counters: only those that lived count.
        after = prefix_counters(client, edges)
        rehomes = engine.metrics.edge.rehomes
        result.rehomes = {why: rehomes.labels(why)._value.get() for why in REHOME_REASONS}
        result.placed = [replica.chosen for replica in engine.edge_pool.replicas]
        result.scraped = [(replica.load.run_s, replica.load.prefix_queries) for replica in engine.edge_pool.replicas]
        if before_stop:
            at_end = homes(client, base_url, names)
            gone = stopped_url[0]
            down = down_at[0] if down_at else float("inf")
            orphaned = [
                name for run, name in enumerate(names) if before_stop.get(name) == gone and last_sent[run] > down
            ]
            result.orphans = len(orphaned)
            result.rehomed = sum(1 for name in orphaned if at_end[name] not in (None, gone))
    for url in after.keys() & before.keys():
        result.looked_up += after[url][0] - before[url][0]
        result.hits += after[url][1] - before[url][1]
    return result

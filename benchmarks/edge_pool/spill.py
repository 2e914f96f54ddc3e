"""`benchmarks.edge_pool --spill`: a step on an edge pool whose real vLLM replicas are full.

Each replica is flooded directly (not through the gateway) with long requests, more than its KV
cache runs at once (`ignore_eos`, so each decodes all its `max_tokens`): vLLM queues the rest
(`vllm:num_requests_waiting`). Once the gateway's background reads say every replica is full
(`edge_full_waiting: 4`), short steps are sent on a route with `edge_full: cloud` (to a stand-in
cloud on 127.0.0.1 that answers at once, so the time is the gateway's decision and forwarding,
issue 31's target: within 50 ms instead of queueing), then one on a route with `edge_full: wait`,
which queues at a replica behind the flood; the replicas' estimated waits
(`ReplicaLoad.wait_s`, from their own metrics) are read just before it, to set beside it.
"""

from __future__ import annotations

import contextlib
import random
import statistics
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from benchmarks.edge_pool.workload import gateway, serving, words

ROUTES = {
    "spill": {"strategy": "edge", "edge_full": "cloud", "edge_full_waiting": 4},
    "queue": {"strategy": "edge", "edge_full": "wait", "edge_full_waiting": 4},
}
ANSWER = {
    "id": "chatcmpl-cloud",
    "object": "chat.completion",
    "created": 0,
    "model": "cloud-model",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
}


@dataclass(slots=True)
class SpillResult:
    became_full_s: float = 0.0  # from the flood's start until the gateway called the pool full
    spilled_ms: list[float] = field(default_factory=list)
    spilled_to_cloud: int = 0  # of the spill route's steps, those the cloud answered (reason edge_full)
    waiting: list[float] = field(default_factory=list)  # each replica's queue, just before the queued step
    estimated_wait_s: list[float] = field(default_factory=list)  # and its estimated wait then
    queued_s: float = 0.0  # the step on the `wait` route, queued at the edge
    queued_target: str = ""

    @property
    def p50_ms(self) -> float:
        return statistics.median(self.spilled_ms) if self.spilled_ms else 0.0


def cloud_app() -> Any:
    """A stand-in cloud that answers every chat completion at once."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def complete(request: Request) -> JSONResponse:
        await request.body()
        return JSONResponse(ANSWER)

    async def models(request: Request) -> JSONResponse:
        return JSONResponse({"object": "list", "data": [{"id": "cloud-model", "object": "model"}]})

    return Starlette(routes=[Route("/v1/chat/completions", complete, methods=["POST"]), Route("/v1/models", models)])


def flood(edge: str, model: str, stop: threading.Event, seed: int, prompt_words: int, max_tokens: int) -> None:
    rng = random.Random(seed)
    with httpx.Client(timeout=600) as client:
        while not stop.is_set():
            body = {
                "model": model,
                "messages": [{"role": "user", "content": words(rng, prompt_words)}],
                "max_tokens": max_tokens,
                "ignore_eos": True,
                "temperature": 0,
            }
            with contextlib.suppress(httpx.HTTPError):
                client.post(f"{edge}/chat/completions", json=body)


def spill_pass(
    edges: list[str],
    model: str,
    *,
    flooders: int = 8,
    samples: int = 10,
    prompt_words: int = 250,
    max_tokens: int = 100,
) -> SpillResult:
    """Flood every replica with `flooders` long requests at a time, then time steps on a full pool."""
    result = SpillResult()
    stop = threading.Event()
    threads = [
        threading.Thread(target=flood, args=(edge, model, stop, n * 100 + i, prompt_words, max_tokens), daemon=True)
        for n, edge in enumerate(edges)
        for i in range(flooders)
    ]
    with serving(cloud_app()) as cloud, gateway(edges, model, "affinity", ROUTES, f"{cloud}/v1") as (base, engine):
        pool = engine.edge_pool
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        try:
            while not pool.full(4):
                if time.perf_counter() - started > 120:
                    loads = [(r.load.running, r.load.waiting) for r in pool.replicas]
                    raise RuntimeError(f"the pool never filled in 120 s: (running, waiting) per replica {loads}")
                time.sleep(0.05)
            result.became_full_s = time.perf_counter() - started
            with httpx.Client(timeout=600) as client:
                for n in range(samples):
                    body = {"model": "spill", "messages": [{"role": "user", "content": f"step {n}"}], "max_tokens": 8}
                    began = time.perf_counter()
                    reply = client.post(f"{base}/chat/completions", json=body, headers={"x-session-id": f"spill-{n}"})
                    result.spilled_ms.append((time.perf_counter() - began) * 1e3)
                    if reply.headers.get("x-tandem-reason") == "edge_full":
                        result.spilled_to_cloud += 1
                result.waiting = [replica.load.waiting for replica in pool.replicas]
                result.estimated_wait_s = [replica.load.wait_s for replica in pool.replicas]
                body = {"model": "queue", "messages": [{"role": "user", "content": "queued"}], "max_tokens": 8}
                began = time.perf_counter()
                reply = client.post(f"{base}/chat/completions", json=body, headers={"x-session-id": "queued"})
                result.queued_s = time.perf_counter() - began
                result.queued_target = reply.headers.get("x-tandem-target", f"HTTP {reply.status_code}")
        finally:
            stop.set()
            for thread in threads:
                thread.join(120)
    return result

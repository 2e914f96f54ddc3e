"""The edge replicas' own load, read in the background from each vLLM server's `/metrics`.

Nothing here is on a step's path: a task asks every replica every `pool.scrape_interval_s`
and leaves what it read on the replica (`Replica.load`), which placing a step and deciding
whether the pool is full then read as plain attributes.

vLLM's names as the version sim/vllm/constraints.txt pins exposes them (the V1 engine's):
requests running and waiting, the KV-cache usage (0..1; `gpu_cache_usage_perc` before it was
renamed `kv_cache_usage_perc`), the prefix cache's counters of tokens looked up and found, and
the histogram of the time requests ran (`request_inference_time_seconds`: prefill and decode,
queueing not included), whose sum and count between two scrapes give the recent mean time a
request runs, for the estimated wait (`ReplicaLoad.wait_s`). Each is summed over its label sets
(one per engine of a data-parallel server).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable, Iterable

from router.config.upstream import replica_metrics_url
from router.edge.pool import EdgePool, Replica, ReplicaLoad
from router.transport import Request, TransportError

log = logging.getLogger("tandem.edge")

# What each figure of `ReplicaLoad` is read from, the current name first.
NAMES: dict[str, tuple[str, ...]] = {
    "running": ("vllm:num_requests_running",),
    "waiting": ("vllm:num_requests_waiting",),
    "kv_cache_usage": ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
    "prefix_hits": ("vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"),
    "prefix_queries": ("vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"),
    "run_s_sum": ("vllm:request_inference_time_seconds_sum",),
    "run_s_count": ("vllm:request_inference_time_seconds_count",),
}
_WANTED = {name: field for field, names in NAMES.items() for name in names}
MAX_METRICS_BYTES = 4 * 1024 * 1024


def parse_load(text: bytes, at: float) -> ReplicaLoad:
    """The load figures of a Prometheus text exposition (unknown lines ignored, a figure
    missing stays 0)."""
    sums: dict[str, dict[str, float]] = {}
    for raw in text.split(b"\n"):
        if not raw.startswith(b"vllm:"):
            continue
        line = raw.decode("utf-8", "replace")
        name_end = min((i for i in (line.find("{"), line.find(" ")) if i >= 0), default=-1)
        if name_end < 0:
            continue
        field = _WANTED.get(line[:name_end])
        if field is None:
            continue
        try:
            value = float(line.rsplit("}", 1)[-1].split()[0])
        except (ValueError, IndexError):
            continue
        if not math.isfinite(value) or value < 0:
            continue  # `NaN`, `+Inf` and negatives are valid exposition but no load
        sums.setdefault(field, {}).setdefault(line[:name_end], 0.0)
        sums[field][line[:name_end]] += value
    load = ReplicaLoad(at=at)
    for field, names in NAMES.items():
        found = sums.get(field, {})
        for name in names:  # the current name wins over the older one
            if name in found:
                setattr(load, field, found[name])
                break
    return load


def metrics_url(base_url: str, path: str) -> str:
    """The replica's metrics address: its base URL less the final `/v1`, with `path`. Not its
    host's root alone: two replicas behind one host:port (a path-routing proxy) have one
    each, and reading one for both gave each the other's queue."""
    return replica_metrics_url(base_url, path)


async def scrape(replica: Replica, path: str, timeout_s: float) -> bool:
    """Read one replica's load; False (its last load kept, and aging) when it did not answer."""
    transport = replica.upstream.transport
    if transport is None:
        return False
    url = metrics_url(replica.upstream.settings.base_url, path)
    try:
        async with asyncio.timeout(timeout_s):
            response = await transport.send(Request("GET", url, {}))
            try:
                if response.status != 200:
                    return False
                parts: list[bytes] = []
                size = 0
                while part := await response.read_some():
                    size += len(part)
                    if size > MAX_METRICS_BYTES:
                        return False
                    parts.append(part)
            finally:
                response.release()
    except (TimeoutError, TransportError, OSError):
        return False
    before, load = replica.load, parse_load(b"".join(parts), time.monotonic())
    looked_up = load.prefix_queries - before.prefix_queries
    # Counters that went back (the server restarted) or did not move keep the last ratio.
    if before.at and looked_up > 0 and load.prefix_hits >= before.prefix_hits:
        load.prefix_hit_ratio = (load.prefix_hits - before.prefix_hits) / looked_up
    else:
        load.prefix_hit_ratio = before.prefix_hit_ratio
    # Likewise the mean time a request ran, of the requests that finished since the last read
    # (at the first read: since the server started).
    since = before if before.at and load.run_s_count >= before.run_s_count else ReplicaLoad()
    finished = load.run_s_count - since.run_s_count
    if finished > 0 and load.run_s_sum >= since.run_s_sum:
        load.run_s = (load.run_s_sum - since.run_s_sum) / finished
    else:
        load.run_s = before.run_s
    # A queue stood and nothing finished since the last read: the stall goes on (or begins).
    if load.waiting > 0 and load.running > 0 and finished <= 0 and before.at:
        load.stalled_since = before.stalled_since or before.at
    replica.load = load
    return True


class Scraper:
    """Reads every replica's load every `interval_s` while the gateway runs."""

    def __init__(
        self, pool: EdgePool, interval_s: float, path: str, on_scraped: Callable[[], None] | None = None
    ) -> None:
        self.pool = pool
        self.interval_s = interval_s
        self.path = path
        # Sets this process's pool gauges after each read: with several workers, each keeps its
        # own gauge values, and only the one answering a /metrics scrape refreshes them there.
        self.on_scraped = on_scraped
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self.interval_s > 0 and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="tandem-edge-scrape")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            await self.scrape_all(self.pool.replicas)
            if self.on_scraped is not None:
                self.on_scraped()
            await asyncio.sleep(self.interval_s)

    async def scrape_all(self, replicas: Iterable[Replica]) -> None:
        timeout_s = max(min(self.interval_s, 2.0), 0.05)
        try:
            await asyncio.gather(*(scrape(replica, self.path, timeout_s) for replica in replicas))
        except Exception:  # a scrape must never stop the loop (nor a step)
            log.exception("edge pool: reading the replicas' metrics failed")

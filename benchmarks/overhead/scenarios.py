"""The loads every target gets, and the figures kept of each."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace

from benchmarks.overhead.loadgen import LoadResult

# The two fake upstreams. `fast` answers at once (pure overhead, saturation); `slow` answers
# after a fixed 100 ms, like a model, and streams 20 tokens 5 ms apart (200 tokens/s).
FAST = {"delay_ms": 0.0, "chunks": 20, "chunk_interval_ms": 1.0}
SLOW = {"delay_ms": 100.0, "chunks": 20, "chunk_interval_ms": 5.0}


@dataclass(frozen=True, slots=True)
class Scenario:
    key: str
    title: str
    route: str  # "fast" or "slow": which fake upstream answers
    streamed: bool
    concurrency: int
    duration_s: float
    warmup_s: float
    stagger_s: float = 0.0  # spread of the workers' first requests (see loadgen.run_load)

    def scaled(self, factor: float) -> Scenario:
        return replace(self, duration_s=max(0.5, self.duration_s * factor), warmup_s=max(0.3, self.warmup_s * factor))


SCENARIOS = (
    Scenario("plain_c1", "non-streamed, c=1, upstream 0 ms", "fast", False, 1, 2.0, 0.5),
    Scenario("plain_c64", "non-streamed, c=64, upstream 100 ms", "slow", False, 64, 5.0, 1.0, stagger_s=0.1),
    Scenario("stream_c1", "streamed, c=1, first token 0 ms", "fast", True, 1, 2.0, 0.5),
    Scenario("stream_c64", "streamed, c=64, first token 100 ms", "slow", True, 64, 5.0, 1.0, stagger_s=0.2),
    Scenario("saturation", "saturation: non-streamed, c=64, upstream 0 ms", "fast", False, 64, 6.0, 1.0),
)


def percentile(values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), on unsorted values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def figures(result: LoadResult) -> dict[str, float | int | str | None]:
    """The figures kept of one load on one target, in milliseconds and requests per second."""
    kept: dict[str, float | int | str | None] = {
        "completed": result.completed,
        "answered": result.answered,
        "errors": result.errors,
        "first_error": result.first_error,
        "rps": result.rps,
        "p50_ms": percentile(result.latencies_s, 50) * 1e3,
        "p90_ms": percentile(result.latencies_s, 90) * 1e3,
        "p99_ms": percentile(result.latencies_s, 99) * 1e3,
    }
    if result.ttfts_s:
        kept["ttft_p50_ms"] = percentile(result.ttfts_s, 50) * 1e3
        kept["ttft_p99_ms"] = percentile(result.ttfts_s, 99) * 1e3
    return kept


def median(values: list[float]) -> float:
    clean = [v for v in values if v == v]  # NaN from an empty load is left out
    return statistics.median(clean) if clean else float("nan")

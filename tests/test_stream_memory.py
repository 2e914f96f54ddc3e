"""What a slow-reading stream costs a real `tandem serve` in memory: 50 clients read a large,
fast answer very slowly (1 KB every half second); the gateway stops reading the upstream while
they do (back-pressure), so its RSS (from /proc) grows by at most 50 MB in all. The streams are
session-less, so each step's answer is keyed for stitching as it goes by (the text not held).
The same measurement is `python -m benchmarks.slow_streams`."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.slow_streams.workload import measure


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc to read a process's RSS")
def test_fifty_slow_reading_streams_grow_the_rss_by_at_most_50_mb() -> None:
    figures = measure(streams=50, answer_bytes=32 * 2**20, seconds=5.0)
    print(figures.line())
    # Every stream began and was read (slowly): the measure is of 50 live streams.
    assert figures.relayed_bytes >= 50 * 1024, figures.line()
    assert figures.growth_mb <= 50.0, figures.line()

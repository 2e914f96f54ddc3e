"""`benchmarks.kept_responses` measures what it says: the conversation it resumes is the whole run
(the benchmark checks it before timing), and so is the one a resent step is found to continue, in
memory and in a real redis-server."""

from __future__ import annotations

import asyncio

import pytest

from benchmarks.kept_responses.__main__ import run


@pytest.mark.parametrize("shared", [False, True])
def test_the_benchmark_resumes_the_whole_run(shared: bool, redis_url: str) -> None:
    # `run` itself checks that the body resumed holds every item of the run (and fails if not).
    report = asyncio.run(run(turns=5, runs=3, redis_url=redis_url if shared else None))
    assert report["turns"] == 5 and report["history_kb"] > 4.5  # five outputs of ~0.9 KB, whole
    assert all(report[name]["p50_ms"] > 0 for name in ("resume", "keep_continued", "resent", "keep_resent"))

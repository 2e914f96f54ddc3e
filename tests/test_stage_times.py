"""Per-stage times (`TANDEM_STAGE_TIMES=1`): off by default, with no clock in the chain's loop;
on, every stage a step goes through has its CPU time, and the steps are counted."""

from __future__ import annotations

import pytest

from router.chain.run import Chain
from router.result import Answer
from tests.inprocess import engine_settings, in_process


async def test_stage_times_are_off_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TANDEM_STAGE_TIMES", raising=False)
    async with in_process() as env:
        assert env.engine.stage_times is None
        # The untimed loop: the class's own method, not the timed one.
        assert env.engine.chain.run.__func__ is Chain.run  # type: ignore[attr-defined]
        assert isinstance(await env.run(), Answer)


async def test_stage_times_count_every_stage_a_step_goes_through(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TANDEM_STAGE_TIMES", "1")
    async with in_process(engine_settings(routes={"tandem": {"strategy": "cloud", "privacy": "redact"}})) as env:
        times = env.engine.stage_times
        assert times is not None
        for _ in range(3):
            assert isinstance(await env.run(messages=[{"role": "user", "content": "mail bob@example.com"}]), Answer)
        assert times.steps == 3
        expected = {"identify", "scan", "decide", "context", "redact", "forward", "restore", "record"}
        assert set(times.ns) == expected
        assert all(ns > 0 for ns in times.ns.values())
        assert set(times.per_step_us()) == expected
        times.clear()
        assert times.steps == 0 and not times.ns

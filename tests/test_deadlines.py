"""Deadlines of one length for the calls in flight (router/deadlines.py) behave as
`asyncio.timeout`: a call past its deadline is given up with TimeoutError, one that ends in time
is left alone, a cancellation from elsewhere stays a cancellation, and calls that began later
are timed from their own start, with one timer for them all."""

from __future__ import annotations

import asyncio
import time

import pytest

from router.deadlines import Deadlines


async def test_a_call_past_its_deadline_is_given_up_with_timeout_error() -> None:
    deadlines = Deadlines(0.05)
    started = time.perf_counter()
    with pytest.raises(TimeoutError):
        async with deadlines.within():
            await asyncio.sleep(5)
    assert 0.04 <= time.perf_counter() - started < 1
    assert len(deadlines) == 0
    # The task is not left cancelled: it goes on awaiting.
    await asyncio.sleep(0.01)


async def test_a_call_that_ends_in_time_is_left_alone_and_forgotten() -> None:
    deadlines = Deadlines(0.05)
    async with deadlines.within():
        await asyncio.sleep(0.01)
    assert len(deadlines) == 0
    await asyncio.sleep(0.08)  # the timer fires for nobody


async def test_each_call_is_timed_from_its_own_start() -> None:
    deadlines = Deadlines(0.1)
    ended: dict[str, float] = {}
    began = time.perf_counter()

    async def call(name: str, delay: float, work: float) -> None:
        await asyncio.sleep(delay)
        try:
            async with deadlines.within():
                await asyncio.sleep(work)
        except TimeoutError:
            ended[name] = time.perf_counter() - began

    await asyncio.gather(call("early", 0, 1), call("quick", 0.02, 0.01), call("late", 0.06, 1))
    assert set(ended) == {"early", "late"}
    assert 0.09 <= ended["early"] < 0.15
    assert 0.15 <= ended["late"] < 0.25
    assert len(deadlines) == 0


async def test_a_cancellation_from_elsewhere_stays_a_cancellation() -> None:
    deadlines = Deadlines(5)

    async def call() -> None:
        async with deadlines.within():
            await asyncio.sleep(5)

    task = asyncio.create_task(call())
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(deadlines) == 0


async def test_an_error_in_the_block_comes_out_as_it_is() -> None:
    deadlines = Deadlines(5)
    with pytest.raises(ValueError):
        async with deadlines.within():
            raise ValueError("boom")
    assert len(deadlines) == 0

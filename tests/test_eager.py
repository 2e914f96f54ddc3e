"""Store work off the request path starts at once (router/trajectory/eager.py): work that never
waits needs no task; work that waits goes on in a task that behaves as one running it whole
(results, errors, cancellation); the tracker still awaits it at shutdown."""

from __future__ import annotations

import asyncio

import pytest

from router.metrics.core import Metrics
from router.privacy.runs import RoutePrivacy
from router.trajectory.eager import start_eagerly
from router.trajectory.state import StepStart
from router.trajectory.tracker import Tracker
from tests.inprocess import engine_settings


async def test_work_that_never_waits_is_done_before_start_returns_and_needs_no_task() -> None:
    done: list[str] = []

    async def note() -> None:
        done.append("noted")

    tasks_before = len(asyncio.all_tasks())
    assert start_eagerly(note()) is None
    assert done == ["noted"]
    assert len(asyncio.all_tasks()) == tasks_before


async def test_work_that_waits_runs_to_its_wait_then_carries_on_in_a_task() -> None:
    gate: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    seen: list[str] = []

    async def round_trip() -> None:
        seen.append("sent")
        seen.append(await gate)
        await asyncio.sleep(0)  # a bare yield to the loop, as asyncio.sleep(0) makes
        seen.append("after a yield")

    task = start_eagerly(round_trip())
    assert task is not None
    assert seen == ["sent"]  # the part before the wait ran on the caller's stack
    await asyncio.sleep(0)
    assert not task.done()
    gate.set_result("answered")
    await task
    assert seen == ["sent", "answered", "after a yield"]


async def test_an_error_before_any_wait_is_the_task_s_not_the_caller_s() -> None:
    async def broken() -> None:
        raise ValueError("store refused")

    task = start_eagerly(broken())  # does not raise here
    assert task is not None
    with pytest.raises(ValueError, match="store refused"):
        await task


async def test_an_error_after_a_wait_is_the_task_s() -> None:
    gate: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def broken_later() -> None:
        await gate
        raise ConnectionError("redis went away")

    task = start_eagerly(broken_later())
    assert task is not None
    gate.set_result(None)
    with pytest.raises(ConnectionError, match="redis went away"):
        await task


async def test_cancelling_the_task_reaches_the_work_and_the_future_it_waits_on() -> None:
    gate: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    cleaned: list[str] = []

    async def waits() -> None:
        try:
            await gate
        finally:
            cleaned.append("finally ran")

    task = start_eagerly(waits())
    assert task is not None
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cleaned == ["finally ran"]
    assert gate.cancelled()


async def test_the_tracker_runs_memory_store_work_at_once_and_awaits_waiting_work_at_close() -> None:
    settings = engine_settings()
    tracker = Tracker(settings, Metrics(), RoutePrivacy(settings.routes, {}))
    await tracker.start()
    await tracker.store.begin_step(StepStart("t1", "f", False, "task", "tandem", "", 0.0))
    tracker.spawn(tracker.store.note("t1", "k", "v"))
    assert len(tracker.background) == 0  # the memory store's note never waits: no task
    assert (await tracker.store.get("t1")).notes["k"] == "v"  # type: ignore[union-attr]

    finished: list[str] = []

    async def slow() -> None:
        await asyncio.sleep(0.01)
        finished.append("written")

    tracker.spawn(slow())
    assert len(tracker.background) == 1
    await tracker.aclose()
    assert finished == ["written"]
    assert len(tracker.background) == 0


async def test_with_redis_off_path_work_runs_in_its_own_task_so_its_timeouts_time_that_task(redis_url: str) -> None:
    # A Redis command enters `asyncio.timeout`, which binds to the task current when entered:
    # started eagerly, that would be the request's task, and the timeout's expiry would cancel
    # the request. With a shared store the tracker gives the work a task of its own.
    settings = engine_settings(redis_url=redis_url)
    tracker = Tracker(settings, Metrics(), RoutePrivacy(settings.routes, {}))
    caller = asyncio.current_task()
    timed: list[asyncio.Task[object] | None] = []

    async def write_with_a_timeout() -> None:
        async with asyncio.timeout(0.01):
            timed.append(asyncio.current_task())
            await asyncio.sleep(1)  # the store does not answer in time

    tracker.spawn(write_with_a_timeout())
    assert timed == []  # nothing ran on the caller's stack
    assert len(tracker.background) == 1
    await tracker.background.settled()
    (task,) = timed
    assert task is not None and task is not caller
    assert isinstance(task.exception(), TimeoutError)  # the timeout fired in the work's own task
    assert caller is not None and not caller.cancelling()  # the request was not cancelled
    await tracker.aclose()

"""The stitcher's per-key locks (router/trajectory/stitch.py `KeyLocks`): one holder per key,
waiters served first come first served, other keys never wait, cancelled waiters neither hold
nor lose the lock, and nothing is kept once nobody holds or waits."""

from __future__ import annotations

import asyncio

import pytest

from router.trajectory.stitch import KeyLocks


async def test_one_holder_per_key_in_arrival_order_and_other_keys_do_not_wait() -> None:
    locks = KeyLocks()
    order: list[str] = []
    gate = asyncio.Event()

    async def hold(name: str, key: str, wait: bool) -> None:
        async with locks.hold(key):
            order.append(f"{name} in")
            if wait:
                await gate.wait()
            order.append(f"{name} out")

    first = asyncio.create_task(hold("a", "k", True))
    await asyncio.sleep(0)
    second = asyncio.create_task(hold("b", "k", False))
    third = asyncio.create_task(hold("c", "k", False))
    other = asyncio.create_task(hold("x", "other", False))
    await asyncio.sleep(0.01)
    # `x` ran on another key while `a` held `k`; `b` and `c` wait.
    assert order == ["a in", "x in", "x out"]
    assert len(locks) == 1
    gate.set()
    await asyncio.gather(first, second, third, other)
    assert order[3:] == ["a out", "b in", "b out", "c in", "c out"]
    assert len(locks) == 0


async def test_a_cancelled_waiter_leaves_the_queue_and_the_next_gets_the_lock() -> None:
    locks = KeyLocks()
    await locks.acquire("k")
    cancelled = asyncio.create_task(locks.acquire("k"))
    after = asyncio.create_task(locks.acquire("k"))
    await asyncio.sleep(0)
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    locks.release("k")
    await asyncio.wait_for(after, 1)  # handed over past the cancelled waiter
    locks.release("k")
    assert len(locks) == 0


async def test_a_waiter_cancelled_just_as_it_was_handed_the_lock_hands_it_on() -> None:
    locks = KeyLocks()
    await locks.acquire("k")
    handed = asyncio.create_task(locks.acquire("k"))
    after = asyncio.create_task(locks.acquire("k"))
    await asyncio.sleep(0)
    locks.release("k")  # `handed`'s future is done, the task not yet resumed
    handed.cancel()
    with pytest.raises(asyncio.CancelledError):
        await handed
    await asyncio.wait_for(after, 1)
    locks.release("k")
    assert len(locks) == 0


async def test_an_error_in_the_block_releases_the_key() -> None:
    locks = KeyLocks()
    with pytest.raises(ValueError):
        async with locks.hold("k"):
            raise ValueError("boom")
    assert len(locks) == 0
    async with locks.hold("k"):
        assert len(locks) == 1

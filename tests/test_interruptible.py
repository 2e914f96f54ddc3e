"""Ctrl-C stops a command-line task even where a library swallowed the first cancellation."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time

import pytest

from router.interruptible import run_interruptible


def test_ctrl_c_stops_a_task_that_swallows_the_first_cancellation() -> None:
    done: list[str] = []

    async def stubborn() -> str:
        asyncio.get_running_loop().call_later(0.05, os.kill, os.getpid(), signal.SIGINT)
        with contextlib.suppress(asyncio.CancelledError):  # swallowed, as a library's scope may
            await asyncio.sleep(30)
        await asyncio.sleep(30)  # asyncio.run left it here for 30 s
        done.append("finished")
        return "finished"

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_interruptible(stubborn())
    assert time.monotonic() - started < 5 and not done
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Ctrl-C as before, after


def test_a_task_left_alone_returns_its_value() -> None:
    async def quick() -> int:
        await asyncio.sleep(0)
        return 7

    assert run_interruptible(quick()) == 7

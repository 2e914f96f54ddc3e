"""`asyncio.run` for a command-line task that Ctrl-C must stop, whatever it is waiting on.

`asyncio.run` answers Ctrl-C by cancelling its task once. A library may swallow that one
cancellation (one that arrives as the task enters or leaves a timeout's scope), and the task then
goes on waiting: `tandem trajectories export` against a gateway that answered slowly finished
its export 30 s later, as if no key had been pressed. Here Ctrl-C cancels the task again every
`RECANCEL_S` until it ends, and a task ended so is a KeyboardInterrupt for the caller.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
RECANCEL_S = 0.2


def run_interruptible(main: Coroutine[Any, Any, T]) -> T:
    """Run `main` to its end; Ctrl-C cancels it (again until it ends) and raises KeyboardInterrupt."""
    return asyncio.run(_guarded(main))


async def _guarded(main: Coroutine[Any, Any, T]) -> T:
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(main)
    interrupted = False

    def cancel() -> None:
        nonlocal interrupted
        interrupted = True
        if not task.done():
            task.cancel()
            loop.call_later(RECANCEL_S, cancel)

    try:
        loop.add_signal_handler(signal.SIGINT, cancel)
    except (NotImplementedError, RuntimeError, ValueError):  # no signals here (not the main thread)
        return await task
    try:
        return await task
    except asyncio.CancelledError:
        if interrupted:
            raise KeyboardInterrupt from None
        raise
    finally:
        loop.remove_signal_handler(signal.SIGINT)

"""Store work started on the caller's stack, a task only for what has to wait.

Every step hands the store a few writes that the answer does not wait for (a note of the
prompt's size, how far the privacy stage scanned, a stitched step's answer). On the memory
store each finishes without waiting for anything, and a task per write (created, scheduled,
run, discarded) cost about a twentieth of a step's CPU at saturation. `start_eagerly` runs the
work at once, up to its first real wait; only work that waits (a Redis round trip) continues
in a task. Python 3.12's eager task factory does the same; the gateway still runs on 3.11.

Only for work that enters no `asyncio.timeout` before its first wait: a timeout binds to the
task current when it is entered, which here is the caller's (a Redis command's read would be
timed against the request, and its expiry would cancel the request). The tracker starts work
eagerly only when every store is in process.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Generator
from typing import Any


def start_eagerly(work: Coroutine[Any, Any, None]) -> asyncio.Task[None] | None:
    """Run `work` until it first waits; None when it finished there, else the task that
    carries on with it. What it raises before waiting is raised in a task too, so that it
    shows as it did when a task ran the whole of it (never into the caller)."""
    try:
        pending = work.send(None)
    except StopIteration:
        return None
    except BaseException as error:
        return asyncio.get_running_loop().create_task(_raise(error))
    return asyncio.get_running_loop().create_task(_carry_on(work, pending))


async def _raise(error: BaseException) -> None:
    raise error


async def _carry_on(work: Coroutine[Any, Any, None], pending: Any) -> None:
    await _Resume(work, pending)


class _Resume:
    """Hands the future `work` waits on to the task that awaits this, then drives `work` on:
    what the task sends (a wake-up) or throws (a cancellation) goes to `work`."""

    __slots__ = ("_pending", "_work")

    def __init__(self, work: Coroutine[Any, Any, None], pending: Any) -> None:
        self._work = work
        self._pending = pending

    def __await__(self) -> Generator[Any, Any, None]:
        work, pending = self._work, self._pending
        while True:
            try:
                sent = yield pending
            except GeneratorExit:
                work.close()
                raise
            except BaseException as error:
                try:
                    pending = work.throw(error)
                except StopIteration:
                    return
            else:
                try:
                    pending = work.send(sent)
                except StopIteration:
                    return


class Background:
    """Store work off the request path: started at once where every store is in process (it
    does not wait: no task at all, `start_eagerly`), else a task; `settled` awaits the tasks
    begun (shutdown)."""

    __slots__ = ("_eager", "_tasks")

    def __init__(self, eager: bool) -> None:
        self._eager = eager
        self._tasks: set[asyncio.Task[None]] = set()

    def __len__(self) -> int:
        """The tasks begun and not yet done."""
        return len(self._tasks)

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        self._keep(start_eagerly(work) if self._eager else asyncio.get_running_loop().create_task(work))

    def start(self, work: Coroutine[Any, Any, None]) -> None:
        """`spawn`, started at once on every store (`start_eagerly`): for work whose first wait
        is a store command it queues (so that the command leaves in the batch of the commands
        the caller issues next), and that enters no timeout before it."""
        self._keep(start_eagerly(work))

    def _keep(self, task: asyncio.Task[None] | None) -> None:
        if task is not None:
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def settled(self) -> None:
        await asyncio.gather(*self._tasks, return_exceptions=True)

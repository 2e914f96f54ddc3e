"""The walk of one chat request through the gateway's modules, traced in process.

`sys.setprofile` sees every call and return of a Python frame; the walk keeps those of the
request's own task in `router.*` modules, and skips a coroutine's suspensions and resumptions
(an `await` that waits is not a return). Each event's place is the module path of its frame
(the router modules from the app down to it, one entry per run of frames in one module).

The walk is read at the level of the modules that pass the request on, the spine (the app,
the chat handler, the disconnect watch, the engine, the chain's runner), and the module each
of them calls: the place is its path cut one module after its last spine module, so a stage's
own helpers are inside the stage's visit. A return to a module already left is a call into a
module the walk had been in and returned from; going back up to a caller that waits is not one,
nor is a call into a module still on the stack (neither ever left). Run `python -m tests.walk` to print it for the checkout on the path.
"""

from __future__ import annotations

import asyncio
import dis
import sys
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import orjson

SPINE = frozenset({"router.app", "router.api.chat", "router.api.disconnect", "router.engine", "router.chain.run"})
_RESUME = dis.opmap["RESUME"]
_YIELD = dis.opmap["YIELD_VALUE"]


def module_path(frame: FrameType | None) -> tuple[str, ...]:
    path: list[str] = []
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.startswith("router.") and (not path or path[-1] != module):
            path.append(module)
        frame = frame.f_back
    path.reverse()
    return tuple(path)


def spine_place(path: tuple[str, ...]) -> tuple[str, ...]:
    """The path cut one module after its last spine module."""
    last = max((i for i, module in enumerate(path) if module in SPINE), default=-1)
    return path[: last + 2]


@dataclass
class Walk:
    places: list[tuple[str, ...]] = field(default_factory=list)

    def record(self, place: tuple[str, ...]) -> None:
        if place and (not self.places or self.places[-1] != place):
            self.places.append(place)

    @property
    def modules(self) -> list[str]:
        return [place[-1] for place in self.places]

    def visited(self) -> set[str]:
        return set(self.modules)

    def returns_to_left(self) -> list[str]:
        """The modules called again after the walk had returned from them, in order."""
        seen: set[str] = set()
        again: list[str] = []
        before: tuple[str, ...] = ()
        for place in self.places:
            module = place[-1]
            if len(place) > len(before) and module in seen and module not in place[:-1]:
                again.append(module)
            seen.add(module)
            before = place
        return again

    def arrivals_again(self) -> int:
        """Arrivals at a module visited before, by a call or by a return (the wider count)."""
        seen: set[str] = set()
        count = 0
        for module in self.modules:
            count += module in seen
            seen.add(module)
        return count

    def visits(self, module: str) -> int:
        """How many times the walk went into `module` (by a call)."""
        count, before = 0, ()
        for place in self.places:
            if place[-1] == module and len(place) > len(before) and (not before or before[-1] != module):
                count += 1
            before = place
        return count

    def text(self) -> str:
        return " > ".join(module.removeprefix("router.") for module in self.modules)


class Tracer:
    """A profile function recording the walk of `task`, cut by `cut` (the spine's, or none)."""

    def __init__(self, task: asyncio.Task[Any] | None, cut: Any = spine_place) -> None:
        self.task = task
        self.walk = Walk()
        self._cut = cut

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event not in ("call", "return") or not frame.f_globals.get("__name__", "").startswith("router."):
            return
        try:
            if asyncio.current_task() is not self.task:
                return
        except RuntimeError:
            return
        code, at = frame.f_code.co_code, frame.f_lasti
        if event == "call" and code[at] == _RESUME and code[at + 1] != 0:
            return  # a coroutine resumed, not called
        if event == "return" and code[at] == _YIELD:
            return  # a coroutine suspended, not returned
        self.walk.record(self._cut(module_path(frame if event == "call" else frame.f_back)))


async def chat_walk(cut: Any = spine_place) -> tuple[Walk, int, bytes]:
    """One chat request's walk (its second: the first warms the process), through the app's
    chat handler with scripted upstreams; with the response's status and body."""
    from router.app import create_app
    from router.engine import Engine
    from tests.inprocess import ScriptedTransport, engine_settings

    settings = engine_settings()
    app = create_app(settings)
    transports = {name: ScriptedTransport(f"{name}-model") for name in settings.upstreams}
    engine = Engine(settings, transports=transports)
    app.state.engine = engine
    await engine.start()
    body = orjson.dumps({"model": "tandem", "messages": [{"role": "user", "content": "hi"}]})
    try:
        for trace in (False, True):
            sent: list[dict[str, Any]] = []
            tracer = Tracer(asyncio.current_task(), cut)
            scope = _scope(body)
            given = False

            async def receive() -> dict[str, Any]:
                nonlocal given
                if not given:
                    given = True
                    return {"type": "http.request", "body": body, "more_body": False}
                await asyncio.Event().wait()
                raise AssertionError("unreachable")

            async def send(message: dict[str, Any], sent: list[dict[str, Any]] = sent) -> None:
                sent.append(message)

            if trace:
                sys.setprofile(tracer)
            try:
                await app(scope, receive, send)
            finally:
                sys.setprofile(None)
    finally:
        await engine.close()
    answer = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return tracer.walk, int(sent[0]["status"]), answer


def _scope(body: bytes) -> dict[str, Any]:
    headers = [(b"content-type", b"application/json"), (b"x-session-id", b"walk")]
    headers.append((b"content-length", str(len(body)).encode()))
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/chat/completions",
        "raw_path": b"/v1/chat/completions",
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
        "state": {},
    }


def _report(walk: Walk, label: str) -> str:
    again = walk.returns_to_left()
    return (
        f"{label}: {len(walk.visited())} modules, {len(again)} returns to a module already left "
        f"({', '.join(m.removeprefix('router.') for m in again) or 'none'}), "
        f"{walk.arrivals_again()} arrivals at a module seen before (returns to a waiting caller included)\n"
        f"{walk.text()}"
    )


if __name__ == "__main__":
    spine, _, _ = asyncio.run(chat_walk())
    print(_report(spine, "the spine's walk"))
    full, _, _ = asyncio.run(chat_walk(cut=lambda path: path))
    print(_report(full, "every module").split("\n")[0])

"""Agent-like clients: closed-loop runs of steps whose bodies grow, with no think time.

Each client runs trajectories one after another. A run is `steps` chat completion requests; each
step resends the whole history plus the answer it got and a new tool output, so that the body
grows from ~2 KB to about `max_body_kb` at the last step (what an agent's context does). A
client either streams every step or none (`stream_share` of the clients stream). A run carries
`X-Session-ID` unless the client is one of the `stitched_share` that send none (the gateway then
finds the run from its message history). Requests are raw HTTP/1.1 on one keep-alive connection
per client (benchmarks.overhead.loadgen), so the generator costs little of the shared cores.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field

import orjson

from benchmarks.overhead.loadgen import Answer, connect

REQUEST_TIMEOUT_S = 60.0
SYSTEM = "You are a careful software engineer working in a repository. Use the tools; be brief. " * 10
ANSWER_TEXT = "The quick brown fox jumps over the lazy dog."  # what the fake upstream answers


@dataclass
class LoadFigures:
    answered: int = 0  # steps answered in full (200, a complete body or stream)
    failed: int = 0  # steps answered with an error status or a broken stream
    dropped: int = 0  # connections that failed or timed out mid-step
    runs: int = 0  # runs finished (all their steps sent)
    latencies_s: list[float] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)
    first_problem: str | None = None

    def problem(self, why: str) -> None:
        if self.first_problem is None:
            self.first_problem = why


def tool_output(size: int, salt: str) -> str:
    """A tool's output of about `size` bytes: file listings and test lines, varied per run."""
    line = f"tests/test_{salt}.py::test_case PASSED [ 42%] src/module_{salt}/file.py:120 ok\n"
    return (line * (size // len(line) + 1))[:size]


def request_bytes(port: int, body: bytes, session: str | None) -> bytes:
    head = b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:%d\r\ncontent-type: application/json\r\n" % port
    if session is not None:
        head += b"x-session-id: %s\r\n" % session.encode()
    return head + b"content-length: %d\r\n\r\n%s" % (len(body), body)


def complete(answer: Answer, streamed: bool) -> str | None:
    """Why an answer is not a full success, or None."""
    if answer.status != 200:
        return f"HTTP {answer.status}: {answer.body[:300]!r}"
    if streamed:
        if not answer.body.endswith(b"data: [DONE]\n\n") or b'"error"' in answer.body:
            return f"a broken stream: ...{answer.body[-300:]!r}"
    elif b'"choices"' not in answer.body:
        return f"no choices: {answer.body[:300]!r}"
    return None


@dataclass(frozen=True, slots=True)
class Shape:
    steps: int = 20
    max_body_kb: int = 100
    model: str = "tandem"

    @property
    def output_bytes(self) -> int:
        """Each step's new tool output, so that the last step's body is about max_body_kb."""
        return max(256, (self.max_body_kb * 1024 - 2048) // max(self.steps - 1, 1) - 120)


async def client(
    index: int, port: int, shape: Shape, streamed: bool, stitched: bool, until: float, figures: LoadFigures
) -> None:
    """One agent: runs of `shape.steps` steps until `until` (a run under way finishes its step)."""
    connection = None
    run = 0
    while time.monotonic() < until:
        run += 1
        salt = f"{index}-{run}-{os.urandom(3).hex()}"
        session = None if stitched else f"bench-{salt}"
        messages: list[dict[str, object]] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Task {salt}: make the failing tests in the repository pass."},
        ]
        for step in range(shape.steps):
            if time.monotonic() >= until:
                return
            body: dict[str, object] = {"model": shape.model, "messages": messages, "max_tokens": 256}
            if streamed:
                body["stream"] = True
                body["stream_options"] = {"include_usage": True}
            request = request_bytes(port, orjson.dumps(body), session)
            start = time.perf_counter()
            try:
                if connection is None or connection.transport is None:
                    connection = await connect(port)
                async with asyncio.timeout(REQUEST_TIMEOUT_S):
                    answer = await connection.send(request)
            except (OSError, TimeoutError) as exc:
                figures.dropped += 1
                figures.problem(f"{type(exc).__name__}: {exc}")
                if connection is not None and connection.transport is not None:
                    connection.transport.close()
                connection = None
                break  # the run is abandoned, as an agent whose call failed would
            figures.statuses[answer.status] = figures.statuses.get(answer.status, 0) + 1
            why = complete(answer, streamed)
            if why is not None:
                figures.failed += 1
                figures.problem(why)
                break
            figures.answered += 1
            figures.latencies_s.append(time.perf_counter() - start)
            messages.append({"role": "assistant", "content": f"{ANSWER_TEXT} Running step {step + 1}."})
            messages.append({"role": "user", "content": tool_output(shape.output_bytes, salt)})
        else:
            figures.runs += 1
    if connection is not None and connection.transport is not None:
        connection.transport.close()


async def run_clients(
    port: int, count: int, shape: Shape, duration_s: float, stream_share: float, stitched_share: float
) -> LoadFigures:
    figures = LoadFigures()
    until = time.monotonic() + duration_s
    streamed_every = round(1 / stream_share) if stream_share > 0 else 0
    stitched_count = round(count * stitched_share)

    async def staggered(index: int) -> None:
        # Spread over the first second, so that 200 runs do not move in lock-step.
        await asyncio.sleep(index / count)
        streamed = streamed_every > 0 and index % streamed_every == 0
        stitched = index >= count - stitched_count
        await client(index, port, shape, streamed, stitched, until, figures)

    await asyncio.gather(*(staggered(index) for index in range(count)))
    return figures

"""Every transport against the hostile upstream: seeded cases (extra bytes, 1xx, 204/304 with a
body or length, bad chunking, two lengths, resets mid-body, early answers, pipelined leftovers,
among well-formed answers), six callers at once on a pool of three connections so that
connections are reused all the time. No request may ever read bytes meant for another, and each
either gets its own valid answer or a clean upstream failure (`UpstreamFailure`, or for a stream
already begun, the transport's error or the idle timeout), never another error."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import orjson
import pytest

from router.config.upstream import Timeouts
from router.transport import TransportError
from router.upstream import Upstream, UpstreamFailure
from tests.transport_suite.hostile import BEHAVIOURS, WELL_FORMED, HostileUpstream, tag, tags_in
from tests.transport_suite.transports import TRANSPORTS, started

SEED = 2025
CASES = 1000  # a transport: 2,000 in all over the two
CALLERS = 6
CONNECTIONS = 3
# Behaviours no client may take as an answer.
MUST_FAIL = frozenset(
    {
        "no_content",
        "no_content_length",
        "not_modified_length",
        "interim_body",
        "switch",
        "bad_chunk",
        "chunk_overrun",
        "chunks_cut",
        "two_lengths",
        "length_and_chunks",
        "length_not_a_number",
        "length_long_closed",
        "not_http",
        "reset_mid_body",
        "closed_mid_body",
        "reset_at_once",
    }
)


@dataclass(frozen=True)
class Case:
    request_id: str
    behaviour: str
    stream: bool
    pad: int  # bytes of padding in the request body (a large one is still being written when answered early)

    def body(self) -> bytes:
        content = f"{tag(self.request_id, self.behaviour)} " + "x" * self.pad
        message = {"role": "user", "content": content}
        return orjson.dumps({"model": "edge-model", "messages": [message], "stream": self.stream})


@dataclass
class Outcome:
    case: Case
    answered: bool
    detail: str  # the failure's kind or error type; "" when answered
    data: bytes  # what the caller read: the whole answer, or a stream up to its failure

    @property
    def foreign(self) -> set[str]:
        """Tags in what this request read that are not its own: bytes meant for another."""
        return tags_in(self.data) - {self.case.request_id}


def cases(transport: str, count: int, seed: int) -> list[Case]:
    rng = random.Random(f"{seed}-{transport}")
    names = sorted(BEHAVIOURS)
    out = []
    for number in range(count):
        # Half well-formed, so that hostile answers sit between ordinary ones on shared connections.
        behaviour = rng.choice(sorted(WELL_FORMED)) if rng.random() < 0.4 else rng.choice(names)
        size = rng.random()
        pad = 3 * 1024 * 1024 if size < 0.02 else rng.randint(64_000, 300_000) if size < 0.1 else rng.randint(0, 400)
        out.append(Case(f"{transport}-{number}", behaviour, rng.random() < 0.4, pad))
    return out


async def exchange(upstream: Upstream, case: Case) -> Outcome:
    """One request through `Upstream.send` (and the stream's reads), as the gateway makes it."""
    try:
        reply = await upstream.send(case.body(), case.stream)
    except UpstreamFailure as failure:
        return Outcome(case, False, failure.kind, failure.body or str(failure).encode())
    if reply.stream is None:
        return Outcome(case, True, "", reply.body)
    data = reply.stream.first_chunk
    try:
        while part := await reply.stream.chunks():
            data += part
    except (TransportError, TimeoutError) as exc:
        return Outcome(case, False, f"mid-stream {type(exc).__name__}", data)
    finally:
        reply.stream.close()
    return Outcome(case, True, "", data)


async def run_cases(upstream: Upstream, todo: list[Case], callers: int) -> tuple[list[Outcome], list[BaseException]]:
    queue = list(reversed(todo))
    outcomes: list[Outcome] = []
    errors: list[BaseException] = []

    async def caller() -> None:
        while queue:
            case = queue.pop()
            try:
                outcomes.append(await exchange(upstream, case))
            except Exception as exc:  # anything but an upstream failure is the finding
                errors.append(exc)

    await asyncio.gather(*(caller() for _ in range(callers)))
    return outcomes, errors


@pytest.fixture(scope="module")
def hostile() -> Iterator[HostileUpstream]:
    upstream = HostileUpstream(seed=SEED).start()
    yield upstream
    upstream.stop()


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_no_request_reads_bytes_meant_for_another(transport: str, hostile: HostileUpstream) -> None:
    timeouts = Timeouts(connect=2, first_byte=3, idle=3)
    upstream = await started(transport, base_url=hostile.base_url, max_connections=CONNECTIONS, timeouts=timeouts)
    todo = cases(transport, CASES, SEED)
    try:
        outcomes, errors = await run_cases(upstream, todo, CALLERS)
    finally:
        await upstream.close()
    assert errors == [], [f"{type(e).__name__}: {e}" for e in errors[:5]]
    assert len(outcomes) == len(todo)
    crossed = [(o.case, sorted(o.foreign)) for o in outcomes if o.foreign]
    assert crossed == [], f"{len(crossed)} requests read another's bytes, e.g. {crossed[:3]}"
    # An answer taken as good is the request's own, whole.
    for outcome in outcomes:
        if outcome.answered and outcome.case.behaviour in WELL_FORMED | {"interim"}:
            assert tags_in(outcome.data) == {outcome.case.request_id}, outcome
    accepted = [o.case for o in outcomes if o.answered and o.case.behaviour in MUST_FAIL]
    assert accepted == [], f"broken answers taken as answers: {accepted[:3]}"
    # Nothing waited for bytes that never came: every failure was seen at once, not timed out.
    timed_out = [o.case for o in outcomes if "timeout" in o.detail.lower()]
    assert timed_out == [], timed_out[:3]
    well_formed = [o for o in outcomes if o.case.behaviour in WELL_FORMED]
    answered = sum(o.answered for o in well_formed)
    # A well-formed answer may fail only because its kept connection carried bytes of an earlier
    # answer that came late (read as its own, refused as not HTTP) or broke after part of its
    # answer came; a kept connection that broke before any byte goes again (both transports).
    assert answered >= 0.9 * len(well_formed), Counter(o.detail for o in well_formed if not o.answered)

"""Stitching requests without a session id into trajectories, telling runs from retries by what
the run itself sends and receives.

A request continues ("extended") the trajectory whose last step's history its history starts
with and that was given the answer its history ends with, the answer's whole identity: its text
and every tool call's id, name and arguments (`identify.answer_key`). Requests are stitched
within their namespace (the client key) and their client scope (`user`, `metadata`:
`identify.client_scope`): requests that differ in them are never one run. The rules:
- a body identical to a step whose first attempt is still in flight is another run ("new"),
  unless it says it is a retry (`x-stainless-retry-count` > 0: "retry");
- an identical body after that step failed, or after an answer the client never finished
  reading, is a retry of that step ("retry");
- an identical body after an answer delivered in full is another run: two runs with
  byte-identical first requests are two trajectories;
- a history that extends no answered one continues no run, except: its last answer is still in
  flight (its note not yet written, the request with that history is), it is a rewrite, or it
  continues the last message of a history answered with text, the answer written into it
  (`continued.py`: LangChain's classic AgentExecutor), or it
  amends the last message of an answered history (`amend.py`: smolagents appends a failed
  call's error to its last message and drops the answer; "rewritten" too);
- a rewrite ("rewritten": Aider's reflections and lint retries, a condenser, a compaction) joins
  a run when its history keeps the run's first message (system prompt) and its last
  distinctive assistant message is an answer that run was given (a tool call, whose ids are
  random, or `identify.DISTINCT_TEXT` characters of text): a short answer any run could give
  ("Ok.", which Aider also writes itself after its own messages) is no evidence and is skipped
  back over (`identify.MAX_SKIPPED_ANSWERS` at most); a history with no such answer starts a new
  trajectory.

Kept in the trajectory store's stitching map (so replicas sharing Redis share it):
  b:<history key>  "<trajectory id> flight|delivered|failed …"  the last request with that history,
                                                              then the others in flight
  c:<history key>  "<trajectory id>|<answer key> …"            trajectories answered for it that
                                                              no later step has continued yet
  r:<digest of first message and answer key>  "<trajectory id> …"  runs given that answer
A claim is a read then a write: one process serialises the claims on one history (a lock per
history key, so that requests of other histories, and other tenants, never wait behind its
round trips), but two replicas claiming the same key at the same instant may both continue one
trajectory (two requests of one history at once: identical runs, told apart by nothing). The
writes are edits applied where the entries are kept (merges.py), so what another replica wrote
between the read and the write stays. On a shared store the claim's write is not waited for on
the request's path: it is queued at once and leaves in the pipeline of the step start that
follows (so it is in the store before the step's answer), and the keys stay locked until it is
written.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections import deque
from collections.abc import Coroutine
from typing import Any

from router.records import record
from router.trajectory import amend, continued, identify, merges
from router.trajectory.amend import Amendable
from router.trajectory.continued import Continuable
from router.trajectory.eager import Background
from router.trajectory.history import HistoryKeys
from router.trajectory.merges import APPEND, DROP, FLIGHT, FRONT, MARK, Merge
from router.trajectory.store import MemoryStore, TrajectoryStore

log = logging.getLogger("tandem.stitch")

# Runs of one task waiting to continue from the same history: a fleet of identical runs (pass@k
# sampling, a CI matrix, a benchmark's seeds) answered before any of them goes on. Past it the
# oldest runs' notes are dropped and their next steps start trajectories of their own; an entry
# holds one run only while it waits (a claim drops it), so the bound costs nothing otherwise.
MAX_CANDIDATES = 256


class KeyLocks:
    """One lock per key, kept only while a task holds or waits for it (bounded by the requests
    in flight). Requests on different keys never wait for each other.

    A step takes three of these a step; nearly always nobody else holds the key, and then a hold
    is a dict entry, no `asyncio.Lock` and no generator-based context manager (the two were a
    twentieth of a step's CPU at saturation). Waiters queue first come first served; a release
    hands the lock to the first waiter still waiting."""

    __slots__ = ("_held",)

    def __init__(self) -> None:
        # A held key -> the futures of the tasks waiting for it (None while nobody waits).
        self._held: dict[str, deque[asyncio.Future[None]] | None] = {}

    def __len__(self) -> int:
        return len(self._held)

    def hold(self, key: str) -> _Hold:
        """`async with locks.hold(key):` the key's lock, held for the block."""
        return _Hold(self, key)

    async def acquire(self, key: str) -> None:
        held = self._held
        if key not in held:
            held[key] = None
            return
        waiters = held[key]
        if waiters is None:
            waiters = held[key] = deque()
        waiter = asyncio.get_running_loop().create_future()
        waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release(key)  # handed the lock as it was cancelled: hand it on
            else:
                waiters.remove(waiter)
            raise

    def release(self, key: str) -> None:
        waiters = self._held[key]
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the key stays held, by that waiter now
                return
        del self._held[key]


class _Hold:
    __slots__ = ("_key", "_locks")

    def __init__(self, locks: KeyLocks, key: str) -> None:
        self._locks = locks
        self._key = key

    async def __aenter__(self) -> None:
        await self._locks.acquire(self._key)

    async def __aexit__(self, *exc: object) -> None:
        self._locks.release(self._key)


# How a stitched step was joined to its trajectory: the `x-tandem-stitch` header and the record.
EXTENDED, REWRITTEN, NEW, RETRY = "extended", "rewritten", "new", "retry"
MAX_REWRITE_RUNS = 4  # runs given one answer under one first message (identical runs)
NOTE_WAIT_S = 0.5  # at most, for the notes of answers already given (a slow store's)
NOTE_POLL_S = 0.005  # the first pause before reading another replica's notes again


@record(frozen=True, slots=True)
class Stitch:
    """Where `Stitcher.find` put a request: its trajectory, its history key, the key of its
    first message (`anchor`, what a rewrite must keep) and how (`EXTENDED`, …)."""

    trajectory_id: str
    key: str
    anchor: str
    decision: str
    # What a later request amending this one's last message finds it by (`amend.amendable`).
    amend: Amendable | None = None
    # An amended request's text appended to that message: what is new in it.
    appended: str | None = None
    # The key of the stitching space (client key and scope): what an answer that called tools is
    # noted under beside its first message, for a run whose first message changes (a handoff).
    space: str = ""
    # What a later request that writes this one's answer into its last message finds it by
    # (`continued.continuable`).
    continued: Continuable | None = None


def stitch_space(namespace: str, scope: str) -> str:
    """What stitching keys are made in: the client key's namespace and the client's scope."""
    return f"{namespace}|{scope}" if scope else namespace


def _rewrite_key(anchor: str, answer: str) -> str:
    return "r:" + hashlib.blake2b(f"{anchor}|{answer}".encode(), digest_size=16).hexdigest()


DELIVERED, FAILED = "delivered", "failed"  # (and merges.FLIGHT)
MAX_FLYING = 8  # identical attempts of other runs in flight, remembered on one history's mark
_MAX_FLYING, _MAX_CANDIDATES, _MAX_REWRITE_RUNS = str(MAX_FLYING), str(MAX_CANDIDATES), str(MAX_REWRITE_RUNS)
# Distinctive answers of a rewritten history read to tell apart runs given its last one.
_MAX_EVIDENCE = 4


@record(frozen=True, slots=True)
class _Mark:
    """A history's `b:` entry: the trajectory of the last request with that history and its
    state, then the other attempts with that history still in flight (one entry an attempt,
    newest first: identical runs, and an attempt an SDK retry left behind)."""

    trajectory_id: str
    state: str
    others: list[str]
    unlisted: int = 0  # attempts in flight the mark had no room to list (merges.py: `+<n>`)

    @classmethod
    def read(cls, raw: str | None) -> _Mark:
        parts = (raw or "").split()
        parts += [""] * (2 - len(parts))
        return cls(parts[0], parts[1], *merges.others_in_flight(parts[2:]))

    def flying(self) -> list[str]:
        """The trajectories of the attempts with this history in flight, newest first."""
        return ([self.trajectory_id] if self.state == FLIGHT else []) + self.others


def _marked(key: str, trajectory_id: str, state: str) -> Merge:
    """The edit of a history's mark after a request (`FLIGHT`) or an answer of `trajectory_id`:
    the other attempts in flight stay in it (merges.py: `mark`)."""
    return Merge("b:" + key, MARK, trajectory_id, state, _MAX_FLYING)


# What an answer's notes being written are waited for by (`Stitcher._noting`): the history it
# answered (a next step's previous history, a retry's history, the history a client adds a
# message of its own to), the history before its last message when the answer called tools (an
# amended request's, amend.py) and its first message when it was delivered (a rewrite's
# evidence, `_rewrite_key`).
HISTORY, AMENDED, REWRITES = "k:", "u:", "a:"


def _noted_under(
    key: str,
    status: str,
    anchor: str,
    amendable: Amendable | None,
    space: str = "",
    goes_on: Continuable | None = None,
) -> list[str]:
    names = [HISTORY + key]
    if amendable is not None:
        names.append(AMENDED + amendable.head)
    if goes_on is not None:
        names.append(goes_on.key)
    if anchor and status == "ok":
        names.append(REWRITES + anchor)
    if space and status == "ok":
        names.append(REWRITES + space)
    return names


def _waits(
    key: str,
    previous: str | None,
    head: str | None,
    amendable: Amendable | None,
    goes_on: Continuable | None = None,
) -> list[str]:
    """The notes a request waits for before it is placed: of its own history (a retry), of the
    history its last answer was given at (its run's step before), of the history before its
    last message (a message of the client's own after an answer), and of an answer its last
    message may amend. A rewrite's wait comes only when it finds no run (`Stitcher.place`)."""
    names = [HISTORY + key]
    if previous is not None:
        names.append(HISTORY + previous)
    if head is not None:
        names.append(HISTORY + head)
    if amendable is not None:
        names.append(AMENDED + amendable.head)
    if goes_on is not None:
        names.append(goes_on.key)
    return names


class Stitcher:
    def __init__(self, store: TrajectoryStore, background: Background | None = None) -> None:
        """`background`: where the claims' writes run (the tracker's: awaited at its shutdown);
        by default eagerly in memory, in a task of its own on a shared store."""
        self._store = store
        self._shared = not isinstance(store, MemoryStore)  # other processes write it too
        self._background = background or Background(eager=not self._shared)
        self._locks = KeyLocks()
        self._keys = HistoryKeys()  # hashes only the messages not seen at an earlier step
        # The answers of this process whose notes are being written, by what a later request
        # finds them by (`_noted_under`): a step waits for those it may need (`NOTE_WAIT_S` at
        # most), not for every answer of its first message (each a round trip on a shared store).
        self._noting: dict[str, set[asyncio.Event]] = {}

    async def find(
        self, namespace: str, messages: list[dict[str, Any]], client_retry: bool, scope: str = ""
    ) -> tuple[str, str]:
        """The trajectory of a request without a session id, and its history key."""
        stitched = await self.place(namespace, messages, client_retry, scope)
        return stitched.trajectory_id, stitched.key

    async def place(
        self,
        namespace: str,
        messages: list[dict[str, Any]],
        client_retry: bool,
        scope: str = "",
        stops: tuple[str, ...] = (),
    ) -> Stitch:
        """The trajectory of a request without a session id, and how it was found. `stops`: the
        request's stop strings (`identify.stop_strings`)."""
        space_name = stitch_space(namespace, scope)
        previous, key, anchor, head = self._keys.keyed(space_name, messages)
        space = identify.chain_start(space_name).hex()
        amendable = amend.amendable(messages, head)
        goes_on = continued.continuable(messages, head or space)
        # An answer's notes are written off its request's path; a fast client's next step (or
        # its retry of a failed one, or its amendment of one) may come before they are: wait for
        # those begun of the histories this request may continue.
        if self._noting:
            await self._notes_of(_waits(key, previous, head, amendable, goes_on), NOTE_WAIT_S)
        rewrites_waited = False
        # The whole history's key, then the previous one's (its claim): always the longer
        # history first, so two finds never wait for each other in a circle.
        held = (key,) if previous is None else (key, previous)
        waited, pause = 0.0, NOTE_POLL_S
        locks = self._locks
        while True:
            await locks.acquire(key)
            try:
                if previous is not None:
                    await locks.acquire(previous)
            except BaseException:
                locks.release(key)
                raise
            try:
                stitched, writes, pending, unproven = await self._find(
                    namespace, messages, client_retry, previous, key, anchor, amendable, space, stops, goes_on
                )
            except BaseException:
                self._release(held)
                raise
            if (
                unproven
                and not rewrites_waited
                and (self._noting.get(REWRITES + anchor) or self._noting.get(REWRITES + space))
            ):
                # A rewrite found no run it rewrites, while answers of its first message (or
                # calls of its space) are being noted here: one of them may be what it resends.
                # Read again once noted.
                rewrites_waited = True
                self._release(held)
                await self._notes_of([REWRITES + anchor, REWRITES + space], NOTE_WAIT_S)
                continue
            if not pending or waited >= NOTE_WAIT_S or not self._shared:
                break
            # The answer this request resends is not noted yet while attempts of the history
            # it answered are still marked in flight: another replica's answer whose notes are
            # on their way (this process's were waited for above; in memory there is no other).
            # Read again shortly, the keys let go meanwhile, rather than start a trajectory.
            self._release(held)
            pause = min(pause, NOTE_WAIT_S - waited)
            await asyncio.sleep(pause)
            waited, pause = waited + pause, pause * 2
        # The claim's writes, off the request's path: on a shared store they are queued now
        # and leave with the step start the caller asks for next, in one pipeline (redis_batch:
        # what one turn of the loop asks), one round trip fewer, and so are in the store before
        # the step's answer (a next step that reaches another replica at once finds them); in
        # memory they are done before this returns. The keys stay locked until they are
        # written, so a step of this process with the same history reads them after this one's.
        self._background.start(self._write(writes, held))
        return stitched

    async def _notes_of(self, names: list[str], budget: float) -> None:
        """Wait (`budget` seconds at most) for the notes being written under `names`. (One
        timeout over the waits in turn: `wait_for` over a `gather` would make a task and a
        future of its own for each request that finds notes being written.)"""
        notes = {note for name in names for note in self._noting.get(name, ())}
        if notes:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(budget):
                    for note in notes:
                        await note.wait()

    def _release(self, held: tuple[str, ...]) -> None:
        for key in reversed(held):
            self._locks.release(key)

    async def _write(self, writes: list[Merge], held: tuple[str, ...]) -> None:
        try:
            await self._store.stitch_merge(writes)
        except Exception as exc:
            # (An outage is the resilient store's to journal; this is load or a refused write:
            # the step goes on, and its run's next step may start a trajectory of its own.)
            log.warning("a stitched step's claim was not written to the trajectory store: %s", exc)
        finally:
            self._release(held)

    async def _find(
        self,
        namespace: str,
        messages: list[dict[str, Any]],
        client_retry: bool,
        previous: str | None,
        key: str,
        anchor: str,
        amendable: Amendable | None = None,
        space: str = "",
        stops: tuple[str, ...] = (),
        goes_on: Continuable | None = None,
    ) -> tuple[Stitch, list[Merge], bool, bool]:
        """The request's run, the writes that take it, whether the answer it resends may be
        noted soon by another replica (`pending`), and whether it is a new run only because no
        run was found that it rewrites (`unproven`: an answer's rewrite note may be on its way)."""
        # A step's reads are one round trip and its writes go with its start (a shared store's): the
        # history's mark, and the claim on the history before it when the request resends an
        # answer (read together even when the mark makes it a retry: one trip either way).
        resent = identify.resent_answer(messages, stops)
        keys = ["b:" + key]
        if previous is not None and resent is not None:
            keys += ["c:" + previous, "b:" + previous]
        if amendable is not None:  # (read with the rest: a run's first request is one)
            keys += [amend.PREFIX + amendable.head, "c:" + amendable.head]
        if goes_on is not None:
            keys.append(goes_on.key)
        raws = await self._store.stitch_find_many(keys)
        raw_goes_on = raws.pop() if goes_on is not None else None
        mark = _Mark.read(raws[0])
        flying = mark.flying()
        retried = None
        if mark.state == FAILED and mark.trajectory_id not in flying:
            retried = mark.trajectory_id  # the last request with this history failed: its retry
        elif client_retry and flying:
            # A retry while attempts of this history are in flight (identical runs may be):
            # the oldest's, whose client gave up first (clients of one kind wait as long).
            retried = flying[-1]
        elif client_retry and mark.trajectory_id:
            retried = mark.trajectory_id
        if retried is not None:
            stitch = Stitch(retried, key, anchor, RETRY, amendable, space=space, continued=goes_on)
            return stitch, [_marked(key, retried, FLIGHT)], False, False
        # In flight or answered: an identical body that is no retry is another run.
        exclude = {mark.trajectory_id, *flying}
        found, decision, seen, pending = None, NEW, False, False
        writes: list[Merge] = []
        if previous is not None and resent is not None:
            found, seen, claimed, pending = self._claim(previous, raws[1], raws[2], resent[0], exclude)
            writes += claimed
            decision = EXTENDED
            if found is None and not pending and identify.emptied_answer(messages):
                # An empty message where the answer was: the client dropped it (smolagents
                # streaming its outputs, after the answer's call raised) and added the error as
                # a message of its own. The newest run answered there that no later step
                # continued goes on (as for an amended message, `_amended`).
                found = amend.newest_waiting(raws[1], exclude)
                if found is not None:
                    decision = REWRITTEN
                    claimed = [Merge("c:" + previous, DROP, found)]
                    writes += claimed
            # A run found with no note of its answer (`_claim`'s guess: the one request in flight
            # at that history) gives way to a run the history amends (below): an answer resent
            # that its own run continued from already says nothing of which run this is.
            guessed = found is not None and not claimed
        else:
            guessed = False
        appended = None
        unproven = False
        if amendable is not None and (found is None or guessed):
            amended = await self._amended(raws[-2], raws[-1], amendable, exclude)
            if amended is not None:
                found, appended, taken = amended
                decision = REWRITTEN
                writes += taken
        if goes_on is not None and (found is None or guessed) and appended is None:
            went_on = continued.continued_run(raw_goes_on, goes_on.text, stops, exclude)
            if went_on is not None:
                found, appended = went_on
                decision = EXTENDED
                writes.append(Merge(goes_on.key, DROP, found))
        if found is None and not seen and resent is not None:
            # Only a history whose beginning (before its last answer) was never sent can be a
            # rewrite: one that was sent and continues no answered run is another run.
            evidence = resent[0] if resent[1] else identify.rewrite_evidence(messages, resent, stops)
            if evidence is not None:
                found = await self._rewritten(anchor, evidence, exclude, messages, stops)
                decision = REWRITTEN
                unproven = found is None
            called = identify.called_with_ids(messages) if found is None and space else None
            if called is not None:
                # Its first message changed too (an agent handing the run to another agent, whose
                # instructions replace the system prompt): the calls it resends, whose ids are
                # random, were given to one run of this client.
                found = await self._rewritten(space, (called,), exclude, messages, stops)
                decision = REWRITTEN
                unproven = found is None
        if found is None and resent is None and space:
            listed = identify.transcript_keys(messages)
            if listed:
                # A prompt rebuilt at every step from named fields (fields.py: DSPy's ReAct)
                # lists its run's answers: the last one, noted in the client's space, names it
                # (under any first message: the run's last call extracts under another).
                found = await self._rewritten(space, listed, exclude, messages, stops)
                decision = REWRITTEN
                unproven = found is None
        if found is None:
            found, decision = identify.new_trajectory_id(namespace), NEW
        else:
            pending = False
        # The claim's note first, the mark last (in order, in one round trip).
        writes.append(_marked(key, found, FLIGHT))
        stitch = Stitch(found, key, anchor, decision, amendable, appended, space, goes_on)
        return stitch, writes, pending, unproven

    async def _amended(
        self, raw_amend: str | None, raw_answered: str | None, amendable: Amendable, exclude: set[str]
    ) -> tuple[str, str, list[Merge]] | None:
        """The run a request continues whose client dropped that run's last answer (amend.py): of
        the runs answered where its last message had the shorter text (`raw_amend`: the `u:`
        entry), the oldest still waiting at the history it was answered at; else the one answered
        at the history before its last message (`raw_answered`: that history's `c:` entry;
        mini-swe-agent 2.x after a reply without a tool call). (Its trajectory id, the text new in
        the request, the writes that take it), or None."""
        amended = amend.amended_runs(raw_amend, amendable.text, exclude)
        if amended is not None:
            runs = amended.runs
            if amended.answered:
                # A run's note here outlives its wait: a run that went on from that history (or
                # whose step there was amended already) took its answer's note in the history's
                # `c:` entry with it, and must not be taken for a later run of the task whose
                # call raised (one read more, only for a request that amends a noted text).
                [raw_waiting] = await self._store.stitch_find_many(["c:" + amended.answered])
                waiting = amend.unclaimed(raw_waiting)
                runs = tuple(run for run in runs if run in waiting)
            if runs:
                # Runs noted alike are told apart by nothing here: the newest goes on, its notes
                # taken so that the next such request continues the one before. (Not the oldest:
                # a run that ended there, its last answer a call, or whose client was stopped,
                # stays noted, and a later run of the task must not continue it in place of its
                # own. Runs answered there at once may swap this step, as identical runs can.)
                found = runs[-1]
                taken = [Merge(amend.PREFIX + amendable.head, DROP, found)]
                if amended.answered:
                    # (Its answer there too: a run alike that goes on from that history normally,
                    # given the same answer, continues its own trajectory, not this one.)
                    taken.append(Merge("c:" + amended.answered, DROP, found))
                return found, amended.appended, taken
        dropped = amend.answered_before(raw_answered, exclude)
        if dropped is not None:
            return dropped, amendable.text, [Merge("c:" + amendable.head, DROP, dropped)]
        return None

    def _claim(
        self, previous: str, raw: str | None, raw_mark: str | None, answers: tuple[str, ...], exclude: set[str]
    ) -> tuple[str | None, bool, list[Merge], bool]:
        """The run that was given the answer this history ends with, after the history before
        it (`raw`: its `c:` entry, `raw_mark`: its `b:` mark); whether that history was ever
        sent; the write that takes the claim; and, when no run is found, whether attempts of
        that history are in flight whose answers may be noted soon."""
        entries = [e.partition("|") for e in (raw or "").split()]
        chosen = next((t for t, _, a in entries if t not in exclude and a in answers), None)
        if chosen is None:
            # No run was noted as given this answer. The note is written off the request path
            # (after the note, the history's mark says `delivered`): while one request with
            # that history, and only one, is still in flight, its answer may be this one.
            # (Not when more attempts fly than the mark lists: the one listed may be another run's.)
            mark = _Mark.read(raw_mark)
            flying = set(mark.flying())
            alone = next(iter(flying)) if len(flying) == 1 and not mark.unlisted else None
            found = alone if alone not in exclude else None
            pending = found is None and (bool(flying - exclude) or mark.unlisted > 0)
            return found, bool(raw) or bool(mark.trajectory_id), [], pending
        # A run continues from one history once: its other notes there (an attempt answered
        # twice) are dropped, so that no other run's step can take them.
        return chosen, True, [Merge("c:" + previous, DROP, chosen)], False

    async def _rewritten(
        self,
        anchor: str,
        answers: tuple[str, ...],
        exclude: set[str],
        messages: list[dict[str, Any]],
        stops: tuple[str, ...] = (),
    ) -> str | None:
        """The run given the answer this history ends with, under the same first message; None
        when no run was, or when several were and the history's earlier answers do not tell
        which (an agent's stock reply, `I am ready to submit…`, given to two of its runs)."""
        runs = await self._given(anchor, answers, exclude)
        if len(runs) > 1:
            for earlier in identify.distinctive_answers(messages, _MAX_EVIDENCE, stops):
                if earlier == answers:
                    continue
                given = set(await self._given(anchor, earlier, exclude))
                narrowed = [run for run in runs if run in given]
                runs = narrowed or runs
                if len(runs) == 1:
                    break
        return runs[0] if len(runs) == 1 else None

    async def _given(self, anchor: str, answers: tuple[str, ...], exclude: set[str]) -> list[str]:
        """The runs noted as given one of `answers` (an answer's keys) under `anchor`, newest first."""
        unique = list(dict.fromkeys(answers))
        if not unique:
            return []
        raws = await self._store.stitch_find_many([_rewrite_key(anchor, answer) for answer in unique])
        runs = (trajectory_id for raw in raws for trajectory_id in (raw or "").split())
        return list(dict.fromkeys(run for run in runs if run not in exclude))

    def note_answer(
        self,
        trajectory_id: str,
        key: str,
        status: str,
        answer: str,
        anchor: str,
        amendable: Amendable | None = None,
        space: str = "",
        goes_on: Continuable | None = None,
    ) -> Coroutine[Any, Any, None]:
        """`answered`, to run off the request path; registered now, so that a step that comes
        before it has run waits for it (`place`)."""
        done = asyncio.Event()
        names = _noted_under(key, status, anchor, amendable, space, goes_on)
        for name in names:
            self._noting.setdefault(name, set()).add(done)

        async def note() -> None:
            try:
                await self.answered(trajectory_id, key, status, answer, anchor, amendable, space, goes_on)
            finally:
                done.set()
                for name in names:
                    waiting = self._noting.get(name)
                    if waiting is not None:
                        waiting.discard(done)
                        if not waiting:
                            del self._noting[name]

        return note()

    async def answered(
        self,
        trajectory_id: str,
        key: str,
        status: str,
        answer: str,
        anchor: str = "",
        amendable: Amendable | None = None,
        space: str = "",
        goes_on: Continuable | None = None,
    ) -> None:
        """After a step's answer (`answer`: its `identify.answer_key`): `ok` (delivered in full)
        makes an identical body another run and lets the next step continue this trajectory; an
        error, or a stream the client did not read to the end (`cancelled`), makes an identical
        body a retry. `space`: the stitching space's key, given for an answer that called tools
        (noted under it too: `Stitch.space`)."""
        delivered = status == "ok"
        async with self._locks.hold(key):
            await self._remember_answer(trajectory_id, key, delivered, answer, anchor, amendable, space, goes_on)

    async def _remember_answer(
        self,
        trajectory_id: str,
        key: str,
        delivered: bool,
        answer: str,
        anchor: str,
        amendable: Amendable | None,
        space: str = "",
        goes_on: Continuable | None = None,
    ) -> None:
        # One round trip: the edits applied where the entries are kept (merges.py), so that
        # another replica's notes of the same histories, written at the same instant, stay; in
        # order: the notes first, the mark last, so that a mark that says `delivered` has its
        # notes written.
        writes: list[Merge] = []
        if delivered and amendable is not None:
            writes.append(amend.noted(amendable.head, trajectory_id, amendable.text, key))
        if delivered and goes_on is not None and answer:
            # (A text answer: the client writes it into its next prompt, `continued.py`.)
            writes.append(continued.noted(goes_on, trajectory_id, answer.split(identify.CHOICES_SEPARATOR)[0]))
        if delivered:
            # An answer of several choices (`n` > 1) is noted under each: the client goes on
            # with one of them, and its claim drops the others (`_claim`).
            for one in answer.split(identify.CHOICES_SEPARATOR):
                writes.append(Merge("c:" + key, APPEND, f"{trajectory_id}|{one}", _MAX_CANDIDATES))
                if anchor:
                    writes.append(Merge(_rewrite_key(anchor, one), FRONT, trajectory_id, _MAX_REWRITE_RUNS))
                if space:
                    writes.append(Merge(_rewrite_key(space, one), FRONT, trajectory_id, _MAX_REWRITE_RUNS))
        # Other runs' attempts of this history still in flight stay marked.
        writes.append(_marked(key, trajectory_id, DELIVERED if delivered else FAILED))
        await self._store.stitch_merge(writes)

"""Amended histories: a client that reports a failed action by appending to its last message.

smolagents drops the answer whose tool call raised and appends the error to the user message
before it (`…\\nError:\\n… Now let's retry`), so its next request is the step before's history
with a longer last message and no sign of the answer given: it extends no answered history and
resends no answer to find a rewrite by. Such a request continues the run that was answered at that
history (`stitch.REWRITTEN`): the history before the last message is the same, and the last
message is that history's last one with text appended after a line break.

The same holds for a client that drops the answer and adds a user message of its own after the
history it was given (mini-swe-agent 2.x answers a reply without a tool call with its format
error, the reply left out): the history before that message is one the gateway answered, and
the run answered there that no later step continued (its `c:` entry, stitch.py) goes on.

Kept in the stitching map beside the others:
  u:<key of a history less its last message>  "<trajectory id>|<length>|<digest>|<history key> …"
      runs answered with tool calls where the history ended with a user message of that text
      (its length and a digest of its ends) and whose whole history had that key, the latest
      last: only a call can raise, and a history that ends with a tool result, or an answer
      without calls, writes nothing here. Written off the answer's path, as an edit applied where
      the entry is kept (merges.py): runs answered at one instant after the same history, by one
      replica or two, keep both.

Runs of one task given the same history are noted alike (the same text, the same history key)
and nothing in an amended request tells which of them it is: it continues the oldest that is
still waiting there, as a resent answer continues the oldest run given it (stitch._claim), and
takes that run's notes in both entries (merges.DROP), so that the next such request continues
the next run. A run waits while its answer at that history is in the history's `c:` entry
(stitch.py): a run whose next step went on from there normally took that note with it, so an
earlier run of the task that went on is not taken for the one whose call raised now. (Its `u:`
note stays until it ages out: the step that goes on knows the history it extends, not the key
of that history less its last message, which it would have to hash again.) A run whose last
answer was given there and that sent no other step still waits: nothing says it ended.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from router.protocol.text import text_of
from router.records import record
from router.trajectory.merges import NO_RUN, NOTE, Merge

PREFIX = "u:"
MAX_ENTRIES = 256  # runs answered after one history less its last message (stitch.MAX_CANDIDATES: a fleet)


@record(frozen=True, slots=True)
class Amendable:
    """What a request's history leaves to find it by when a later one amends it: the key of the
    history before its last message (`head`) and that message's text."""

    head: str
    text: str


def amendable(messages: list[dict[str, Any]], head: str | None) -> Amendable | None:
    """The history's last message as an amendment may extend it: a user message's text, after
    at least one message; None otherwise (tool results come as messages of their own)."""
    if head is None or not messages or messages[-1].get("role") != "user":
        return None
    text = text_of(messages[-1].get("content"))
    return Amendable(head, text) if text else None


# A message's ends are hashed, not the whole: with its length, and the history before it fixed
# by the key, they tell one text from another as well, and a client that sends a long user
# message every step (Aider's files) is not made to hash it again for this.
_ENDS = 512


def ends_digest(text: str) -> str:
    ends = text if len(text) <= 2 * _ENDS else text[:_ENDS] + text[-_ENDS:]
    return hashlib.blake2b(ends.encode(), digest_size=8).hexdigest()


# An entry: a trajectory id, the text's length, its digest and the key of the history answered
# (left out by earlier versions): one regex pass reads them all (a run's first request reads the
# entries of every recent run of its system prompt).
_ENTRY = re.compile(r"([^\s|]+)\|(\d+)\|([0-9a-f]+)(?:\|([0-9a-f]+))?")


def noted(head: str, trajectory_id: str, text: str, answered: str = "") -> Merge:
    """The edit of the `u:` entry of `head` that notes `trajectory_id` answered after a last
    message of `text`, at the history of key `answered` (the oldest dropped past
    `MAX_ENTRIES`). Runs answered after the same text each keep their note, oldest first.
    (Applied where the entry is kept: merges.py.)"""
    tail = f"|{len(text)}|{ends_digest(text)}" + (f"|{answered}" if answered else "")
    return Merge(PREFIX + head, NOTE, trajectory_id, tail, str(MAX_ENTRIES))


@record(frozen=True, slots=True)
class Amended:
    """The runs an amended last message may continue: noted alike, oldest first (none in the
    request's `exclude`), the text the request appended, and the key of the history they were
    answered at ("" where the note does not say: written by an earlier version)."""

    runs: tuple[str, ...]
    appended: str
    answered: str


def amended_runs(raw: str | None, text: str, exclude: set[str]) -> Amended | None:
    """The runs whose answered last message `text` extends after a line break, when they were
    all noted alike (the same shorter text at the same history: told apart by nothing here), or
    None. Runs noted after different texts that `text` extends both are not guessed between."""
    if not raw:
        return None
    size = len(text)
    runs: dict[str, None] = {}  # oldest first, each once (a fleet's entry holds hundreds)
    tails: dict[tuple[int, str, str], None] = {}
    digests: dict[int, str] = {}
    for trajectory_id, length_text, digest, answered in _ENTRY.findall(raw):
        length = int(length_text)
        if not 0 < length < size or text[length] != "\n" or trajectory_id in exclude:
            continue
        if trajectory_id.startswith(NO_RUN):
            continue  # an earlier version's note of runs alike, naming none of them
        if length not in digests:
            digests[length] = ends_digest(text[:length])
        if digests[length] == digest:
            tails[length, digest, answered] = None
            runs[trajectory_id] = None
    if not runs or (len(tails) > 1 and len(runs) > 1):
        return None
    length, _, answered = next(iter(tails))
    return Amended(tuple(runs), text[length:], answered)


def _waiting(raw: str | None) -> list[tuple[str, str]]:
    """A history's `c:` entry ("<trajectory id>|<answer key> …", oldest first) as (run, answer)
    pairs: the runs answered there that no later step went on from."""
    pairs = (entry.partition("|") for entry in (raw or "").split())
    return [(run, answer) for run, _, answer in pairs if run]


def unclaimed(raw_answered: str | None) -> set[str]:
    """The runs a history's `c:` entry (`raw_answered`) notes as answered there and not gone on
    from it."""
    return {run for run, _ in _waiting(raw_answered)}


def newest_waiting(raw: str | None, exclude: set[str]) -> str | None:
    """The newest run answered at a history (its `c:` entry, `raw`) that no later step continued,
    not in `exclude`: for a client that kept an empty turn where the answer was, runs of one task
    answered there at once are told apart by nothing it sends (each such request takes one, so
    there are as many trajectories as runs; refusing would split each), and a run that ended
    there long ago is the oldest (its last answer a call, or its client stopped), not the run
    that goes on."""
    return next((run for run, _ in reversed(_waiting(raw)) if run not in exclude), None)


def answered_before(raw: str | None, exclude: set[str]) -> str | None:
    """The run answered at a history (its `c:` entry, `raw`) that no later step continued, when
    one run not in `exclude` is, or when every such run was given the same answer (runs alike:
    the newest, as `newest_waiting`); None where they were given different answers (with the
    answer dropped, nothing tells which run drops it)."""
    waiting = [(run, answer) for run, answer in _waiting(raw) if run not in exclude]
    if len({answer for _, answer in waiting}) == 1 or len({run for run, _ in waiting}) == 1:
        return waiting[-1][0]
    return None

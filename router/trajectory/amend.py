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
  u:<key of a history less its last message>  "<trajectory id>|<length>|<digest> …"
      runs answered with tool calls where the history ended with a user message of that text
      (its length and a digest of its ends), the latest last: only a call can raise, and a
      history that ends with a tool result, or an answer without calls, writes nothing here.
      Written off the answer's path, as an edit applied where the entry is kept (merges.py):
      runs answered at one instant after the same history, by one replica or two, keep both.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from router.protocol.text import text_of
from router.records import record
from router.trajectory.merges import AMBIGUOUS, NOTE, Merge

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


# An entry: a trajectory id, the text's length and its digest (one regex pass reads them all:
# a run's first request reads the entries of every recent run of its system prompt).
_ENTRY = re.compile(r"([^\s|]+)\|(\d+)\|([0-9a-f]+)")


def noted(head: str, trajectory_id: str, text: str) -> Merge:
    """The edit of the `u:` entry of `head` that notes `trajectory_id` answered after a last
    message of `text` (the oldest dropped past `MAX_ENTRIES`). Where another run was answered
    after the same text, the two are one entry that names no run (`*`): an amendment of that
    text could be either's. (Applied where the entry is kept: merges.py.)"""
    return Merge(PREFIX + head, NOTE, trajectory_id, f"|{len(text)}|{ends_digest(text)}", str(MAX_ENTRIES))


def amended_run(raw: str | None, text: str, exclude: set[str]) -> tuple[str, str] | None:
    """The run whose answered last message `text` extends after a line break, when one run not
    in `exclude` is (runs of one task given the same history are told apart by nothing here, so
    none is taken): (its trajectory id, the text appended), or None. (A run is amended once from
    one history: its entries there are dropped, `merges.DROP`.)"""
    if not raw:
        return None
    size = len(text)
    matched: dict[str, int] = {}
    digests: dict[int, str] = {}
    for trajectory_id, length_text, digest in _ENTRY.findall(raw):
        length = int(length_text)
        if not 0 < length < size or text[length] != "\n" or trajectory_id in exclude:
            continue
        if length not in digests:
            digests[length] = ends_digest(text[:length])
        if digests[length] == digest:
            matched[trajectory_id] = length
    if len(matched) != 1 or AMBIGUOUS in matched:
        return None
    [(trajectory_id, length)] = matched.items()
    return trajectory_id, text[length:]


def answered_before(raw: str | None, exclude: set[str]) -> str | None:
    """The run answered at a history (its `c:` entry, `raw`: "<trajectory id>|<answer key> …")
    that no later step continued, when one run not in `exclude` is (with the answer dropped,
    runs given the same history are told apart by nothing: none is taken), or None."""
    runs = {entry.partition("|")[0] for entry in (raw or "").split()} - exclude - {""}
    return next(iter(runs)) if len(runs) == 1 else None

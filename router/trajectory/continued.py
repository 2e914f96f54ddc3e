"""Continued texts: a client that writes each answer back into its one prompt.

A text ReAct loop of one prompt (LangChain's classic `AgentExecutor` with a chat model:
`…Question: {input}\\nThought:{agent_scratchpad}`) sends, at each step, the step before's last
message with the answer it was given and the tool's result appended: `…Thought:` + the answer +
`\\nObservation: …\\nThought: `. Its history has no assistant message to resend, so it extends no
answered history; its last message holds the answer instead. Such a request continues the run
whose answer its appended text begins with (up to the request's first stop string, where the
provider stopped it, `\\nObservation`), after the earlier text of that run's last message.

Kept in the stitching map beside the others:
  v:<digest of the history before the last message and the message's first characters>
      "<trajectory id>|<length>|<digest>|<answer key> …"
      runs answered with text (no tool call) after a last user message of that beginning: its
      length, a digest of its ends (amend.py's) and the answer's key (identify.answer_key).
      A run is continued once from one entry (merges.DROP). Runs answered alike after the same
      text (a deterministic model: two runs of one question) are told apart by nothing in the
      request that continues it: it continues the oldest of them still noted there, and the
      next such request the next (as a resent answer continues the oldest run given it,
      stitch._claim), so that they are as many trajectories as runs.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from router.protocol.text import text_of
from router.records import record
from router.trajectory import identify
from router.trajectory.amend import MAX_ENTRIES, ends_digest
from router.trajectory.merges import NO_RUN, NOTE, Merge

PREFIX = "v:"
# The last message's first characters that key its entry: what the next request's longer text
# begins with too. A prompt shorter than this (no ReAct prompt is: its tools are described in it)
# is never looked up, so that short chat prompts cost nothing here.
LEAD = 128

_ENTRY = re.compile(r"([^\s|]+)\|(\d+)\|([0-9a-f]+)\|([0-9a-f]+)")


@record(frozen=True, slots=True)
class Continuable:
    """What a request's last message leaves to find it by when a later one continues it: the
    key of its entry and the message's text."""

    key: str
    text: str


def continuable(messages: list[dict[str, Any]], head: str) -> Continuable | None:
    """The history's last message as a later request may continue it: a user message's text of
    `LEAD` characters or more; `head` keys the history before it (the stitching space's start
    for a history of one message). None otherwise."""
    if not messages or messages[-1].get("role") != "user":
        return None
    text = text_of(messages[-1].get("content"))
    if len(text) < LEAD:
        return None
    lead = hashlib.blake2b(f"{head}\n{text[:LEAD]}".encode(), digest_size=12).hexdigest()
    return Continuable(PREFIX + lead, text)


def noted(continued: Continuable, trajectory_id: str, answer: str) -> Merge:
    """The edit of the entry that notes `trajectory_id` answered `answer` (its key) after the
    text (the oldest dropped past `MAX_ENTRIES`; merges.py applies it where the entry is kept)."""
    tail = f"|{len(continued.text)}|{ends_digest(continued.text)}|{answer}"
    return Merge(continued.key, NOTE, trajectory_id, tail, str(MAX_ENTRIES))


def continued_run(raw: str | None, text: str, stops: tuple[str, ...], exclude: set[str]) -> tuple[str, str] | None:
    """The run whose last message `text` continues with the answer it was given, of the runs
    not in `exclude`: (its trajectory id, the text appended), or None. Of runs noted alike (the
    same text, the same answer) the oldest; runs noted after different texts or answers that
    `text` continues alike are not guessed between. The answer is read up to the first of the
    request's `stops` in the appended text, or else as all of it."""
    if not raw:
        return None
    size = len(text)
    found: list[tuple[str, int]] = []  # (run, the length of its text), oldest first
    fits: dict[tuple[int, str, str], bool] = {}  # whether `text` continues a tail: each read once
    for trajectory_id, length_text, digest, answer in _ENTRY.findall(raw):
        length = int(length_text)
        if not 0 < length < size or trajectory_id in exclude or trajectory_id.startswith(NO_RUN):
            continue  # (`NO_RUN`: an earlier version's note of runs alike, naming none of them)
        tail = (length, digest, answer)
        fit = fits.get(tail)
        if fit is None:
            appended = text[length:]
            fit = fits[tail] = ends_digest(text[:length]) == digest and any(
                identify.answer_key(said, []) == answer for said in _answers(appended, stops)
            )
        if fit:
            found.append((trajectory_id, length))
    if not found or (sum(fits.values()) > 1 and len({run for run, _ in found}) > 1):
        return None
    trajectory_id, length = found[0]
    return trajectory_id, text[length:]


def _answers(appended: str, stops: tuple[str, ...]) -> list[str]:
    """Where the answer may end in the appended text: at the first of each stop string, and at
    its end."""
    ends = [at for at in (appended.find(stop) for stop in stops[: identify.MAX_STOPS] if stop) if at > 0]
    return [appended[:at] for at in sorted(set(ends))] + [appended]

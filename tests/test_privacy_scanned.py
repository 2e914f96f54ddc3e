"""The record of what the privacy scan read (router/privacy/scanned.py): the note it writes is
the chain of the messages read, whether `read` reuses the comparison `first_unread` made for
the same step or compares again."""

from __future__ import annotations

import copy
from typing import Any

from router.privacy.scanned import ScannedMessages, chain


def _messages(count: int) -> list[dict[str, Any]]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} " * 20} for i in range(count)]


def _note(messages: list[dict[str, Any]]) -> str:
    return f"{len(messages)}:{chain(messages)[-1].hex()}"


def test_a_step_parsed_afresh_reads_from_its_first_edit_and_notes_the_whole_chain() -> None:
    scanned = ScannedMessages()
    first = _messages(6)
    note = scanned.read("t", first, 0, 1000)
    assert note == _note(first)
    again = copy.deepcopy(first) + _messages(8)[6:]  # new objects, as a body parsed afresh holds
    again[3]["content"] = "edited: jane@example.com"
    unread = scanned.first_unread("t", again, note)
    assert unread == 3
    assert scanned.read("t", again, unread, 1000) == _note(again)
    # The next step, unchanged, starts after all of them.
    assert scanned.first_unread("t", copy.deepcopy(again), _note(again)) == len(again)


def test_a_comparison_for_other_messages_is_not_reused() -> None:
    scanned = ScannedMessages()
    first = _messages(6)
    note = scanned.read("t", first, 0, 1000)
    other = copy.deepcopy(first)
    other[1]["content"] = "edited"
    # A concurrent step of the trajectory compared its own list; this one reads `first` edited
    # at 4, having been told 5 messages are unchanged: the chain it notes is still its own.
    assert scanned.first_unread("t", copy.deepcopy(first), note) == 6
    edited = copy.deepcopy(first)
    edited[4]["content"] = "edited too"
    assert scanned.read("t", edited, 5, 1000) == _note(edited)
    assert scanned.first_unread("t", other, _note(edited)) == 1

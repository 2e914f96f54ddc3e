"""What the privacy stage learned about a trajectory, kept in the process between its steps.

Every step resends the whole history, and a trajectory's vault only grows, so the stage learns
each message once: its redacted form, what it replaced (for the metrics and the exposure) and
the size of the vault it was redacted against. At the next step the messages equal to those
at their place in the previous call are taken as they were: the unchanged prefix is found with
one list comparison (C speed: the same objects, as a parser reusing its last parse hands them,
compare by identity; equal ones parsed anew compare by memory), and only the messages after it
are looked at one by one. When values were added to the vault since, only those are looked
for in the earlier messages: in the track's text, their strings kept as UTF-8 bytes end to end
(appended to, never rebuilt, while the prefix holds), searched natively (memmem for each of a
few new values, one automaton for many); a message is redacted again only when one occurs in
it. The result is the same as redacting the whole history against the whole vault
(tests/test_privacy_memo.py checks it byte for byte; tests/test_privacy_memo_incremental.py
against learning afresh over random histories); the work per step is the new
messages against the vault, plus a native search of the history's bytes for the new values
(~30 µs per value at 400 KB: `python -m benchmarks.privacy.memo_steps`).

Kept per trajectory: its value matcher (the vault, opened once), and the messages of the last
few calls that went out (`TRACKS`: the step's own messages, an inner call's). Bounded in bytes
over all trajectories (`vault.memory_bytes`), least recently used first out; a trajectory may
take a quarter of it, and what does not fit is redacted anew at each step.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from router.privacy.matcher import ValueMatcher
from router.privacy.redact import kind_of, message_strings, redact_message
from router.privacy.scanned import ScannedMessages, equal_prefix
from router.protocol.fields import kept_json

TRACKS = 3  # distinct message lists per trajectory: the step's, and inner calls' own
_OVERHEAD = 200  # bytes a remembered message costs beyond its text (objects, list slots)
_ENTRY = 2048  # bytes a trajectory's memory costs empty (its matcher, maps and sets)


@dataclass(slots=True)
class Seen:
    """One message as the privacy stage learned it."""

    message: dict[str, Any]
    redacted: dict[str, Any]  # the same object as `message` when nothing in it is known
    count: int  # values replaced in it
    kinds: dict[str, int]  # kind -> times replaced
    placeholders: frozenset[str]  # of the values it holds
    strings: list[str]  # what the redactor reads of it (`message_strings`)
    known: int  # the vault's size when it was redacted
    generation: int
    size: int
    settled: bool = False  # every value it holds is known to have reached the cloud
    # The redacted message as JSON, made once where a route redacts: a redacted history's body
    # is its messages' encodings joined, not the whole history encoded again at every step.
    encoded: bytes | None = None


def learn(matcher: ValueMatcher, message: dict[str, Any], generation: int, encode: bool = False) -> Seen:
    redacted, replaced = redact_message(matcher, message)
    strings = message_strings(message)
    kinds: dict[str, int] = {}
    placeholders = frozenset(matcher.placeholder[value] for value in replaced)
    for value, times in replaced.items():
        kind = kind_of(matcher.placeholder[value])
        kinds[kind] = kinds.get(kind, 0) + times
    size = sum(len(text) for text in strings) * (2 if replaced else 1) + _OVERHEAD * (1 + len(replaced))
    encoded = kept_json(redacted) if encode else None
    if encoded is not None:
        size += len(encoded)
    seen = Seen(message, redacted, sum(replaced.values()), kinds, placeholders, strings, len(matcher), generation, size)
    seen.encoded = encoded
    return seen


@dataclass(slots=True)
class Track:
    """One list of messages as last learned: the messages, what was learned of each, and their
    strings as UTF-8 bytes end to end (each message's followed by a NUL), for the new values."""

    generation: int
    known: int  # every message here was redacted against at least the vault's first `known`
    messages: list[dict[str, Any]] = field(default_factory=list)
    items: list[Seen] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)  # running total of the items' sizes
    text: bytearray = field(default_factory=bytearray)
    ends: list[int] = field(default_factory=list)  # where each of items[:len(ends)] ends in text
    # The values replaced in items[:tallied], by kind: what a step sends is counted from its new
    # messages, not by adding up the whole history again.
    tallied: int = 0
    tally: dict[str, int] = field(default_factory=dict)

    @property
    def bytes(self) -> int:
        return (self.sizes[-1] if self.sizes else 0) + len(self.text) + 8 * len(self.ends)

    def cut(self, count: int) -> None:
        """Keep what is known of the first `count` messages only."""
        del self.messages[count:], self.items[count:], self.sizes[count:]
        if count < len(self.ends):
            del self.text[self.ends[count - 1] + 1 if count else 0 :], self.ends[count:]
        self.untally(count)

    def untally(self, index: int) -> None:
        """items[index] on are not what was tallied (cut or learned again)."""
        if index < self.tallied:
            self.tallied, self.tally = 0, {}

    def kinds(self) -> dict[str, int]:
        """The values replaced in all the items, by kind (a copy)."""
        tally = self.tally
        for item in self.items[self.tallied :]:
            for kind, times in item.kinds.items():
                tally[kind] = tally.get(kind, 0) + times
        self.tallied = len(self.items)
        return dict(tally)

    def extend_text(self) -> None:
        for item in self.items[len(self.ends) :]:
            self.text += "\0".join(item.strings).encode("utf-8", "surrogatepass")
            self.ends.append(len(self.text))
            self.text += b"\0"


@dataclass(slots=True)
class TrajectoryMemo:
    matcher: ValueMatcher = field(default_factory=ValueMatcher)
    note_keys: set[str] = field(default_factory=set)  # the trajectory's notes read so far
    vault_read: int = 0  # entries of the trajectory's vault log read so far (its position)
    born: float | None = None  # the trajectory's creation time: one begun anew is another
    unopened: set[str] = field(default_factory=set)  # vault notes that do not open (fail closed)
    exposed: set[str] = field(default_factory=set)  # placeholders known to have reached the cloud
    kinds: dict[str, int] = field(default_factory=dict)  # placeholders per kind (numbering)
    generation: int = 0  # bumped when a known value changes placeholder: forget every redaction
    tracks: OrderedDict[str, Track] = field(default_factory=OrderedDict)
    track_bytes: int = 0
    size: int = 0  # bytes as the memo counted them last
    held: bool = False  # by the memo (else it lives for one step)

    def bytes_now(self) -> int:
        # A value is held three times over (its list, both maps) and once in an automaton.
        values = self.matcher.chars * 4 + _OVERHEAD * len(self.matcher.values)
        return _ENTRY + self.track_bytes + values + _OVERHEAD * len(self.note_keys)


def _track_key(messages: list[dict[str, Any]]) -> str:
    """Which list of messages this is: its first message's role and start (a system prompt)."""
    first = messages[0] if messages else {}
    content = first.get("content")
    head = content[:64] if isinstance(content, str) else repr(content)[:64]
    return f"{first.get('role')}\0{head}"


class PrivacyMemo:
    """Per-trajectory memories of one process, bounded in bytes."""

    def __init__(self, max_bytes: int = 64 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, TrajectoryMemo] = OrderedDict()
        self._bytes = 0
        # Which messages of each trajectory the scan read, by content (not by count).
        self.scanned = ScannedMessages()

    def get(self, trajectory_id: str) -> TrajectoryMemo | None:
        entry = self._entries.get(trajectory_id)
        if entry is not None:
            self._entries.move_to_end(trajectory_id)
        return entry

    def holds(self, trajectory_id: str, entry: TrajectoryMemo) -> bool:
        return self._entries.get(trajectory_id) is entry

    def adopt(self, trajectory_id: str, entry: TrajectoryMemo) -> None:
        """Remember `entry` for the trajectory's next steps (a trajectory without sensitive
        values is not remembered: there is nothing to learn of its messages)."""
        self.forget(trajectory_id)
        self._entries[trajectory_id] = entry
        entry.held = True
        self.account(entry)

    def forget(self, trajectory_id: str) -> None:
        old = self._entries.pop(trajectory_id, None)
        if old is not None:
            self._bytes -= old.size
            old.size, old.held = 0, False

    @property
    def bytes(self) -> int:
        return self._bytes

    def learned(self, entry: TrajectoryMemo, messages: list[dict[str, Any]], encode: bool = False) -> list[Seen]:
        """Each message as learned against the entry's vault (redacted, what it holds; with
        `encode`, its redacted form's JSON, for the messages it learns now)."""
        return self.learned_with_kinds(entry, messages, encode)[0]

    def learned_with_kinds(
        self, entry: TrajectoryMemo, messages: list[dict[str, Any]], encode: bool = False
    ) -> tuple[list[Seen], dict[str, int]]:
        """`learned`, and the values replaced in all of them by kind (summed incrementally)."""
        matcher, generation, size = entry.matcher, entry.generation, len(entry.matcher)
        key = _track_key(messages)
        track = entry.tracks.pop(key, None)
        if track is None or track.generation != generation:
            track = Track(generation, size)
        same = equal_prefix(track.messages, messages)
        old_messages, old_items = track.messages[same:], track.items[same:]
        if same and track.messages[same - 1] is not messages[same - 1]:
            # Parsed anew: hold the newest objects, so that the previous request's can go.
            track.messages[:same] = messages[:same]
            for item, message in zip(track.items, messages[:same], strict=False):
                item.redacted = message if item.redacted is item.message else item.redacted
                item.message = message
        track.cut(same)
        # After a changed message (a compaction that kept the count): still one by one.
        for index, message in enumerate(messages[same:]):
            old = old_items[index] if index < len(old_items) else None
            if old is None or not (old_messages[index] is message or old_messages[index] == message):
                old = learn(matcher, message, generation, encode)
            else:
                old.redacted = message if old.redacted is old.message else old.redacted
                old.message = message
            track.messages.append(message)
            track.items.append(old)
            track.sizes.append((track.sizes[-1] if track.sizes else 0) + old.size)
        if track.known < size:
            self._refresh(matcher, track, generation, encode)
        seen = list(track.items)
        kinds = track.kinds()
        self._keep(entry, key, track)
        return seen, kinds

    @staticmethod
    def _refresh(matcher: ValueMatcher, track: Track, generation: int, encode: bool) -> None:
        """Look for the values added since `track.known` in the messages learned before them:
        one pass of the track's bytes (a separator no value holds; a false hit only means a
        message is redacted again)."""
        track.extend_text()
        ends, items, size = track.ends, track.items, len(matcher)
        again: set[int] = set()
        for begin, end in matcher.spans_since(track.known, track.text):
            # Every message the occurrence touches (one, unless a value holds a NUL).
            again.update(range(bisect_right(ends, begin), min(bisect_right(ends, end - 1), len(items) - 1) + 1))
        for index in sorted(again):
            if items[index].known < size:
                items[index] = learn(matcher, items[index].message, generation, encode)
        if again:
            first = min(again)
            track.untally(first)
            total = track.sizes[first - 1] if first else 0
            for index in range(first, len(items)):
                total += items[index].size
                track.sizes[index] = total
        track.known = size

    def _keep(self, entry: TrajectoryMemo, key: str, track: Track) -> None:
        # Past a quarter of the memory, the rest is redacted anew each step: too big to remember.
        track.cut(bisect_right(track.sizes, self.max_bytes // 4))
        entry.tracks[key] = track
        while len(entry.tracks) > TRACKS:
            entry.tracks.popitem(last=False)
        entry.track_bytes = sum(kept.bytes for kept in entry.tracks.values())
        self.account(entry)

    def account(self, entry: TrajectoryMemo) -> None:
        """Count what `entry` holds now, and forget the least recently used trajectories while
        over the bound (never the one in use: it was just moved to the end)."""
        if not entry.held:
            return
        now = entry.bytes_now()
        self._bytes += now - entry.size
        entry.size = now
        while self._bytes > self.max_bytes and len(self._entries) > 1:
            self.forget(next(iter(self._entries)))

"""What the privacy stage learned about a trajectory, kept in the process between its steps.

Every step resends the whole history, and a trajectory's vault only grows, so the stage learns
each message once: its redacted form, what it replaced (for the metrics and the exposure) and
the size of the vault it was redacted against. At the next step a message equal (`==`, a memory
comparison) to the one at its place in the previous call is taken as it was; when values were
added to the vault since, only those values are looked for in it (one small automaton over the
history), and the message is redacted again only when one occurs. The result is the same as
redacting the whole history against the whole vault (tests/test_privacy_memo.py checks it byte
for byte); the work per step is the new messages against the vault, plus the history against
the new values.

Kept per trajectory: its value matcher (the vault, opened once), and the messages of the last
few calls that went out (`TRACKS`: the step's own messages, an inner call's). Bounded in bytes
over all trajectories (`vault.memory_bytes`), least recently used first out; a trajectory may
take a quarter of it, and what does not fit is redacted anew at each step.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from router.privacy.matcher import ValueMatcher
from router.privacy.redact import kind_of, message_strings, redact_message

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


def learn(matcher: ValueMatcher, message: dict[str, Any], generation: int) -> Seen:
    redacted, replaced = redact_message(matcher, message)
    strings = message_strings(message)
    kinds: dict[str, int] = {}
    placeholders = frozenset(matcher.placeholder[value] for value in replaced)
    for value, times in replaced.items():
        kind = kind_of(matcher.placeholder[value])
        kinds[kind] = kinds.get(kind, 0) + times
    size = sum(len(text) for text in strings) * (2 if replaced else 1) + _OVERHEAD * (1 + len(replaced))
    return Seen(message, redacted, sum(replaced.values()), kinds, placeholders, strings, len(matcher), generation, size)


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
    tracks: OrderedDict[str, list[Seen]] = field(default_factory=OrderedDict)
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

    def learned(self, entry: TrajectoryMemo, messages: list[dict[str, Any]]) -> list[Seen]:
        """Each message as learned against the entry's vault (redacted, what it holds)."""
        matcher, generation = entry.matcher, entry.generation
        key = _track_key(messages)
        previous = entry.tracks.pop(key, None) or []
        seen: list[Seen] = []
        stale: list[Seen] = []  # equal messages redacted against a smaller vault
        size = len(matcher.values)
        for index, message in enumerate(messages):
            old = previous[index] if index < len(previous) else None
            if old is None or old.generation != generation or not (old.message is message or old.message == message):
                seen.append(learn(matcher, message, generation))
                continue
            if old.known < size:
                stale.append(old)
            # Hold the newest parse: the previous request's objects can go.
            old.redacted = message if old.redacted is old.message else old.redacted
            old.message = message
            seen.append(old)
        if stale:
            self._refresh(matcher, stale, seen, generation)
        self._keep(entry, key, seen)
        return seen

    @staticmethod
    def _refresh(matcher: ValueMatcher, stale: list[Seen], seen: list[Seen], generation: int) -> None:
        """Look for the values added since in messages redacted before them."""
        for known in sorted({item.known for item in stale}):
            group = [item for item in stale if item.known == known]
            # One pass over the group's text (a separator no value holds; a false hit only
            # means a message is redacted again).
            if not matcher.any_since(known, ["\0".join(text for item in group for text in item.strings)]):
                for item in group:
                    item.known = len(matcher)
                continue
            for item in group:
                if matcher.any_since(known, item.strings):
                    fresh = learn(matcher, item.message, generation)
                    seen[seen.index(item)] = fresh
                else:
                    item.known = len(matcher)

    def _keep(self, entry: TrajectoryMemo, key: str, seen: list[Seen]) -> None:
        budget = self.max_bytes // 4
        kept: list[Seen] = []
        size = 0
        for item in seen:
            if size + item.size > budget:
                break  # the rest is redacted anew each step: too big to remember
            kept.append(item)
            size += item.size
        entry.tracks[key] = kept
        while len(entry.tracks) > TRACKS:
            entry.tracks.popitem(last=False)
        entry.track_bytes = sum(sum(item.size for item in track) for track in entry.tracks.values())
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

"""What the gateway keeps of the bodies it parsed, and how a new body is split against them.

An agent resends its whole history at every step. Its next body is its last one up to the end
of some message (the last one, or an earlier one when the client rewrites its newest messages:
Claude Code and LiteLLM's prompt caching move `cache_control` onto the newest messages at every
step), then new items, then the same trailing fields. An `Entry` knows where the items of a body
end (`ends`: all those added since it was learned, up to MAX_ENDS); a new body takes the longest
of them it still shares (a binary search of `memcmp`s), and only what follows is parsed.

The surface a body is for (`Reader`: chat completions, Messages, Responses) names its array and
says how an item becomes chat messages; what is kept per entry is the items parsed, the chat
messages made of them and their encoding, so that the old items are neither parsed, checked,
translated nor encoded again.

Where an item's end is known from: the new bytes of a step, tokenised once they have parsed
(exact on valid JSON); or, on a body parsed whole, the last LEARN_BACK items found backwards as
their compact encodings (`chain_ends`; a client that writes otherwise has only its last end
known); such an entry is checked at its first reuse by parsing its bytes up to the boundary
taken (as a whole parse would), and only the boundaries proven then are kept.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from router.errors import GatewayError
from router.protocol.containers import check_containers
from router.protocol.fields import check_depth
from router.protocol.prefix_bytes import (
    WHITESPACE,
    array_close,
    array_start,
    chain_ends,
    compact_ends,
    item_ends,
    shared_end,
)
from router.protocol.prefix_encoded import Encoded

KEY_BYTES = 1024  # a body's first bytes name its bucket
PER_BUCKET = 4  # trajectories that share their first KEY_BYTES (one agent's system prompt)
MAX_ENDS = 512  # item ends an entry knows (the newest)
LEARN_BACK = 8  # item ends looked for backwards in a body parsed whole
# What an entry holds: the client's body, the chat messages' encoding (about as long), the parsed
# objects (their strings as long again, plus their dicts and lists: ~1,400 bytes an item or chat
# message of an agent's shape, tool calls nested four deep); an entry not yet reused holds its
# body, its head and its ends. An end is three list slots and up to four ints. Measured with
# tracemalloc after 100 steps to ~360 KB (benchmarks.longrun's runs): chat completions 1.31 MB
# held for 1.38 counted, Messages 1.73 for 1.66, Responses 1.32 for 1.66.
MESSAGE_COST = 1400
UNVERIFIED_COST = 1024
END_COST = 150


class NotSplit(Exception):
    """A body that does not split as its entry says (not a client's mistake): parse it whole."""


Mark = tuple[int, int]  # after an item: chat messages made so far, bytes of their encoding


@dataclass(frozen=True, slots=True)
class Reader:
    """A surface's array: its key, and how its items become chat messages (`translate(items,
    first index)`: one list per item, checked as the whole path checks them; a client's mistake
    raises, and the body is then parsed whole, which writes the error)."""

    key: str
    translate: Callable[[list[Any], int], list[list[dict[str, Any]]]]
    max_depth: int
    translates: bool  # whether chat messages are objects of their own (else the items themselves)
    # Whether a body may be split after an item whose chat messages so far are `messages[:count]`
    # (None: after any): not where a later item's translation would change one of them.
    usable: Callable[[list[dict[str, Any]], int], bool] | None = None

    @property
    def name(self) -> bytes:
        return orjson.dumps(self.key)


@dataclass(slots=True)
class Entry:
    """A body seen before, up to the end of its last item."""

    prefix: bytes  # the client's body (kept whole, not copied): items end at `ends`
    array_at: int  # where the array opens in `prefix`
    head: dict[str, Any]  # the top-level fields before the array, parsed
    tail_key: str | None  # the first field after the array, where the next body is searched
    ends: list[int]  # where items end in `prefix`, ascending; the last is the last item's
    counts: list[int]  # items through each end
    marks: list[Mark] | None  # the chat messages through each end; None until verified
    items: list[Any] | None  # None until verified (made from a whole parse)
    messages: list[dict[str, Any]] | None  # the chat messages made of `items`
    encoded: Encoded  # the chat messages' encodings
    cost: int  # bytes counted against the budget


@dataclass(slots=True)
class Split:
    """A body as a known entry's items through one of its ends, and what follows."""

    key: tuple[str, bytes]
    entry: Entry  # what it was made from
    head: dict[str, Any]
    items: list[Any]
    tail: dict[str, Any]
    messages: list[dict[str, Any]]  # the chat messages of all items
    encoded: Encoded  # their encodings
    after: Entry  # what to keep once the surface has built its request from this


class PrefixStore:
    """Entries by client key namespace and first bytes, bounded in bytes (least recently used
    dropped), so one tenant's timing cannot probe another's history."""

    def __init__(self, budget_bytes: int) -> None:
        self.budget_bytes = budget_bytes
        self.held_bytes = 0
        self._buckets: OrderedDict[tuple[str, bytes], list[Entry]] = OrderedDict()

    def split(self, body: bytes, namespace: str, reader: Reader) -> Split | None:
        """`body` split against the entry sharing most of it, or None (no entry shares an item
        end, or it does not split so: parse it whole)."""
        key = (namespace, body[:KEY_BYTES])
        bucket = self._buckets.get(key)
        if not bucket:
            return None
        best: Entry | None = None
        cut = -1
        for entry in bucket:
            index = shared_end(body, entry.prefix, entry.ends)
            if index >= 0 and (best is None or entry.ends[index] > best.ends[cut]):
                best, cut = entry, index
                if index == len(entry.ends) - 1:
                    break  # the whole of the last body: the usual step
        if best is None:
            return None
        if best.items is None:
            # Learned from a whole parse: its items are parsed (and their ends proven) once.
            held = best.cost
            try:
                cut = _verify(best, cut, reader)
            except (orjson.JSONDecodeError, GatewayError, NotSplit):
                self._drop(key, best)
                return None
            self.held_bytes += best.cost - held
        try:
            return _split(key, best, cut, body, reader)
        except (orjson.JSONDecodeError, GatewayError):
            return None  # the new bytes are wrong, not the entry: it stays

    def replace(self, split: Split) -> None:
        """Keep what `split` made in place of the entry it was made from."""
        self._drop(split.key, split.entry)
        self.keep(split.key, split.after)

    def learn(self, body: bytes, namespace: str, raw: dict[str, Any], reader: Reader) -> None:
        """Remember `body`, parsed whole into `raw`, for the next one; checked at its first reuse."""
        if self.budget_bytes <= 0:
            return
        items = raw.get(reader.key)
        if not isinstance(items, list) or not items:
            return
        keys = list(raw)
        at = keys.index(reader.key)
        array_at = array_start(body, reader.name, at > 0)
        if array_at is None:
            return
        tail_key = keys[at + 1] if at + 1 < len(keys) else None
        found = array_close(body, array_at + 1, tail_key)
        if found is None:
            return
        end = found[0]
        while end > 0 and body[end - 1] in WHITESPACE:
            end -= 1
        if body[end - 1 : end] != b"}":
            return
        ends = [*chain_ends(body, end, items, array_at, LEARN_BACK), end]
        counts = list(range(len(items) - len(ends) + 1, len(items) + 1))
        head = {name: raw[name] for name in keys[:at]}
        cost = len(body) + UNVERIFIED_COST + END_COST * len(ends)
        self.keep(
            (namespace, body[:KEY_BYTES]),
            Entry(body, array_at, head, tail_key, ends, counts, None, None, None, Encoded(), cost),
        )

    def keep(self, key: tuple[str, bytes], entry: Entry) -> None:
        if entry.cost > self.budget_bytes:
            return
        bucket = self._buckets.setdefault(key, [])
        self._buckets.move_to_end(key)
        bucket.insert(0, entry)
        self.held_bytes += entry.cost
        if len(bucket) > PER_BUCKET:
            self._drop(key, bucket[-1])
        while self.held_bytes > self.budget_bytes:
            oldest_key, oldest = next(iter(self._buckets.items()))
            self._drop(oldest_key, oldest[-1])

    def _drop(self, key: tuple[str, bytes], entry: Entry) -> None:
        bucket = self._buckets.get(key)
        if bucket is None or entry not in bucket:
            return  # already dropped (the budget made room)
        bucket.remove(entry)
        self.held_bytes -= entry.cost
        if not bucket:
            del self._buckets[key]


def _verify(entry: Entry, cut: int, reader: Reader) -> int:
    """Parse a whole-parsed entry's items through `ends[cut]` (as the whole parse did), make
    their chat messages, and keep only the ends proven on them; the new index of the cut."""
    end = entry.ends[cut]
    items = orjson.loads(entry.prefix[entry.array_at : end] + b"]")
    if not isinstance(items, list) or len(items) != entry.counts[cut]:
        raise NotSplit
    chain = chain_ends(entry.prefix, end, items, entry.array_at, LEARN_BACK)
    messages: list[dict[str, Any]] = []
    parts, marks, _ = _made(reader, items, 0, messages, 0)
    ends = [*chain, end]
    counts = list(range(len(items) - len(chain), len(items) + 1))
    usable = reader.usable
    if usable is not None:
        kept = [index for index, count in enumerate(counts) if usable(messages, marks[count - 1][0])]
        if not kept:
            raise NotSplit
        ends, counts = [ends[index] for index in kept], [counts[index] for index in kept]
    entry.ends, entry.counts = ends, counts
    entry.marks = [marks[count - 1] for count in entry.counts]
    entry.items, entry.messages, entry.encoded = items, messages, Encoded().plus(b"".join(parts))
    entry.cost = _cost(entry, reader)
    return len(entry.ends) - 1


def _made(
    reader: Reader, items: list[Any], count: int, messages: list[dict[str, Any]], size: int
) -> tuple[list[bytes | memoryview], list[Mark], int]:
    """Translate `items` (the first is item `count` of the body), add their chat messages to
    `messages`, and encode them (checked for depth): the pieces, one mark per item (messages and
    bytes so far), and the bytes so far."""
    parts: list[bytes | memoryview] = []
    marks: list[Mark] = []
    made = reader.translate(items, count)
    # The depth checked once for all the messages (a one-item wrapper per message cost ~6 µs
    # each: seconds for a history of 100,000 short messages); then each encoded alone.
    check_depth([message for one in made for message in one], reader.max_depth - 1, reader.max_depth)
    for one in made:
        for message in one:
            piece = orjson.dumps(message)
            parts += [piece, b","]
            size += len(piece) + 1
        messages += one
        marks.append((len(messages), size))
    return parts, marks, size


def _cost(entry: Entry, reader: Reader) -> int:
    assert entry.items is not None and entry.messages is not None
    objects = len(entry.items) + (len(entry.messages) if reader.translates else 0)
    return 2 * len(entry.prefix) + entry.encoded.size + MESSAGE_COST * objects + END_COST * len(entry.ends)


def _split(key: tuple[str, bytes], entry: Entry, cut: int, body: bytes, reader: Reader) -> Split | None:
    assert entry.items is not None and entry.messages is not None and entry.marks is not None
    start = entry.ends[cut]
    rest = body[start:]
    found = array_close(rest, 0, entry.tail_key)
    if found is None and entry.tail_key is not None:
        found = array_close(rest, 0, None)  # the trailing fields are gone
    if found is None:
        return None
    close, tail = found
    if reader.key in tail:
        return None  # the array twice: the whole parse says what that means
    count = entry.counts[cut]
    made, size = entry.marks[cut]
    added = rest[:close].strip(WHITESPACE)
    new: list[Any] = []
    ends: list[int] = []
    parts: list[bytes | memoryview] = []
    messages = entry.messages[:made]
    marks: list[Mark] = []
    if added:
        if not added.startswith(b","):
            return None
        check_containers(added)
        new = orjson.loads(b"[" + added[1:] + b"]")
        if not isinstance(new, list) or not new:
            return None
        found_ends = compact_ends(rest, 0, new)
        if found_ends is None:  # not written compactly: tokenise the new bytes
            found_ends = item_ends(rest, 0, close)
        ends = [start + at for at in found_ends]
        parts, marks, size = _made(reader, new, count, messages, size)
    items = entry.items[:count] + new
    encoded = entry.encoded.upto(entry.marks[cut][1]).plus(b"".join(parts))
    end = start + len(rest[:close].rstrip(WHITESPACE))
    counts = list(range(count + 1, len(items) + 1))
    if len(ends) != len(new):  # not expected on bytes that parsed; then only the last end
        ends, counts, marks = [end], counts[-1:], marks[-1:]
    usable = reader.usable
    if usable is not None:
        kept = [index for index, mark in enumerate(marks) if usable(messages, mark[0])]
        ends, counts, marks = [ends[i] for i in kept], [counts[i] for i in kept], [marks[i] for i in kept]
    ends = (entry.ends[: cut + 1] + ends)[-MAX_ENDS:]
    counts = (entry.counts[: cut + 1] + counts)[-MAX_ENDS:]
    kept_marks = (entry.marks[: cut + 1] + marks)[-MAX_ENDS:]
    tail_key = next(iter(tail), None)
    after = Entry(body, entry.array_at, entry.head, tail_key, ends, counts, kept_marks, items, messages, encoded, 0)
    after.cost = _cost(after, reader)
    return Split(key, entry, entry.head, items, tail, messages, encoded, after)

"""History keys for stitching, computed once per message of a trajectory.

A history's key is a chain over its messages: `chain(0)` is a hash of the namespace and
`chain(i + 1) = H(chain(i), digest(message i))`, where a message's digest is the hash of its
canonical form (`identify.canonical`). `identify.history_keys` computes the chain from scratch;
`HistoryKeys` gives the same keys while canonicalising and hashing only the messages it has not
seen: it keeps the last history of each recent run (the parsed messages, their digests and the
chain) and compares a new request's messages with it by plain equality, which runs in C at
memory speed. Only the messages that differ (new ones, or ones whose per-request markers
moved) are canonicalised and hashed; a step costs its new messages, not its history.

Equal messages have equal canonical forms when their compared values are all strings
(`_plain`); Python's `1 == 1.0 == True` would otherwise equate values that canonicalise apart,
so a message holding other values is always hashed afresh.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from router.trajectory.identify import chain_link, chain_start, message_digest

# The parsed histories kept to compare with (about their serialised size, strings shared with
# nothing else once their request is done). A run evicted from here is hashed in full at its
# next step, then kept again: eviction costs time, never a different key.
MAX_BYTES = 32 * 1024 * 1024
MAX_PER_BUCKET = 16  # runs of one task (same namespace and first message) kept side by side
PROBE_CHARS = 256
_MESSAGE_OVERHEAD = 300  # a parsed message's dict and strings beyond its text, roughly


def last_assistant(messages: list[dict[str, Any]]) -> int:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") == "assistant":
            return index
    return -1


def _is_str(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _plain(message: dict[str, Any]) -> bool:
    """Whether every value `canonical` reads from this message is a string (or absent)."""
    if not (_is_str(message.get("role")) and _is_str(message.get("tool_call_id")) and _is_str(message.get("name"))):
        return False
    content = message.get("content")
    if isinstance(content, list):
        for part in content:
            if not (isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)):
                return False
    elif not _is_str(content):
        return False
    calls = message.get("tool_calls")
    if calls is None or calls == []:
        return True
    if not isinstance(calls, list):
        return False
    for call in calls:
        if not isinstance(call, dict) or not _is_str(call.get("id")):
            return False
        function = call.get("function")
        if function is not None and not (
            isinstance(function, dict) and _is_str(function.get("name")) and _is_str(function.get("arguments"))
        ):
            return False
    return True


class _Run:
    """The last history seen of one run: its messages, their digests and the chain over them."""

    __slots__ = ("bucket", "chains", "digests", "messages", "odd", "size", "sizes")

    def __init__(
        self,
        bucket: tuple[str, Any],
        messages: list[dict[str, Any]],
        digests: list[bytes],
        chains: list[bytes],
        sizes: list[int],
        odd: list[int],
    ) -> None:
        self.bucket = bucket
        self.messages = messages
        self.digests = digests
        self.chains = chains  # chains[i]: the key of the first i messages (len(messages) + 1 of them)
        self.sizes = sizes
        self.size = sum(sizes) + _MESSAGE_OVERHEAD * len(sizes)
        # Indexes of messages that are not plain: equality says nothing of their canonical form.
        self.odd = odd


def _first_difference(a: list[dict[str, Any]], b: list[dict[str, Any]], lo: int, hi: int) -> int:
    """The first index in [lo, hi) where the lists differ, else hi; list slices compare in C."""
    if a[lo:hi] == b[lo:hi]:
        return hi
    while lo < hi:
        mid = (lo + hi) // 2
        if a[lo : mid + 1] == b[lo : mid + 1]:
            lo = mid + 1
        else:
            hi = mid
    return lo


class HistoryKeys:
    """`identify.history_keys`, remembering what it computed for the next step of each run."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self._max_bytes = max_bytes
        self._bytes = 0
        self._buckets: dict[tuple[str, Any], list[_Run]] = {}
        self._lru: OrderedDict[int, _Run] = OrderedDict()

    def keys(self, namespace: str, messages: list[dict[str, Any]]) -> tuple[str | None, str]:
        """(the key of the history before the last assistant message, the key of the whole)."""
        previous, key, _, _ = self.keyed(namespace, messages)
        return previous, key

    def keyed(self, namespace: str, messages: list[dict[str, Any]]) -> tuple[str | None, str, str, str | None]:
        """`keys`, the key of the history's first message alone (what a rewrite keeps) and the
        key of the history before its last message (None for a history of one message: what an
        amended last message keeps, stitch.py)."""
        if not messages:
            start = chain_start(namespace).hex()
            return None, start, start, None
        bucket = (namespace, _probe(messages[0]))
        fresh: dict[int, tuple[bytes, int]] = {}  # digests computed for this request
        best, matched = None, 0
        for run in self._buckets.get(bucket, ()):
            count = self._matching(run, messages, fresh)
            if count > matched:
                best, matched = run, count
        if best is None:
            digests: list[bytes] = []
            sizes: list[int] = []
            chains = [chain_start(namespace)]
            odd: list[int] = []
        else:
            digests, sizes, chains = best.digests[:matched], best.sizes[:matched], best.chains[: matched + 1]
            odd = [i for i in best.odd if i < matched]
        for index in range(matched, len(messages)):
            digest, size = fresh.get(index) or message_digest(messages[index])
            digests.append(digest)
            sizes.append(size)
            chains.append(chain_link(chains[-1], digest))
            if not _plain(messages[index]):
                odd.append(index)
        if best is not None and matched == len(best.messages):
            self._drop(best)  # this request continues (or repeats) that history: keep the longer one
        self._keep(_Run(bucket, messages, digests, chains, sizes, odd))
        assistant = last_assistant(messages)
        previous = chains[assistant].hex() if assistant >= 0 else None
        return previous, chains[-1].hex(), chains[1].hex(), chains[-2].hex() if len(messages) > 1 else None

    @staticmethod
    def _matching(run: _Run, messages: list[dict[str, Any]], fresh: dict[int, tuple[bytes, int]]) -> int:
        """How many leading messages have the canonical forms of the run's kept history."""
        known = run.messages
        end = min(len(known), len(messages))
        odd = iter(run.odd)
        next_odd = next(odd, end)
        index = 0
        while index < end:
            index = _first_difference(messages, known, index, min(end, next_odd))
            if index >= end:
                break
            if index == next_odd:
                next_odd = next(odd, end)
            # Not equal (a marker moved, a list of parts became a string…), or not plain: compare
            # the canonical forms.
            if index not in fresh:
                fresh[index] = message_digest(messages[index])
            if fresh[index][0] != run.digests[index]:
                break
            index += 1
        return index

    def _keep(self, run: _Run) -> None:
        if run.size > self._max_bytes:
            return
        runs = self._buckets.setdefault(run.bucket, [])
        runs.insert(0, run)
        self._lru[id(run)] = run
        self._bytes += run.size
        if len(runs) > MAX_PER_BUCKET:
            self._drop(runs[-1])
        while self._bytes > self._max_bytes and self._lru:
            self._drop(next(iter(self._lru.values())))

    def _drop(self, run: _Run) -> None:
        if self._lru.pop(id(run), None) is None:
            return
        self._bytes -= run.size
        runs = self._buckets[run.bucket]
        runs.remove(run)
        if not runs:
            del self._buckets[run.bucket]

    @property
    def kept_bytes(self) -> int:
        return self._bytes


def _probe(first: dict[str, Any]) -> Any:
    """A cheap sketch of a history's first message, to find the runs it may continue. Messages
    with one canonical form may sketch apart (a list of parts, say): that costs a full hash."""
    role = first.get("role")
    role = role if isinstance(role, str) else None
    content = first.get("content")
    if isinstance(content, str):
        return (role, len(content), content[:PROBE_CHARS])
    return (role, None, None)

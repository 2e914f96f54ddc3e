"""Anchored search: the cheap part of each rule (a label word, a street type, a listed name)
is looked for in one pass over the text (hyperscan; `re` without it), and the rule's full
pattern runs only in a window around each anchor. Python's `re` tries a pattern at every
position of the text, which is what made scanning for names and addresses cost hundreds of ms a
MiB; windows around anchors are a small part of most texts.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from router.privacy.detector import Finding
from router.privacy.taken import Taken

_CONTINUATION = bytes(range(0x80, 0xC0))  # UTF-8 continuation bytes
# What may begin a line of a record before its text: a reply's quote marks or a bullet (`> 4410
# Sørlandsveien 17`, `>> Ana Lima`, `• Suite 292`, `- Suite 292`), as in an e-mail thread, a
# pasted list or a Markdown one; a bullet lost to a text decoded with the wrong codec (`•`'s three
# UTF-8 bytes each read as `?` or as U+FFFD). A hyphen, an asterisk, a plus or a question mark is a
# bullet only before a space (`-12` and `*args` are not). No look-arounds: hyperscan reads it too.
LINE_MARKS = "(?:(?:[>•·▪◦‣\ufffd]|[-*+–][ \t]|\\?{1,3}[ \t])[ \t]*)*"


@dataclass(frozen=True)
class Anchor:
    expression: str  # a hyperscan expression (no look-arounds, no back-references)
    caseless: bool = False


class Anchors:
    """Where each of a set of anchors matches: the end offsets (characters) of its matches."""

    def __init__(self, anchors: Sequence[Anchor]) -> None:
        self._anchors = tuple(anchors)
        self._database: Any = None
        self._fallback: list[re.Pattern[str]] | None = None
        self._compiled = False

    def _compile(self) -> None:
        self._compiled = True
        try:
            import hyperscan
        except ImportError:
            self._fallback = [
                re.compile(a.expression, re.MULTILINE | (re.IGNORECASE if a.caseless else 0)) for a in self._anchors
            ]
            return
        database = hyperscan.Database()
        flags = [
            hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_UTF8 | (hyperscan.HS_FLAG_CASELESS if a.caseless else 0)
            for a in self._anchors
        ]
        database.compile(
            expressions=[a.expression.encode() for a in self._anchors],
            ids=list(range(len(self._anchors))),
            elements=len(self._anchors),
            flags=flags,
        )
        self._database = database

    def expressions(self) -> list[tuple[bytes, bool]]:
        """Each anchor's hyperscan expression and whether it ignores case, for a caller that
        scans for them in its own database (`ends(scanned=…)`) with `HS_FLAG_MULTILINE` and
        `HS_FLAG_UTF8`, as `ends` does."""
        return [(a.expression.encode(), a.caseless) for a in self._anchors]

    def ends(
        self,
        text: str,
        keep: Callable[[bytes, int], bool] | None = None,
        data: bytes | None = None,
        scanned: dict[int, list[int]] | None = None,
        continuation: list[int] | None = None,
    ) -> dict[int, list[int]]:
        """Anchor index -> the character offsets where its matches end, ascending. `keep`: a
        cheap test of a match's end in the UTF-8 bytes, before offsets are mapped to characters
        (a walk over the text). `scanned`: the byte offsets where each anchor's matches end, when
        the caller's own hyperscan pass found them (with `data`); `continuation`: the data's
        continuation bytes when the caller has them (`continuation_bytes`)."""
        if not self._compiled and scanned is None:
            self._compile()
        hits: dict[int, list[int]] = {}
        if self._fallback is not None and scanned is None:
            encoded = text.encode("utf-8", "surrogatepass") if keep is not None else b""
            for index, pattern in enumerate(self._fallback):
                ends = [m.end() for m in pattern.finditer(text)]
                if keep is not None:
                    ends = [e for e in ends if keep(encoded, len(text[:e].encode("utf-8", "surrogatepass")))]
                if ends:
                    hits[index] = ends
            return hits
        if data is None:
            data = utf8(text)

        def on_match(index: int, _start: int, end: int, _flags: int, _context: object) -> None:
            hits.setdefault(index, []).append(end)

        if scanned is None:
            self._database.scan(data, match_event_handler=on_match)
        else:
            hits = scanned
        if keep is not None:
            hits = {i: kept for i, ends in hits.items() if (kept := [e for e in ends if keep(data, e)])}
        if len(data) != len(text) and hits:
            positions = sorted({e for ends in hits.values() for e in ends})
            mapping = char_offsets(data, positions, len(text), continuation)
            hits = {i: [mapping[e] for e in ends] for i, ends in hits.items()}
        return {i: sorted(ends) for i, ends in hits.items()}


# Characters encoded at once in a long text that is not all ASCII: Python encodes an ASCII str
# by copying it, any other character by character (~1.4 ms a MiB for a log with a few `é` or
# `…` in it); a slice with no such character is an ASCII str, so most of the text is copied.
_ENCODE_CHUNK = 4096


def utf8(text: str) -> bytes:
    """The text's UTF-8 bytes; lone surrogates (JSON's \\ud800 escapes) passed through."""
    try:
        if len(text) <= 2 * _ENCODE_CHUNK or text.isascii():
            return text.encode()  # the fast path: ~10x faster than with an error handler
        return b"".join([text[at : at + _ENCODE_CHUNK].encode() for at in range(0, len(text), _ENCODE_CHUNK)])
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


# 1 for a UTF-8 continuation byte, 0 for any other: its positions are found with `find`.
_CONTINUATION_MARKS = bytes(1 if 0x80 <= byte < 0xC0 else 0 for byte in range(256))


# Bytes tested at once for non-ASCII: an ASCII block (most of a log or of source) is skipped by
# `isascii` (C, word at a time), which costs a fraction of translating it byte by byte.
_ASCII_BLOCK = 4096


def continuation_bytes(data: bytes, chars: int) -> list[int] | None:
    """The offsets of the UTF-8 continuation bytes in `data` (the UTF-8 of a text of `chars`
    characters), ascending, when `char_offsets` counts them (mostly ASCII text), else None: found
    once for the passes over one text that map offsets."""
    return _continuation_bytes(data) if (len(data) - chars) * 64 <= len(data) else None


def _continuation_bytes(data: bytes) -> list[int]:
    """The offsets of the UTF-8 continuation bytes in `data`, ascending."""
    continuation: list[int] = []
    for block in range(0, len(data), _ASCII_BLOCK):
        chunk = data[block : block + _ASCII_BLOCK]
        if chunk.isascii():
            continue
        marks = chunk.translate(_CONTINUATION_MARKS)
        at = marks.find(1)
        while at >= 0:
            continuation.append(block + at)
            at = marks.find(1, at + 1)
    return continuation


def char_offsets(
    data: bytes, positions: list[int], chars: int, continuation: list[int] | None = None
) -> dict[int, int]:
    """Byte offset -> character offset for the given positions (character boundaries) in
    `data`, the UTF-8 of a text of `chars` characters. A position's character offset is the
    position less the continuation bytes before it. Mostly ASCII text (a few `é` or `…` in a
    log) has a few continuation bytes, found once and counted by bisection; other text is
    walked once, the bytes between two positions counted without their continuation bytes.
    `continuation`: `continuation_bytes(data, chars)`, when the caller has it."""
    offsets: dict[int, int] = {}
    extra = len(data) - chars  # how many continuation bytes the data holds
    if extra * 64 <= len(data):
        if continuation is None:
            continuation = _continuation_bytes(data)
        for position in positions:
            offsets[position] = position - bisect.bisect_left(continuation, position)
        return offsets
    byte = char = 0
    for position in sorted(set(positions)):
        char += len(data[byte:position].translate(None, _CONTINUATION))
        offsets[position] = char
        byte = position
    return offsets


def windows(text: str, ends: list[int], back: int, forward: int) -> Iterator[tuple[int, int]]:
    """Merged windows [end - back, end + forward) around the anchors' ends, each carried on to
    its line's end (a pattern cut short by a window would match a truncated value)."""
    size = len(text)
    return merged(text, ((max(0, end - back), min(size, end + forward)) for end in ends))


def merged(text: str, spans: Iterable[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """`spans` (by ascending stop), each carried on to its line's end, overlapping ones merged."""
    low = high = -1
    size = len(text)
    for start, stop in spans:
        newline = text.find("\n", stop, stop + 200)
        stop = newline if newline >= 0 else min(size, stop + 200)
        if start <= high:
            low, high = min(low, start), max(high, stop)
            continue
        if high >= 0:
            yield low, high
        low, high = start, stop
    if high >= 0:
        yield low, high


def search(pattern: re.Pattern[str], text: str, spans: Iterator[tuple[int, int]]) -> Iterator[re.Match[str]]:
    """The pattern's matches inside the windows (look-behinds still see the text before them)."""
    last = -1
    for low, high in spans:
        for match in pattern.finditer(text, low, high):
            if match.start() >= last:
                last = match.end()
                yield match


def longest_first(kind: str, text: str, spans: Iterable[tuple[int, int, str]]) -> list[Finding]:
    """The findings of `kind` at `spans` (start, end, rule), non-overlapping, earliest first:
    where two overlap the longer is kept (`Dr. Ana Lima` as a title over `Ana Lima` in free
    text; a whole street line over its house number)."""
    taken = Taken()
    kept = [
        Finding(kind, text[start:end], start, end, rule)
        for start, end, rule in sorted(spans, key=lambda span: (span[0] - span[1], span[0]))
        if taken.take(start, end)
    ]
    return sorted(kept, key=lambda finding: finding.start)

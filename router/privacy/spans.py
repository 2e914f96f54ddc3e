"""The candidates' spans from hyperscan's pass (detect.py): collected per expression as its
matches are reported, and mapped from byte offsets to character offsets in mostly ASCII text.

Compiled with mypyc where the machine can build (router/native_build.py): value-dense text
reports ~40 matches a KB, each a call of the handler, and maps each span's two offsets.
"""

from __future__ import annotations

import bisect


class Hits:
    """hyperscan's match handler for one scan: per expression (below `columns_from`) its
    matches' spans (byte offsets), overlapping or touching ones merged as they come (hyperscan
    reports them ordered by end); per anchor of the column pass (from `columns_from` on) the
    offsets where its matches end. An expression that does not track where its matches start
    reports start 0: its match starts at most `keyword_span[index]` bytes before its end."""

    def __init__(self, keyword_span: list[int], columns_from: int) -> None:
        self.keyword_span = keyword_span
        self.columns_from = columns_from
        self.spans: dict[int, list[tuple[int, int]]] = {}
        self.column_ends: dict[int, list[int]] = {}

    def __call__(self, index: int, start: int, end: int, _flags: int, _context: object) -> None:
        if index >= self.columns_from:
            anchor = index - self.columns_from
            ends = self.column_ends.get(anchor)
            if ends is None:
                self.column_ends[anchor] = [end]
            else:
                ends.append(end)
            return
        if not start:
            span = self.keyword_span[index]
            if span:
                start = end - span if end > span else 0
        spans = self.spans.get(index)
        if spans is None:
            self.spans[index] = [(start, end)]
            return
        last_start, last_end = spans[-1]
        if start <= last_end:
            if end > last_end:
                spans[-1] = (last_start if last_start < start else start, end)
        else:
            spans.append((start, end))


def char_spans(hits: dict[int, list[tuple[int, int]]], continuation: list[int]) -> dict[int, list[tuple[int, int]]]:
    """`hits` with each byte offset made a character offset: the offset less the continuation
    bytes (`continuation`, ascending) before it, as `anchors.char_offsets` counts them. A
    list's spans are merged and ordered, so its offsets mostly grow: the continuation bytes
    before each are counted on from the last offset's (searched for again where one is lower)."""
    mapped: dict[int, list[tuple[int, int]]] = {}
    # Detectors that share a core share its list (detect.py): each list is mapped once (value-
    # dense text has ~65 lists a 64 KiB slice, ~47 of them distinct; ~40% of the spans mapped
    # were mapped already).
    done: dict[int, list[tuple[int, int]]] = {}
    count = len(continuation)
    for index, spans in hits.items():
        seen = done.get(id(spans))
        if seen is not None:
            mapped[index] = seen
            continue
        out: list[tuple[int, int]] = []
        before = 0  # continuation bytes before the last offset mapped
        last = 0
        for start, end in spans:
            if start < last:
                before = bisect.bisect_left(continuation, start)
            while before < count and continuation[before] < start:
                before += 1
            char_start = start - before
            if end < start:
                before = bisect.bisect_left(continuation, end)
            while before < count and continuation[before] < end:
                before += 1
            out.append((char_start, end - before))
            last = end
        mapped[index] = done[id(spans)] = out
    return mapped

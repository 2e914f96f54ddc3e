"""Spans kept so far (`Taken`): where detectors and finders keep non-overlapping findings.

Compiled with mypyc where the machine can build (router/native_build.py): the scan asks it
whether a candidate overlaps a kept finding tens of thousands of times a MiB of value-dense
text, and the compiled windows loop (windows.py) calls it natively.
"""

from __future__ import annotations

import bisect
from typing import Final


class Taken:
    """Spans kept so far, sorted and non-overlapping: whether a new one overlaps any of them is
    a binary search, not a pass over all. They are held in blocks of at most `_BLOCK`, so that
    keeping a span out of order moves one block's entries, not every later one's (a text of
    100k values, kept longest first, stays linear)."""

    _BLOCK: Final = 512

    def __init__(self) -> None:
        self._firsts: list[int] = []  # each block's first start
        self._starts: list[list[int]] = []
        self._ends: list[list[int]] = []

    def _locate(self, start: int) -> tuple[int, int]:
        """The block, and the place in it, where a span starting at `start` goes."""
        block = max(0, bisect.bisect_right(self._firsts, start) - 1)
        return block, bisect.bisect_left(self._starts[block], start)

    def overlaps(self, start: int, end: int) -> bool:
        if not self._firsts:
            return False
        if start > self._starts[-1][-1]:  # after every kept span's start: only the last can overlap
            return self._ends[-1][-1] > start
        block, position = self._locate(start)
        starts, ends = self._starts[block], self._ends[block]
        if position > 0:
            if ends[position - 1] > start:
                return True
        elif block > 0 and self._ends[block - 1][-1] > start:
            return True
        if position < len(starts):
            return starts[position] < end
        return block + 1 < len(self._firsts) and self._firsts[block + 1] < end

    def take(self, start: int, end: int) -> bool:
        """Keep the span unless it overlaps a kept one; whether it was kept."""
        if end <= start:
            return False
        if self._firsts and start > self._starts[-1][-1]:  # after every kept span: the usual case
            if self._ends[-1][-1] > start:
                return False
            self._starts[-1].append(start)
            self._ends[-1].append(end)
            if len(self._starts[-1]) > self._BLOCK:
                self._split(len(self._firsts) - 1)
            return True
        if self.overlaps(start, end):
            return False
        if not self._firsts:
            self._firsts.append(start)
            self._starts.append([start])
            self._ends.append([end])
            return True
        block, position = self._locate(start)
        starts, ends = self._starts[block], self._ends[block]
        starts.insert(position, start)
        ends.insert(position, end)
        if position == 0:
            self._firsts[block] = start
        if len(starts) > self._BLOCK:
            self._split(block)
        return True

    def _split(self, block: int) -> None:
        starts, ends = self._starts[block], self._ends[block]
        half = len(starts) // 2
        self._starts.insert(block + 1, starts[half:])
        self._ends.insert(block + 1, ends[half:])
        self._firsts.insert(block + 1, starts[half])
        del starts[half:], ends[half:]

"""The exact search in the windows around one detector's candidates (detect.py): the loop that
value-dense text spends most of a scan in.

Compiled with mypyc where the machine can build (router/native_build.py): it is pure over the
text, the candidates' spans, the detector's patterns and callables and the kept findings
(taken.py), and runs the same in pure Python.
"""

from __future__ import annotations

import re
from typing import Final

from router.privacy.detector import Detector
from router.privacy.taken import Taken

# Characters of context the exact patterns' look-arounds read on each side of a candidate.
MARGIN: Final = 16
# The longest head (Detector.head) a pattern begins with.
HEAD_SPAN: Final = 64


def windows(detector: Detector, text: str, spans: list[tuple[int, int]], taken: Taken) -> list[tuple[int, int, str]]:
    """The detector's validated matches (start, end, value) in the window of each of its
    candidate spans (widened by its lead, reach and the look-arounds' margin; a span's window
    is read only where its gate allows) that overlap no finding in `taken`. As `_exact` in
    detect.py: a match that fails is retried one character on, so that a longer look-alike does
    not hide a value inside it and the result does not depend on where the window begins.

    One call a detector, not one a window: value-dense text has ~40 windows a KB, and the
    per-window call, its attribute reads and its set of rejected values cost as much as the
    searches in most of them. The rejected values are shared by the windows (validation reads
    the value alone), so a value seen in two windows is validated once."""
    found: list[tuple[int, int, str]] = []
    size = len(text)
    lead = detector.lead + MARGIN
    reach = detector.reach + MARGIN
    gate = detector.gate
    follows = detector.follows
    head = detector.head
    skip_to = detector.skip_to
    pattern = detector.pattern
    group = detector.group
    value_span = detector.value_span
    validate = detector.validate
    check = detector.check
    rejected: set[str] = set()  # values that failed validation (pathological runs repeat them)
    match: re.Match[str] | None
    for start, end in spans:
        low = start - lead if start > lead else 0
        high = end + reach if end + reach < size else size
        if gate is not None and not gate(text, low, high):
            continue
        before = high if follows else end
        limit = before + HEAD_SPAN if before + HEAD_SPAN < high else high
        position = low
        while position < high:
            if head is not None:
                found_head = head.search(text, position, limit)
                if found_head is None:
                    break
                head_start = found_head.start()
                if head_start >= before:
                    break
                match = pattern.match(text, head_start, high)
                if match is None:
                    position = head_start + 1
                    continue
            else:
                if skip_to is not None:
                    found_skip = skip_to.search(text, position, limit)
                    if found_skip is None:
                        break
                    position = found_skip.start()
                    if position >= before:
                        break
                match = pattern.search(text, position, high)
                if match is None or match.start() >= before:
                    break
            if value_span is None:
                value_start, value_end = match.span(group)
            else:
                value_start, value_end = value_span(match)
            value = text[value_start:value_end]
            if not value or value in rejected or taken.overlaps(value_start, value_end):
                position = match.start() + 1
                continue
            if validate is not None and not validate(value):
                rejected.add(value)
                position = match.start() + 1
                continue
            if check is None or check(text, value_start, value_end):
                found.append((value_start, value_end, value))
                position = max(match.end(), match.start() + 1)
            else:
                position = match.start() + 1
    return found


def starts_of(detector: Detector, text: str, spans: list[tuple[int, int]]) -> list[list[int]]:
    """Per candidate span, where in its window (as `windows` widens it) `detector.starts`
    matches: the places a match of any detector sharing the core may begin."""
    starts = detector.starts
    assert starts is not None
    size = len(text)
    lead = detector.lead + MARGIN
    reach = detector.reach + MARGIN
    out: list[list[int]] = []
    for start, end in spans:
        low = start - lead if start > lead else 0
        high = end + reach if end + reach < size else size
        out.append([found.start() for found in starts.finditer(text, low, high)])
    return out


def from_starts(
    detector: Detector, text: str, spans: list[tuple[int, int]], taken: Taken, starts: list[list[int]]
) -> list[tuple[int, int, str]]:
    """As `windows` for a detector whose value follows its core, with no head, gate or value
    span, whose matches begin only where `detector.starts` does (`starts`: `starts_of` for its
    spans): the pattern is matched at those places instead of searched for across the window.
    The same values in the same places (a search's leftmost match is the first place where a
    match begins); the windows' starts are found once for all the detectors of the core."""
    found: list[tuple[int, int, str]] = []
    size = len(text)
    reach = detector.reach + MARGIN
    pattern = detector.pattern
    group = detector.group
    validate = detector.validate
    check = detector.check
    rejected: set[str] = set()
    match: re.Match[str] | None
    for index, (_start, end) in enumerate(spans):
        high = end + reach if end + reach < size else size
        position = 0
        for at in starts[index]:
            if at < position:
                continue
            match = pattern.match(text, at, high)
            if match is None:
                continue
            value_start, value_end = match.span(group)
            value = text[value_start:value_end]
            if not value or value in rejected or taken.overlaps(value_start, value_end):
                position = at + 1
                continue
            if validate is not None and not validate(value):
                rejected.add(value)
                position = at + 1
                continue
            if check is None or check(text, value_start, value_end):
                found.append((value_start, value_end, value))
                position = max(match.end(), at + 1)
            else:
                position = at + 1
    return found

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


def windows(
    detector: Detector,
    text: str,
    spans: list[tuple[int, int]],
    taken: Taken,
    starts: list[list[int]] | None = None,
) -> list[tuple[int, int, str]]:
    """The detector's validated matches (start, end, value) in the window of each of its
    candidate spans (widened by its lead, reach and the look-arounds' margin; a span's window
    is read only where its gate allows) that overlap no finding in `taken`. As `_exact` in
    detect.py: a match that fails is retried one character on, so that a longer look-alike does
    not hide a value inside it and the result does not depend on where the window begins.
    `starts` (`starts_of` for these spans, for a detector with `Detector.starts`): per window,
    the only places a match may begin; the pattern is matched there instead of searched for.

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
    places: list[int] = []
    for index, (start, end) in enumerate(spans):
        low = start - lead if start > lead else 0
        high = end + reach if end + reach < size else size
        if gate is not None and not gate(text, low, high):
            continue
        before = high if follows else end
        limit = before + HEAD_SPAN if before + HEAD_SPAN < high else high
        position = low
        if starts is not None:
            places = starts[index]
        next_place = 0
        while position < high:
            if starts is not None:
                # The next place a match may begin, at or after `position` (ascending).
                while next_place < len(places) and places[next_place] < position:
                    next_place += 1
                if next_place == len(places) or places[next_place] >= before:
                    break
                match = pattern.match(text, places[next_place], high)
                if match is None:
                    position = places[next_place] + 1
                    continue
            elif head is not None:
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

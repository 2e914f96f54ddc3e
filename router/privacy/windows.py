"""The exact search in the windows around one detector's candidates (detect.py): the loop that
value-dense text spends most of a scan in.

Compiled with mypyc where the machine can build (router/native_build.py): it is pure over the
text, the candidates' spans, the detector's patterns and callables and the kept findings
(taken.py), and runs the same in pure Python.
"""

from __future__ import annotations

import re
from time import sleep
from typing import Final

from router.privacy.detector import Detector
from router.privacy.taken import Taken

# Characters of context the exact patterns' look-arounds read on each side of a candidate.
MARGIN: Final = 16
# The longest head (Detector.head) a pattern begins with.
HEAD_SPAN: Final = 64
# How many times its length a window's refused matches may cost (see `windows`), a refusal
# counted as the characters its match covers and this many more (its validation or check).
_RETRY_BUDGET: Final = 4
_REFUSAL_COST: Final = 128
# Its budget has this much besides, so that a small window's few refusals never reach it.
_SMALL_WINDOW: Final = 4096
# Every this many matches tried, the GIL is let go for a moment (`sleep(0)`): compiled, the
# loop never lets it go on its own, and a scan in a worker thread of megabytes of values (8 MB
# of IP addresses: 10 s) would hold every other request of the gateway's event loop meanwhile.
YIELD_EVERY: Final = 1024


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
    # A match of the head (or first strings) that begins before `before` reads at most this far
    # past it (the head's own reach where that is shorter: the search stops there).
    head_span = HEAD_SPAN if detector.head_span is None else detector.head_span
    pattern = detector.pattern
    group = detector.group
    value_span = detector.value_span
    validate = detector.validate
    check = detector.check
    rejected: set[str] = set()  # values that failed validation (pathological runs repeat them)
    if gate is None:  # (as `starts_of` joins them: its lists are per joined span)
        spans = _joined(spans, lead)
    match: re.Match[str] | None
    places: list[int] = []
    tried = 0
    for index, (start, end) in enumerate(spans):
        low = start - lead if start > lead else 0
        high = end + reach if end + reach < size else size
        if gate is not None and not gate(text, low, high):
            continue
        # The work the window's refused matches may cost (the characters each covers and a
        # validation's worth) before a refused match is passed whole rather than retried one
        # character on: a run of names with no space between (`pwd=pwd=…`) made each name's
        # match read the same 4 KB of value again (25 s a MB), digits in pairs (`12 12 12 …`)
        # each pair a phone's candidate checked (4 s a MB). Real text's refused matches are
        # few and overlap little; this bounds a window's work at a few times its length.
        budget = _RETRY_BUDGET * (high - low) + _SMALL_WINDOW
        before = high if follows else end
        limit = before + head_span if before + head_span < high else high
        position = low
        if starts is not None:
            places = starts[index]
        next_place = 0
        while position < high:
            tried += 1
            if tried % YIELD_EVERY == 0:
                sleep(0)
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
                pass
            elif validate is not None and not validate(value):
                rejected.add(value)
            elif check is None or check(text, value_start, value_end):
                found.append((value_start, value_end, value))
                position = max(match.end(), match.start() + 1)
                continue
            budget -= match.end() - match.start() + _REFUSAL_COST
            position = match.start() + 1 if budget > 0 else max(match.end(), match.start() + 1)
    return found


def _joined(spans: list[tuple[int, int]], lead: int) -> list[tuple[int, int]]:
    """Spans joined where the places their matches may begin (from `lead` before a span to its
    end) overlap: the joined window is searched once where they were searched each, and finds
    what each would (a match begins at most `lead` before its core). Apart, a name repeated
    with no value (`pwd=pwd=…`, each name a candidate 4 characters from the next, with a window
    of 290) read each stretch of text once per window that covered it. Spans further apart stay
    apart: joined, the text between them would be searched too."""
    if len(spans) < 2:
        return spans
    out: list[tuple[int, int]] = []
    first, last = spans[0]
    for start, end in spans[1:]:
        if start - lead <= last:
            last = end
        else:
            out.append((first, last))
            first, last = start, end
    out.append((first, last))
    return out


def starts_of(detector: Detector, text: str, spans: list[tuple[int, int]]) -> list[list[int]]:
    """Per candidate span, where in its window (as `windows` widens it) `detector.starts`
    matches: the places a match of any detector sharing the core may begin."""
    starts = detector.starts
    assert starts is not None
    size = len(text)
    lead = detector.lead + MARGIN
    reach = detector.reach + MARGIN
    out: list[list[int]] = []
    if detector.gate is None:
        spans = _joined(spans, lead)
    for start, end in spans:
        low = start - lead if start > lead else 0
        high = end + reach if end + reach < size else size
        out.append([found.start() for found in starts.finditer(text, low, high)])
    return out

"""A text with some escapes read as the characters they stand for, scanned, and the findings
placed back on the text as written: the view `escaped_letters.py` and `escaped_markup.py` each
build (JSON's `\\u00e1` for a letter; `&quot;` or `\\u0022` for a quote)."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

from router.privacy.detector import Finding

# (the text, an escape's match) -> the character it stands for, or None to leave it as written
Decode = Callable[[str, "re.Match[str]"], str | None]


def with_decoded(
    text: str, pattern: re.Pattern[str], decode: Decode, scan: Callable[[str], list[Finding]]
) -> list[Finding] | None:
    """`scan` of `text` with the matches of `pattern` that `decode` reads replaced by their
    character, its findings placed back in `text` (a value holding an escape keeps it whole);
    None when no escape was read."""
    parts: list[str] = []
    after: list[int] = []  # where in the view each decoded character ends
    removed: list[int] = []  # the characters taken out up to and with it
    widths: dict[int, int] = {}  # a decoded character's place in the view -> its escape's length
    last = total = 0
    for match in pattern.finditer(text):
        char = decode(text, match)
        if char is None:
            continue
        escape = match.group()
        parts += (text[last : match.start()], char)
        position = match.start() - total
        widths[position] = len(escape)
        total += len(escape) - 1
        after.append(position + 1)
        removed.append(total)
        last = match.end()
    if not parts:
        return None
    parts.append(text[last:])

    def placed(position: int) -> int:  # a character of the view -> where it begins in `text`
        index = bisect.bisect_right(after, position) - 1
        return position + (removed[index] if index >= 0 else 0)

    out = []
    for finding in scan("".join(parts)):
        last_char = finding.end - 1
        start, end = placed(finding.start), placed(last_char) + widths.get(last_char, 1)
        out.append(Finding(finding.type, text[start:end], start, end, finding.rule))
    return out

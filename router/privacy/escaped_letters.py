"""Letters outside ASCII as JSON written ASCII-only escapes them (`Fern\\u00e1ndez`,
`j\\u00fcrgen@…`, as Python's `json.dumps` writes them), read as the letters: otherwise a name,
an address or an e-mail address ends at the escape and its rest reaches the cloud."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

from router.privacy.detector import Finding

LETTER_ESCAPED = re.compile(r"\\u([0-9a-fA-F]{4})")


def with_letters(text: str, scan: Callable[[str], list[Finding]]) -> list[Finding] | None:
    """`scan` of `text` with its escaped letters (`\\u00e1`) read as the letters, its findings
    placed back in `text` (a value holding an escape keeps it whole); None when it has none."""
    parts: list[str] = []
    after: list[int] = []  # where in the view each letter ends
    removed: list[int] = []  # the characters taken out up to and with it
    letters: set[int] = set()  # where in the view the letters are
    last = total = 0
    for match in LETTER_ESCAPED.finditer(text):
        char = chr(int(match.group(1), 16))
        if not char.isalpha() or char.isascii():
            continue
        if _escaped_backslash_before(text, match.start()):
            continue  # `\\\\u00e1`: an escaped backslash, then the text `u00e1`
        parts += (text[last : match.start()], char)
        position = match.start() - total
        letters.add(position)
        total += 5
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
        start, end = placed(finding.start), placed(last_char) + (6 if last_char in letters else 1)
        out.append(Finding(finding.type, text[start:end], start, end, finding.rule))
    return out


def _escaped_backslash_before(text: str, at: int) -> bool:
    """Whether the backslash at `at` is the second of an escaped pair (an odd run before it),
    counted backwards: copying the text before each escape made a text of many escapes (all of
    a non-Latin script's letters are) quadratic."""
    before = at
    while before > 0 and text[before - 1] == "\\":
        before -= 1
    return (at - before) % 2 == 1

"""Letters outside ASCII as JSON written ASCII-only escapes them (`Fern\\u00e1ndez`,
`j\\u00fcrgen@…`, as Python's `json.dumps` writes them), read as the letters: otherwise a name,
an address or an e-mail address ends at the escape and its rest reaches the cloud."""

from __future__ import annotations

import re
from collections.abc import Callable

from router.privacy.detector import Finding
from router.privacy.escape_view import with_decoded

LETTER_ESCAPED = re.compile(r"\\u([0-9a-fA-F]{4})")


def _letter(text: str, match: re.Match[str]) -> str | None:
    char = chr(int(match.group(1), 16))
    if not char.isalpha() or char.isascii():
        return None
    if _escaped_backslash_before(text, match.start()):
        return None  # `\\\\u00e1`: an escaped backslash, then the text `u00e1`
    return char


def with_letters(text: str, scan: Callable[[str], list[Finding]]) -> list[Finding] | None:
    """`scan` of `text` with its escaped letters (`\\u00e1`) read as the letters, its findings
    placed back in `text` (a value holding an escape keeps it whole); None when it has none."""
    return with_decoded(text, LETTER_ESCAPED, _letter, scan)


def _escaped_backslash_before(text: str, at: int) -> bool:
    """Whether the backslash at `at` is the second of an escaped pair (an odd run before it),
    counted backwards: copying the text before each escape made a text of many escapes (all of
    a non-Latin script's letters are) quadratic."""
    before = at
    while before > 0 and text[before - 1] == "\\":
        before -= 1
    return (at - before) % 2 == 1

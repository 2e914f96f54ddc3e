"""Quotes and brackets written as HTML entities (`&quot;password&quot;: &quot;X&quot;`, a
config shown in a page or a report) or as JSON's `\\u` escapes of them (`\\u0022`, Go's
`\\u003c`), read as the characters: otherwise no name-and-value rule sees the quotes around a
value, and it reaches the cloud."""

from __future__ import annotations

import re
from collections.abc import Callable

from router.privacy.detector import Finding
from router.privacy.escape_view import with_decoded

_ENTITY = re.compile(
    r"&(?:quot|apos|lt|gt|amp|#0*34|#0*39|#0*60|#0*62|#0*38|#[xX]0*2[27]|#[xX]0*3[cCeE]|#[xX]0*26);"
    r"|\\u00(?:22|27|3[cCeE]|26)"
)
_CHARS = {"quot": '"', "apos": "'", "lt": "<", "gt": ">", "amp": "&"}


# What the detectors' hyperscan pass looks for to tell that a text holds an escaped quote or
# bracket (detect.py reads the text again with them read as the characters only then): in that
# pass it costs next to nothing, where a search of its own read every text (~1 ms a MiB).
CORE = rb"&(?:quot|apos|lt|gt|#0*3[49]|#0*6[02]|#[xX]0*2[27]|#[xX]0*3[cCeE]);|\\u00(?:22|27|3[cCeE])"
_CORE = re.compile(CORE.decode())


def may_hold(text: str) -> bool:
    """Whether `text` holds an escaped quote or bracket (where no hyperscan pass tells it)."""
    return _CORE.search(text) is not None


def _char(escape: str) -> str:
    if escape.startswith("\\u"):
        return chr(int(escape[2:], 16))
    name = escape[1:-1]
    if name.startswith("#"):
        return chr(int(name[2:], 16) if name[1] in "xX" else int(name[1:]))
    return _CHARS[name]


def _decoded(_text: str, match: re.Match[str]) -> str:
    return _char(match.group())


def with_entities(text: str, scan: Callable[[str], list[Finding]]) -> list[Finding] | None:
    """`scan` of `text` with its escaped quotes and brackets read as the characters, the
    findings placed back in `text` (a value holding an escape keeps it whole); None when it has
    none."""
    return with_decoded(text, _ENTITY, _decoded, scan)

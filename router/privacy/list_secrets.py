"""Secrets listed under a name in the plural: a YAML block list or a JSON array, one item a
line, under `passwords`, `passphrases`, `api_keys`, `access_keys`, `secret_keys`, `api_tokens`
(`static_passwords:` then `- "…"` lines; `"api_keys": [` then `"…",` lines).

The name rules read one value after a name; here each item of the list is a value. The core is
the name and the list's opening, so text without one costs nothing; each item line after it is
matched (the items follow their core) and stands when every line between it and the name is an
item of the list. A password list's items must look like passwords (credentials.password_value),
a key or token list's like generated keys (validators.service_key), so lists of names,
references or words (`- DB_PASSWORD`, `- ${PASSWORD}`) are none; a bare `tokens:` list (a
model's special tokens) is not read.
"""

from __future__ import annotations

import re

from router.privacy import validators
from router.privacy.credentials import password_value
from router.privacy.detector import Detector

_PASSWORDS = r"pass(?:word|wd|phrase)s"
_KEYS = r"(?:api|access|secret|private)[_-]?keys|(?:api|access|auth)[_-]?tokens"
# The list's name at the end of its line: YAML's `name:`, JSON's `"name": [`.
_HEADER = re.compile(
    r"(?i)[\w.-]*?(?:(?P<passwords>" + _PASSWORDS + r")|" + _KEYS + r")[\"']?[ \t]*:[ \t]*\[?[ \t]*\r?$"
)
# One item on its line: YAML's `- value` (quoted or bare), JSON's `"value",`.
_ITEM = (
    r"(?m)^[ \t]*(?:-[ \t]+(?:\"(?P<dq>[^\"\n]{1,200})\"|'(?P<sq>[^'\n]{1,200})'|(?P<bare>[^\s\"'#][^\s#]{0,199}))"
    r"|\"(?P<jq>[^\"\n]{1,200})\"[ \t]*,?)[ \t]*\r?$"
)
_ITEM_LINE = re.compile(_ITEM)
_MAX_ITEMS = 64


def _value_span(match: re.Match[str]) -> tuple[int, int]:
    for group in ("dq", "sq", "bare", "jq"):
        if match.group(group) is not None:
            return match.span(group)
    return match.span()


def _listed(text: str, start: int, end: int) -> bool:
    """Whether the item is in a list under a secret's plural name (the lines above it up to the
    name all items), and its value has the look that name asks for."""
    line_start = text.rfind("\n", 0, start) + 1
    for _ in range(_MAX_ITEMS):
        if line_start == 0:
            return False
        previous_start = text.rfind("\n", 0, line_start - 1) + 1
        previous = text[previous_start : line_start - 1]
        if _ITEM_LINE.fullmatch(previous) is None:
            header = _HEADER.search(previous)
            if header is None:
                return False
            value = text[start:end]
            if header.group("passwords") is not None:
                return password_value(value)
            return validators.service_key(value)
        line_start = previous_start
    return False


DETECTORS: tuple[Detector, ...] = (
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(_ITEM),
        b"(?i)(?:" + _PASSWORDS.encode() + b"|" + _KEYS.encode() + rb")[\"']?[ \t]*:[ \t]*\[?[ \t]*\r?\n",
        check=_listed,
        value_span=_value_span,
        follows=True,
        reach=2048,
        keyword_core=40,
        rule="secret-list-item",
    ),
)

"""Go source read as far as the privacy benchmarks need: its tokens and its string literals'
values (the public corpora they read, gitleaks' rules and trufflehog's detector tests, are Go)."""

from __future__ import annotations

import re

# Go tokens: comments and white space are dropped; strings, runes, names and punctuation are kept.
_TOKEN = re.compile(
    r'(?P<skip>\s+|//[^\n]*|/\*.*?\*/)|(?P<str>"(?:\\.|[^"\\\n])*"|`[^`]*`)|(?P<rune>\'(?:\\.|[^\'\\])*\')'
    r"|(?P<name>\w+)|(?P<punct>\.\.\.|:=|\[\]|.)",
    re.S,
)
_ESCAPE = re.compile(r"\\(?:([abfnrtv\\'\"])|x([0-9a-fA-F]{2})|([0-7]{3})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8}))")
_SIMPLE = dict(zip("abfnrtv\\'\"", "\a\b\f\n\r\t\v\\'\"", strict=True))


def go_tokens(source: str) -> list[tuple[str, str, int]]:
    """(kind, text, offset) of each token: `str`, `rune`, `name` or `punct`; comments and space dropped."""
    return [(m.lastgroup or "", m.group(), m.start()) for m in _TOKEN.finditer(source) if m.lastgroup != "skip"]


def go_string(literal: str) -> str:
    """The value of a Go string literal: raw (`...`, carriage returns dropped) or interpreted."""
    if literal[0] == "`":
        return literal[1:-1].replace("\r", "")
    body, out, pos = literal[1:-1], bytearray(), 0
    for match in _ESCAPE.finditer(body):
        out += body[pos : match.start()].encode()
        simple, hexa, octal, short, long = match.groups()
        if simple:
            out += _SIMPLE[simple].encode()
        elif hexa or octal:
            out.append(int(hexa, 16) if hexa else int(octal, 8))
        else:
            out += chr(int(short or long, 16)).encode()
        pos = match.end()
    out += body[pos:].encode()
    return out.decode("utf-8", "replace")

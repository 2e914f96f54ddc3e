"""Pieces of a PEM private key, as agents read them: a file read by lines (`head -n 10 key.pem`,
`sed -n 2,20p`), a harness cutting long output, a pager splitting a key over two tool results.
No piece holds both the BEGIN and the END line that the whole block's detector needs
(patterns.py), yet each is key material: the BEGIN line and the base64 after it, the base64
before an END line, and a body without either line, told by how its encoding begins.
"""

from __future__ import annotations

import re

from router.privacy.detector import Detector
from router.privacy.patterns import PRIVATE_KEY_BEGIN as _BEGIN

_END = _BEGIN.replace("BEGIN", "END")
# How a private key's encoding begins: PKCS#1 RSA, PKCS#8 (RSA; encrypted with PBES2; EC; Ed25519),
# SEC1 EC (P-256, P-384, P-521), OpenSSH's own format. Public keys and certificates begin otherwise.
_BODY = (
    r"(?<![A-Za-z0-9+/])(?:MII[A-Za-z0-9+/]{2}[AQgw]IBA(?:AK|DAN)|MII[A-Za-z0-9+/]{5}BgkqhkiG9w0BBQ0w"
    r"|MIGHAgEAMBMGByqGSM49|MC4CAQAwBQYDK2VwBCIEI|MHcCAQEEI|MIGkAgEBBD|MIHcAgEBBE|b3BlbnNzaC1rZXktdjE)"
)
# A line of a key: base64 after any indent (a YAML block, a JSON tool output's `\n ` read as a
# line break and a space by detect.py's view of escaped text).
_LINE = re.compile(r"[ \t]*+([A-Za-z0-9+/=]++)")
# How far before an END line its key's lines are read (a 4096-bit RSA key is ~3.2 KB).
_TAIL_REACH = 8192


def tail_span(match: re.Match[str]) -> tuple[int, int]:
    """The base64 lines before an END line, read back from it, and the END line: the last may
    be short, the others are whole lines of 16 characters or more."""
    text, begin = match.string, match.start()
    low = max(0, begin - _TAIL_REACH)
    position, lines = begin, 0
    while True:
        cut = position - 1 if text[position - 1 : position] == " " else position
        if cut <= low or text[cut - 1] != "\n":
            break
        cut -= 2 if text[cut - 2 : cut] == "\r\n" else 1
        line = _LINE.fullmatch(text, text.rfind("\n", low, cut) + 1, cut)
        if line is None or (lines and cut - line.start(1) < 16):
            break
        position, lines = line.start(1), lines + 1
    return position, match.end()


DETECTORS: tuple[Detector, ...] = (
    Detector(
        "PRIVATE_KEY",
        # The BEGIN line, PEM headers (`Proc-Type:`, `DEK-Info:`), then base64 lines to where
        # they stop (a note of truncation, the text's end).
        re.compile(_BEGIN + r"(?:\s*+[A-Za-z-]++: [^\n]*+)*+\s*+[A-Za-z0-9+/=]{40,}+(?:\s*+[A-Za-z0-9+/=]{4,}+)*+"),
        _BEGIN.encode(),
        reach=16384,
        rule="private-key-cut",
    ),
    Detector(
        "PRIVATE_KEY",
        # Found at its END line (a literal: cheap to find), its lines read back from there.
        re.compile(_END),
        _END.encode(),
        value_span=tail_span,
        # The END line alone (text about PEM files) is no key.
        validate=lambda value: not value.startswith("-----END"),
        rule="private-key-tail",
    ),
    Detector(
        "PRIVATE_KEY",
        re.compile(_BODY + r"[A-Za-z0-9+/=]{16,}+(?:\s*+[A-Za-z0-9+/=]{4,}+)*+"),
        _BODY.replace("(?<![A-Za-z0-9+/])", "").encode(),
        reach=16384,
        rule="private-key-body",
    ),
)

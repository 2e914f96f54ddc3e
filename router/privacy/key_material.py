"""Key material that is no PEM block: a JSON Web Key's private members, minisign's and
signify's secret keys, a Tink keyset's key data, a Fernet key under its name, a PuTTY key file's
private lines (`.ppk`). Each core is the format's own mark (`"d": "…"` of base64url,
`untrusted comment: … secret key`, `"keyData"`, `fernet`, `Private-Lines:`), so text without one
costs nothing.
"""

from __future__ import annotations

import re

from router.privacy.detector import Detector

# A JWK's members that are private: RSA's `d`, `p`, `q`, `dp`, `dq`, `qi`, EC's and OKP's `d`,
# an `oct` key's `k`. Read only in an object that has a `kty`.
_JWK_KTY = re.compile(r"\"kty\"[ \t]*:")


def _in_jwk(text: str, start: int, _end: int) -> bool:
    """Whether a `kty` member is in the JSON object the value belongs to (the object's braces,
    looked for up to 4 KB on each side: an RSA key's members run to ~3 KB)."""
    low = text.rfind("{", max(0, start - 4096), start)
    high = text.find("}", start, start + 4096)
    return low >= 0 and high >= 0 and _JWK_KTY.search(text, low, high) is not None


DETECTORS: tuple[Detector, ...] = (
    Detector(
        "PRIVATE_KEY",
        re.compile(r"\"(?:d|p|q|dp|dq|qi|k)\"[ \t]*:[ \t]*\"([A-Za-z0-9_-]{20,4096})\""),
        rb"\"(?:d|p|q|dp|dq|qi|k)\"[ \t]{0,3}:[ \t]{0,3}\"[A-Za-z0-9_-]{20}",
        check=_in_jwk,
        group=1,
        reach=4096,
        rule="jwk-private-member",
        keyword_core=40,
    ),
    Detector(
        "PRIVATE_KEY",
        # minisign's and signify's key files: a comment line saying it is a secret key, the key
        # in base64 on the next.
        re.compile(r"untrusted comment:[^\n]{0,120}secret key[^\n]{0,40}\r?\n([A-Za-z0-9+/]{40,1024}={0,2})"),
        rb"untrusted comment:[^\n]{0,120}secret key",
        group=1,
        reach=1100,
        rule="minisign-secret-key",
        keyword_core=150,
    ),
    Detector(
        "PRIVATE_KEY",
        # A PuTTY key file's private part: `Private-Lines: N`, then N lines of base64 (the key,
        # in clear when the file's `Encryption` is `none`; encrypted by a passphrase otherwise,
        # as a PEM block may be). The public lines before it and the MAC after it are not secret.
        # (Lines may be indented: a JSON string's `\n` is read as a line break and a space.)
        re.compile(
            r"Private-Lines:[ \t]*\d{1,3}\r?\n[ \t]*"
            r"((?:[A-Za-z0-9+/=]{4,128}\r?\n[ \t]*){0,399}[A-Za-z0-9+/=]{4,128})(?![^\r\n])"
        ),
        rb"Private-Lines:",
        group=1,
        reach=52000,
        rule="putty-private-key",
        keyword_core=20,
    ),
    Detector(
        "PRIVATE_KEY",
        # A Tink keyset in clear (`"keyData": {"typeUrl": …, "value": "<key>", …}`).
        re.compile(r"\"keyData\"[ \t]*:[ \t]*\{[^{}]{0,300}?\"value\"[ \t]*:[ \t]*\"([A-Za-z0-9+/]{16,4096}={0,2})\""),
        rb"\"keyData\"[ \t]{0,3}:",
        group=1,
        reach=4400,
        rule="tink-keyset",
        keyword_core=12,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # A Fernet key (32 bytes, URL-safe base64) under a name that says so.
        re.compile(r"(?i)fernet[\w.-]{0,30}[\"']?[ \t]*(?::=|=>|[:=])[ \t]*[bru]?[\"']?([A-Za-z0-9_-]{43}=)(?![\w=-])"),
        rb"(?i)fernet[\w.-]{0,30}[\"']?[ \t]{0,3}(?::=|=>|[:=])[ \t]{0,3}[bru]?[\"']?[A-Za-z0-9_-]{43}=",
        group=1,
        lead=0,
        reach=60,
        rule="fernet-key",
        keyword_core=100,
    ),
)

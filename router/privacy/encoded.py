"""Decode before scanning: base64 values that wrap a secret.

Agents meet secrets base64-encoded: a Kubernetes Secret's `data:` values, a kubeconfig's
`client-key-data`, `tls.key`, a `.dockerconfigjson` (whose `auth` is base64 again),
`Authorization: Basic`, an `.npmrc`'s `_auth`, and whole files an API returns encoded (GitHub's
contents API). Such a value is decoded (at most `MAX_DECODED` bytes, `MAX_DEPTH` levels deep)
and the text it holds is scanned with every detector, under the value's name when it has one
(`password: <decoded>`); a value whose text holds a finding is one finding itself, of kind
`ENCODED_SECRET`, so that the whole encoded value is replaced by one placeholder and restored
byte for byte. A value that does not decode to text (hashes, binary) costs one failed decode.
"""

from __future__ import annotations

import base64
import binascii
import re
import threading

from router.privacy import validators
from router.privacy.detector import Detector, Finding

MAX_DECODED = 256 * 1024  # bytes of decoded text scanned per value (a larger blob is not decoded)
MAX_DEPTH = 3  # a docker config's `auth` inside a `.dockerconfigjson` is two levels deep
_BLOB_CHARS = MAX_DECODED * 4 // 3 + 8192  # its encoded length, line breaks allowed for
_LINE_BREAKS = re.compile(r"\\r|\\n|\s")
# Names whose decoded value is `user:password` (HTTP Basic, npm, docker config).
_USER_PASSWORD_NAMES = {"auth", "_auth", "basic", "npmauthident"}  # user:password, base64
_NAME_BEFORE = re.compile(r"([\w.-]{1,100})[\"']?[ \t]*[:=][ \t]*[\"']?$")
_state = threading.local()
_HEX = re.compile(r"^(?:[0-9a-f]+|[0-9A-F]+)$")
# Bytes text may begin with: printable ASCII, tab and line breaks, and UTF-8's lead and
# continuation bytes (16 base64 characters end on a whole byte, maybe inside a character).
_TEXT_BYTES = bytes([9, 10, 13, *range(32, 127), *range(0x80, 0xF5)])


def _decode(value: str) -> str | None:
    """The text `value` encodes (standard base64, line breaks allowed), or None."""
    packed = _LINE_BREAKS.sub("", value)
    if len(packed) < 8 or len(packed) > _BLOB_CHARS:
        return None
    try:
        raw = base64.b64decode(packed + "=" * (-len(packed) % 4), validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    if not text or len(raw) > MAX_DECODED:
        return None
    printable = sum(1 for char in text if char.isprintable() or char in "\n\r\t")
    return text if printable >= 0.95 * len(text) else None


def _decode_blob(value: str) -> str | None:
    """A wrapped blob's text; when it does not decode, the blob without its last line (a word
    on the line after the blob)."""
    decoded = _decode(value)
    if decoded is None:
        cut = max(value.rfind("\n"), value.rfind("\\n"))
        if cut > 0:
            decoded = _decode(value[:cut])
    return decoded


def _scan(text: str) -> list[Finding]:
    """Every detector over decoded text, one level deeper (none past MAX_DEPTH)."""
    depth = getattr(_state, "depth", 0)
    if depth >= MAX_DEPTH:
        return []
    from router.privacy.detect import detect_uncached  # detect.py lists this module's detectors

    _state.depth = depth + 1
    try:
        return detect_uncached(text)
    finally:
        _state.depth = depth


def holds_secret(name: str, value: str) -> bool:
    """Whether base64 `value` (under `name`, maybe empty) decodes to text holding a finding."""
    decoded = _decode(value) if name else _decode_blob(value)
    if decoded is None:
        return False
    if name.lower() in _USER_PASSWORD_NAMES:
        user, colon, password = decoded.partition(":")
        if colon and user and "\n" not in decoded and len(password) >= 4:
            return not validators.is_reference(password)
    label = f"{name}: " if name else ""
    return any(finding.start >= len(label) for finding in _scan(label + decoded))


def _named(text: str, start: int, end: int) -> bool:
    name = _NAME_BEFORE.search(text, max(0, start - 120), start)
    return holds_secret(name.group(1) if name else "", text[start:end])


def _secret_text(text: str, start: int, end: int) -> bool:
    """A Secret's field read out by kubectl: base64 of text (a password), not a stand-in."""
    decoded = _decode(text[start:end])
    return decoded is not None and len(decoded.strip()) >= 4 and not validators.is_reference(decoded.strip())


def _basic(text: str, start: int, end: int) -> bool:
    return holds_secret("basic", text[start:end])


def _blob(text: str, start: int, end: int) -> bool:
    value = text[start:end]
    if _HEX.match(value):
        return False  # a hash or an id in hex (git, sha256sum): bytes, not text
    try:  # the first bytes tell binary from text for most blobs (hashes in base64, keys)
        head = base64.b64decode(value[:16], validate=True)
    except (binascii.Error, ValueError):
        head = b""
    if head.translate(None, _TEXT_BYTES):
        return False
    return holds_secret("", value)


_B64 = r"[A-Za-z0-9+/]"
_KEYS = (
    r"client-key-data|client-certificate-data|tls\.key|ssh-privatekey|\.dockerconfigjson|\.dockercfg|_auth|auth"
    r"|npmAuthIdent|[\w.-]{0,60}?(?:b64|base64)"  # (`SSH_PRIVATE_KEY_B64`, `credentialsBase64`)
    r"|private[_-]?key[_-]?data|privateKeyData|service[_-]?account[_-]?key|credentials?(?:\.json)?|config\.json"
)

# A blob starts where no base64 line ends just before it: the lines of a wrapped blob are one
# blob, read once from its first line (read from each of its lines, the cost is quadratic).
_BLOB_START = r"(?<![\w+/=])(?<![A-Za-z0-9+/=]\n)(?<![A-Za-z0-9+/=]\r\n)(?<![A-Za-z0-9+/=]\\n)"

# The blob's core, `(?:^|[^A-Za-z0-9+/=_])[A-Za-z0-9+/]{48}`, found natively (Detector.native):
# each byte becomes `a` (base64), `=` (`=` and `_`) or a space (a boundary), and a boundary then
# 48 `a` is one substring search. It gives the spans hyperscan gave (a match's end less 49, as
# without start-of-match tracking) for a fifth of what the repeat cost hyperscan's pass.
_BLOB_CLASSES = bytes(
    ord("a")
    if chr(byte).isascii() and (chr(byte).isalnum() or chr(byte) in "+/")
    else ord("=")
    if chr(byte) in "=_"
    else 32
    for byte in range(256)
)
_BLOB_RUN = b"a" * 48


def blob_candidates(data: bytes) -> list[tuple[int, int]]:
    """Merged spans (byte offsets) where a run of 48 base64 characters begins at a boundary."""
    classes = data.translate(_BLOB_CLASSES)
    spans: list[tuple[int, int]] = []
    if classes.startswith(_BLOB_RUN):
        spans.append((0, 48))
    at = classes.find(b" " + _BLOB_RUN)
    while at >= 0:
        if spans and at <= spans[-1][1]:
            spans[-1] = (spans[-1][0], at + 49)
        else:
            spans.append((at, at + 49))
        at = classes.find(b" " + _BLOB_RUN, at + 49)
    return spans


DETECTORS: tuple[Detector, ...] = (
    Detector(
        "ENCODED_SECRET",
        # HTTP Basic: user:password, base64.
        re.compile(r"(?i)\bbasic[ \t]+(" + _B64 + r"{8,1024}={0,2})(?![\w+/=])"),
        rb"(?i)basic[ \t]+[A-Za-z0-9+/]{8}",
        check=_basic,
        group=1,
        reach=1040,
        rule="basic-auth",
        keyword_core=16,
    ),
    Detector(
        "ENCODED_SECRET",
        # Secret-bearing keys whose values are base64 (kubeconfig, docker config, npm, k8s).
        re.compile(
            r"(?i)(?<![\w.-])(?:" + _KEYS + r")[\"']?[ \t]*[:=][ \t]*[\"']?(" + _B64 + r"{8,}={0,2})(?![\w+/=])"
        ),
        b"(?i)(?:" + _KEYS.encode() + rb")[\"']?[ \t]*[:=][ \t]*[\"']?[A-Za-z0-9+/]{8}",
        check=_named,
        group=1,
        reach=_BLOB_CHARS,
        rule="encoded-under-key",
        keyword_core=80,
        head=re.compile(r"(?i)(?<![\w.-])(?:" + _KEYS + r")"),
    ),
    Detector(
        "ENCODED_SECRET",
        # A Secret's field read out by kubectl (`kubectl get secret db -o jsonpath='{.data.password}'`):
        # its base64 value on the next line.
        re.compile(
            r"\bkubectl\b[^\n]{0,300}?\bget[ \t]+secrets?\b[^\n]{0,400}?\.data\b[^\n|]{0,100}\r?\n"
            r"[ \t]*(" + _B64 + r"{4,}={0,2})[ \t]*(?:\r?\n|$)"
        ),
        rb"\bget[ \t]+secrets?\b",
        check=_secret_text,
        group=1,
        reach=_BLOB_CHARS,
        rule="kubectl-secret-field",
        lead=320,
        keyword_core=16,
    ),
    Detector(
        "ENCODED_SECRET",
        # A Kubernetes Secret's `data:` block (YAML or JSON): every entry's value is base64.
        re.compile(
            r"(?m)(?:^[ \t]+[\w.-]{1,100}:[ \t]+|\"[\w.-]{1,100}\"\s*:\s*\")(" + _B64 + r"{4,}={0,2})(?![\w+/=])"
        ),
        rb"(?:^|\n)data:[ \t]*\r?\n|\"data\"\s{0,3}:\s{0,3}\{",
        check=_named,
        group=1,
        reach=16384,
        rule="kubernetes-secret-data",
        keyword_core=16,
        follows=True,
    ),
    Detector(
        "ENCODED_SECRET",
        # A whole base64 blob (a file an API returns encoded), wrapped in lines or not.
        # (its last line may be short: `…\nQ==`, then a word may follow it on the next line).
        # A line break as JSON escapes it, or as escaped text reads it (router/privacy/detect.py's
        # unescaped view: `\\n` is read a break and a space).
        re.compile(_BLOB_START + _B64 + r"{48,}(?:(?:\\r)?(?:\\n|\r?\n {0,2})" + _B64 + r"+)*={0,2}(?![\w+/=])"),
        rb"(?:^|[^A-Za-z0-9+/=_])[A-Za-z0-9+/]{48}",
        check=_blob,
        reach=_BLOB_CHARS,
        rule="encoded-blob",
        keyword_core=49,
        head=re.compile(_BLOB_START + _B64 + r"{48}"),
        native=blob_candidates,
    ),
)

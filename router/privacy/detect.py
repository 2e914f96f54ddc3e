"""Detect PII and secrets in text that would go to the cloud.

Each detector is a regular expression that finds candidates plus, where the format has one, a
validator (Luhn for cards, mod 97 for IBANs, the check character of national ids, the octet
range of IPv4 addresses, the entropy of a secret). Candidates are cheap to find; validation is
what keeps look-alikes (order numbers, version strings, hashes, dates) out.

Speed: every pattern starts with a literal or a narrow character class, and a detector whose
trigger cannot occur in the text (no `@` for e-mail, no digit for numbers) is skipped.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Finding:
    type: str
    value: str
    start: int
    end: int


def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        number = ord(char) - 48
        if index % 2:
            number *= 2
            if number > 9:
                number -= 9
        total += number
    return total % 10 == 0


_CARD_PREFIX = re.compile(r"^(?:4|5[1-5]|2[2-7]|3[47]|6(?:011|5|4[4-9]|22)|35|3(?:0[0-5]|[68]))")


def _card(value: str) -> bool:
    digits = re.sub(r"[ -]", "", value)
    return 13 <= len(digits) <= 19 and bool(_CARD_PREFIX.match(digits)) and _luhn(digits)


_IBAN_LENGTHS = {
    "AD": 24,
    "AE": 23,
    "AT": 20,
    "BA": 20,
    "BE": 16,
    "BG": 22,
    "BH": 22,
    "BR": 29,
    "CH": 21,
    "CY": 28,
    "CZ": 24,
    "DE": 22,
    "DK": 18,
    "EE": 20,
    "ES": 24,
    "FI": 18,
    "FO": 18,
    "FR": 27,
    "GB": 22,
    "GE": 22,
    "GI": 23,
    "GL": 18,
    "GR": 27,
    "HR": 21,
    "HU": 28,
    "IE": 22,
    "IL": 23,
    "IS": 26,
    "IT": 27,
    "JO": 30,
    "KW": 30,
    "KZ": 20,
    "LB": 28,
    "LI": 21,
    "LT": 20,
    "LU": 20,
    "LV": 21,
    "MC": 27,
    "ME": 22,
    "MK": 19,
    "MT": 31,
    "MU": 30,
    "NL": 18,
    "NO": 15,
    "PK": 24,
    "PL": 28,
    "PS": 29,
    "PT": 25,
    "QA": 29,
    "RO": 24,
    "RS": 22,
    "SA": 24,
    "SE": 24,
    "SI": 19,
    "SK": 24,
    "SM": 27,
    "TN": 24,
    "TR": 26,
    "UA": 29,
    "VG": 24,
}


def _iban(value: str) -> bool:
    compact = value.replace(" ", "").upper()
    if _IBAN_LENGTHS.get(compact[:2]) != len(compact):
        return False
    rearranged = compact[4:] + compact[:4]
    number = "".join(str(int(char, 36)) for char in rearranged)
    return int(number) % 97 == 1


def _ipv4(value: str) -> bool:
    parts = value.split(".")
    return len(parts) == 4 and all(p.isdigit() and int(p) <= 255 and (p == "0" or p[0] != "0") for p in parts)


def _ipv6(value: str) -> bool:
    if value.count("::") > 1:
        return False
    groups = [g for g in value.split(":") if g]
    full = "::" not in value
    if full and len(groups) != 8:
        return False
    # Compressed forms need enough structure not to be a time (12:30) or a Python slice.
    return 2 <= len(groups) <= 8 and (full or len(groups) >= 3 or value.startswith("fe80") or value == "::1")


def _ssn(value: str) -> bool:
    area, group, serial = value[0:3], value[4:6], value[7:11]
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


_CN_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)


def _cn_id(value: str) -> bool:
    total = sum(int(d) * w for d, w in zip(value[:17], _CN_WEIGHTS, strict=True))
    return "10X98765432"[total % 11] == value[17].upper()


def _es_dni(value: str) -> bool:
    return "TRWAGMYFPDXBNJZSQVHLCKE"[int(value[:8]) % 23] == value[8].upper()


def _entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    return -sum(c / len(value) * math.log2(c / len(value)) for c in counts.values())


def _secret_value(value: str) -> bool:
    # An assigned secret: long enough, mixed, high entropy; not a placeholder or a variable.
    if value.lower() in ("true", "false", "null", "none", "changeme", "password", "<redacted>"):
        return False
    if value.startswith(("$", "{{", "${", "<", "os.environ", "env.")) or (
        value.startswith("[") and value.endswith("]")
    ):
        return False
    return len(value) >= 8 and _entropy(value) >= 3.0 and not value.isalpha()


def _phone(value: str) -> bool:
    digits = re.sub(r"\D", "", value)
    return 8 <= len(digits) <= 15 if value.startswith("+") else len(digits) == 10


@dataclass(frozen=True, slots=True)
class Detector:
    type: str
    pattern: re.Pattern[str]
    trigger: str | None = None  # a substring that must occur for the pattern to have a chance
    needs_digit: bool = False
    validate: Callable[[str], bool] | None = None
    group: int = 0  # the group holding the value (0: the whole match)


_B = r"(?<![\w.+-])"  # not inside a longer token
_E = r"(?![\w@-])"

DETECTORS: tuple[Detector, ...] = (
    Detector(
        "PRIVATE_KEY",
        re.compile(r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----[\s\S]+?-----END (?:[A-Z]+ )*PRIVATE KEY-----"),
        "PRIVATE KEY",
    ),
    Detector("JWT", re.compile(r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}"), "eyJ"),
    Detector(
        "URL_CREDENTIALS", re.compile(r"\b[a-z][a-z0-9+.-]{1,15}://[^\s/:@\"'<>]+:[^\s/@\"'<>]+@[^\s/\"'<>]+"), "://"
    ),
    Detector("AWS_ACCESS_KEY", re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA)[A-Z0-9]{16}(?![A-Z0-9])"), "A"),
    Detector(
        "GITHUB_TOKEN", re.compile(r"(?<![\w])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{50,255})"), "g"
    ),
    Detector(
        "OPENAI_KEY", re.compile(r"(?<![\w-])sk-(?:proj-|svcacct-|admin-|ant-api\d\d-)?[A-Za-z0-9_-]{20,}"), "sk-"
    ),
    Detector("SLACK_TOKEN", re.compile(r"(?<![\w-])xox[abposr]-[A-Za-z0-9-]{10,}"), "xox"),
    Detector("SLACK_WEBHOOK", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/]{20,}"), "hooks.slack"),
    Detector("GOOGLE_API_KEY", re.compile(r"(?<![\w-])AIza[0-9A-Za-z_-]{35}(?![\w-])"), "AIza"),
    Detector("STRIPE_KEY", re.compile(r"(?<![\w])(?:sk|rk)_live_[0-9A-Za-z]{20,}"), "_live_"),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(
            r"(?i)(?:pass(?:word|wd)?|secret|token|api[_-]?key|access[_-]?key|auth[_-]?key|private[_-]?key|credentials?)"
            r"[\"']?\s*[:=]\s*[\"']?([^\s\"',;}{<>]{8,200})"
        ),
        None,
        validate=_secret_value,
        group=1,
    ),
    Detector(
        "EMAIL",
        re.compile(
            r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}"
            r"[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}"
            r"(?![A-Za-z0-9-])"
        ),
        "@",
    ),
    Detector(
        "IBAN",
        re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?(?![A-Za-z0-9])"),
        None,
        needs_digit=True,
        validate=_iban,
    ),
    Detector("CARD", re.compile(_B + r"(?:\d[ -]?){12,18}\d" + _E), None, needs_digit=True, validate=_card),
    Detector("US_SSN", re.compile(_B + r"\d{3}-\d{2}-\d{4}" + _E), "-", needs_digit=True, validate=_ssn),
    Detector(
        "CN_RESIDENT_ID",
        re.compile(
            r"(?<![\d])[1-9]\d{5}(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])"
            r"\d{3}[\dXx](?![\dA-Za-z])"
        ),
        None,
        needs_digit=True,
        validate=_cn_id,
    ),
    Detector(
        "ES_DNI",
        re.compile(r"(?<![\w])\d{8}-?[A-HJ-NP-TV-Z](?![\w])"),
        None,
        needs_digit=True,
        validate=lambda v: _es_dni(v.replace("-", "")),
    ),
    Detector(
        "PHONE",
        re.compile(
            r"(?:(?<![\w+])\+[1-9]\d{0,2}(?:[ .-]?\(?\d{1,4}\)?){2,5}\d(?![\d-])"
            r"|(?<![\w.-])\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}(?![\w-]))"
        ),
        None,
        needs_digit=True,
        validate=_phone,
    ),
    Detector(
        "IP_ADDRESS",
        re.compile(r"(?<![\w.])(?<!version )(?<!Version )(?:\d{1,3}\.){3}\d{1,3}(?![\w.]|\.\d)"),
        ".",
        needs_digit=True,
        validate=_ipv4,
    ),
    Detector(
        "IP_ADDRESS",
        re.compile(
            r"(?<![\w:])(?:[0-9a-fA-F]{1,4}:){1,7}(?::|(?::[0-9a-fA-F]{1,4}){1,7}|"
            r"[0-9a-fA-F]{1,4})(?![\w:])"
        ),
        ":",
        validate=_ipv6,
    ),
)

_DIGIT = re.compile(r"\d")
TYPES: tuple[str, ...] = tuple(dict.fromkeys(d.type for d in DETECTORS))

# The prefilter: what any finding must contain, and how far a finding can reach before and after
# that trigger's end (bytes). Hyperscan scans for all triggers in one pass (~1 ms per MB); only the
# windows around triggers go through the exact patterns and validators above.
_TRIGGERS: tuple[tuple[bytes, int, int], ...] = (
    (rb"@", 80, 270),
    (rb"eyJ", 8, 4096),
    (rb"://", 24, 600),
    (rb"(?:AKIA|ASIA|AGPA|AIDA|AROA)", 4, 24),
    (rb"gh[pousr]_|github_pat_", 12, 270),
    (rb"sk-", 4, 300),
    (rb"xox[abposr]-", 6, 300),
    (rb"AIza", 6, 48),
    (rb"_live_", 10, 300),
    (rb"PRIVATE KEY-----", 64, 16384),
    (rb"(?i)(?:pass|secret|token|api.?key|access.?key|auth.?key|private.?key|credential)", 32, 240),
    (rb"\d[\d .()/-]{5,}\d", 40, 40),
    (rb"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d", 20, 8),
    (rb"[0-9a-fA-F]{0,4}::?[0-9a-fA-F]{1,4}:", 48, 48),
    (rb"[A-Z]{2}\d{2}", 4, 44),
)


class _Prefilter:
    """Hyperscan over all triggers at once; None of it when hyperscan is not installed."""

    def __init__(self) -> None:
        import hyperscan

        self._hyperscan = hyperscan
        self._db = hyperscan.Database()
        expressions = [pattern for pattern, _, _ in _TRIGGERS]
        self._db.compile(
            expressions=expressions,
            ids=list(range(len(expressions))),
            elements=len(expressions),
            flags=[0] * len(expressions),
        )
        self._scratch = hyperscan.Scratch(self._db)

    def windows(self, data: bytes) -> list[tuple[int, int]]:
        spans: list[tuple[int, int]] = []

        def on_match(index: int, _start: int, end: int, _flags: int, _context: object) -> None:
            _, before, after = _TRIGGERS[index]
            spans.append((max(0, end - before), min(len(data), end + after)))

        self._db.scan(data, match_event_handler=on_match, scratch=self._scratch)
        spans.sort()
        merged: list[tuple[int, int]] = []
        for start, end in spans:
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        return merged


def _load_prefilter() -> _Prefilter | None:
    try:
        return _Prefilter()
    except ImportError:
        return None


_PREFILTER = _load_prefilter()


def _detect_all(text: str) -> list[Finding]:
    has_digit = _DIGIT.search(text) is not None
    findings: list[Finding] = []
    taken: list[tuple[int, int]] = []
    for detector in DETECTORS:
        if detector.trigger is not None and detector.trigger not in text:
            continue
        if detector.needs_digit and not has_digit:
            continue
        for match in detector.pattern.finditer(text):
            start, end = match.span(detector.group)
            value = match.group(detector.group)
            if detector.validate is not None and not detector.validate(value):
                continue
            if any(start < t_end and t_start < end for t_start, t_end in taken):
                continue
            taken.append((start, end))
            findings.append(Finding(detector.type, value, start, end))
    findings.sort(key=lambda f: f.start)
    return findings


def detect(text: str) -> list[Finding]:
    """Every sensitive value in `text`; overlapping findings keep the first detector's (the list
    above is ordered from the most specific). Offsets are within the window a finding came from:
    what callers use is the type and the value."""
    if not text:
        return []
    if _PREFILTER is None:
        return _detect_all(text)
    data = text.encode("utf-8", "surrogatepass")
    findings: list[Finding] = []
    for start, end in _PREFILTER.windows(data):
        # A window may cut a character or a finding's edge; the trigger windows are sized so
        # that a whole finding fits, and a cut multi-byte character is dropped at the edge.
        findings.extend(_detect_all(data[start:end].decode("utf-8", "ignore")))
    return findings

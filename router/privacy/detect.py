"""Detect PII and secrets in text that would go to the cloud.

Each detector is a regular expression that finds candidates plus, where the format has one, a
validator (Luhn for cards, mod 97 for IBANs, the check character of national ids, the octet
range of IPv4 addresses, the entropy of a secret). Candidates are cheap to find; validation is
what keeps look-alikes (order numbers, version strings, hashes, dates) out.

Speed: hyperscan looks for every detector's core at once, in one pass over the bytes; the
exact pattern (with its look-arounds) and the validator run only where a core matched. Without
hyperscan every exact pattern scans the whole text: the same findings, more slowly.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass

from router.privacy import validators


@dataclass(frozen=True, slots=True)
class Finding:
    type: str
    value: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Detector:
    type: str
    pattern: re.Pattern[str]  # the exact pattern (with its boundary checks), run on candidates only
    core: bytes  # what hyperscan looks for: the pattern without look-arounds (a superset of it)
    validate: Callable[[str], bool] | None = None
    group: int = 0  # the group holding the value (0: the whole match)
    reach: int = 0  # bytes past the core's end the exact match may still extend (private keys)
    lead: int = 0  # bytes before the core's start where the exact match may begin (e-mail local parts)


_B = r"(?<![\w.+-])"  # not inside a longer token
_E = r"(?![\w@-])"
_SECRET_WORDS = (
    r"(?:pass(?:word|wd)?|secret|token|api[_-]?key|access[_-]?key|auth[_-]?key|private[_-]?key|credentials?)"
)

# Ordered from the most specific: where two findings overlap, the earlier detector's stands.
DETECTORS: tuple[Detector, ...] = (
    Detector(
        "PRIVATE_KEY",
        re.compile(r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----[\s\S]+?-----END (?:[A-Z]+ )*PRIVATE KEY-----"),
        rb"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----",
        reach=16384,
    ),
    Detector(
        "JWT",
        re.compile(r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}"),
        rb"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16}",
        reach=4096,
    ),
    Detector(
        "URL_CREDENTIALS",
        re.compile(r"\b[a-z][a-z0-9+.-]{1,15}://[^\s/:@\"'<>]+:[^\s/@\"'<>]+@[^\s/\"'<>]+"),
        rb"://[^\s/:@\"'<>]+:[^\s/@\"'<>]+@",
        reach=600,
        lead=16,
    ),
    Detector(
        "AWS_ACCESS_KEY",
        re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA)[A-Z0-9]{16}(?![A-Z0-9])"),
        rb"(?:AKIA|ASIA|AGPA|AIDA|AROA)[A-Z0-9]{16}",
    ),
    Detector(
        "GITHUB_TOKEN",
        re.compile(r"(?<![\w])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{50,255})"),
        rb"gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{50}",
        reach=256,
    ),
    Detector(
        "OPENAI_KEY",
        re.compile(r"(?<![\w-])sk-(?:proj-|svcacct-|admin-|ant-api\d\d-)?[A-Za-z0-9_-]{20,}"),
        rb"sk-[A-Za-z0-9_-]{20}",
        reach=256,
    ),
    Detector(
        "SLACK_TOKEN",
        re.compile(r"(?<![\w-])xox[abposr]-[A-Za-z0-9-]{10,}"),
        rb"xox[abposr]-[A-Za-z0-9-]{10}",
        reach=256,
    ),
    Detector(
        "SLACK_WEBHOOK",
        re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/]{20,}"),
        rb"https://hooks\.slack\.com/services/",
        reach=256,
    ),
    Detector("GOOGLE_API_KEY", re.compile(r"(?<![\w-])AIza[0-9A-Za-z_-]{35}(?![\w-])"), rb"AIza[0-9A-Za-z_-]{35}"),
    Detector(
        "STRIPE_KEY",
        re.compile(r"(?<![\w])(?:sk|rk)_live_[0-9A-Za-z]{20,}"),
        rb"(?:sk|rk)_live_[0-9A-Za-z]{20}",
        reach=256,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(r"(?i)" + _SECRET_WORDS + r"[\"']?\s*[:=]\s*[\"']?([^\s\"',;}{<>]{8,200})"),
        b"(?i)" + _SECRET_WORDS.encode() + rb"[\"']?\s*[:=]\s*[\"']?[^\s\"',;}{<>]{8}",
        validate=validators.secret_value,
        group=1,
        reach=200,
    ),
    Detector(
        "EMAIL",
        re.compile(
            r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}"
            r"[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}"
            r"(?![A-Za-z0-9-])"
        ),
        rb"[A-Za-z0-9._%+-]@[A-Za-z0-9][A-Za-z0-9.-]*\.[A-Za-z]{2}",
        reach=30,
        lead=64,  # the core starts one character before the `@`; a local part has up to 64
    ),
    Detector(
        "IBAN",
        re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?(?![A-Za-z0-9])"),
        rb"[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2}",
        validate=validators.iban,
        reach=30,
    ),
    Detector(
        "CN_RESIDENT_ID",
        re.compile(
            r"(?<![\d])[1-9]\d{5}(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])"
            r"\d{3}[\dXx](?![\dA-Za-z])"
        ),
        rb"[1-9]\d{5}(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx]",
        validate=validators.cn_id,
    ),
    Detector(
        "CARD", re.compile(_B + r"(?:\d[ -]?){12,18}\d" + _E), rb"(?:\d[ -]?){12}\d", validate=validators.card, reach=12
    ),
    Detector("US_SSN", re.compile(_B + r"\d{3}-\d{2}-\d{4}" + _E), rb"\d{3}-\d{2}-\d{4}", validate=validators.ssn),
    Detector(
        "ES_DNI",
        re.compile(r"(?<![\w])\d{8}-?[A-HJ-NP-TV-Z](?![\w])"),
        rb"\d{8}-?[A-HJ-NP-TV-Z]",
        validate=lambda v: validators.es_dni(v.replace("-", "")),
    ),
    Detector(
        "PHONE",
        re.compile(
            r"(?:(?<![\w+])\+[1-9]\d{0,2}(?:[ .-]?\(?\d{1,4}\)?){2,5}\d(?![\d-])"
            r"|(?<![\w.-])\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}(?![\w-]))"
        ),
        rb"\+[1-9]\d{0,2}[ .-]?\(?\d|\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}",
        validate=validators.phone,
        reach=20,
    ),
    Detector(
        "IP_ADDRESS",
        re.compile(r"(?<![\w.])(?<!version )(?<!Version )(?:\d{1,3}\.){3}\d{1,3}(?![\w.]|\.\d)"),
        rb"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}",
        validate=validators.ipv4,
    ),
    Detector(
        "IP_ADDRESS",
        re.compile(
            r"(?<![\w:])(?:[0-9a-fA-F]{1,4}:){1,7}(?::|(?::[0-9a-fA-F]{1,4}){1,7}|"
            r"[0-9a-fA-F]{1,4})(?![\w:])"
        ),
        rb"(?:[0-9a-fA-F]{1,4}:){3,7}[0-9a-fA-F]{1,4}|[0-9a-fA-F]{0,4}::[0-9a-fA-F]{1,4}",
        validate=validators.ipv6,
        reach=40,
        lead=40,
    ),
)

TYPES: tuple[str, ...] = tuple(dict.fromkeys(d.type for d in DETECTORS))
# Characters of context the exact patterns' look-arounds read on each side of a candidate.
_MARGIN = 16


class _Engine:
    """Hyperscan over every detector's core at once (~1 ms per MB of ordinary text): only
    where a core matches does the exact pattern, with its validator, run."""

    def __init__(self) -> None:
        import hyperscan

        self._db = hyperscan.Database()
        cores = [detector.core for detector in DETECTORS]
        self._db.compile(
            expressions=cores,
            ids=list(range(len(cores))),
            elements=len(cores),
            flags=[hyperscan.HS_FLAG_SOM_LEFTMOST] * len(cores),
        )
        self._scratch = hyperscan.Scratch(self._db)

    def candidates(self, data: bytes) -> dict[int, list[tuple[int, int]]]:
        """Per detector, the merged spans where its core matched."""
        hits: dict[int, list[tuple[int, int]]] = {}

        def on_match(index: int, start: int, end: int, _flags: int, _context: object) -> None:
            spans = hits.setdefault(index, [])
            if spans and start <= spans[-1][1]:
                spans[-1] = (min(spans[-1][0], start), max(spans[-1][1], end))
            else:
                spans.append((start, end))

        self._db.scan(data, match_event_handler=on_match, scratch=self._scratch)
        return hits


def _load_engine() -> _Engine | None:
    try:
        return _Engine()
    except ImportError:
        return None


_ENGINE = _load_engine()


def _exact(
    detector: Detector, text: str, start: int, end: int, before: int | None = None
) -> list[tuple[int, int, str]]:
    """The exact pattern's validated matches in text[start:end] (look-arounds see around it)
    that begin before `before` (matches further on belong to a later candidate)."""
    found = []
    for match in detector.pattern.finditer(text, start, end):
        if before is not None and match.start() >= before:
            break
        value = match.group(detector.group)
        if detector.validate is None or detector.validate(value):
            found.append((*match.span(detector.group), value))
    return found


def _resolve(raw: list[tuple[int, int, int, str]]) -> list[Finding]:
    """Overlapping findings: the earlier detector's stands (`raw`: detector index, span, value)."""
    raw.sort()
    # Kept spans never overlap, so sorted by start they are sorted by end too: one bisect finds
    # the only neighbours a new span could overlap (dense text holds thousands of findings).
    starts: list[int] = []
    ends: list[int] = []
    findings: list[Finding] = []
    for index, start, end, value in raw:
        position = bisect.bisect_left(starts, start)
        if position > 0 and ends[position - 1] > start:
            continue
        if position < len(starts) and starts[position] < end:
            continue
        starts.insert(position, start)
        ends.insert(position, end)
        findings.append(Finding(DETECTORS[index].type, value, start, end))
    findings.sort(key=lambda f: f.start)
    return findings


def _detect_all(text: str) -> list[Finding]:
    """Without hyperscan: every exact pattern over the whole text (correct, but slower)."""
    raw = [(i, s, e, v) for i, d in enumerate(DETECTORS) for s, e, v in _exact(d, text, 0, len(text))]
    return _resolve(raw)


def detect(text: str) -> list[Finding]:
    """Every sensitive value in `text`, earliest first; where findings overlap, the more specific
    detector's stands. Offsets are in `text` (characters)."""
    if not text:
        return []
    if _ENGINE is None:
        return _detect_all(text)
    data = text.encode("utf-8", "surrogatepass")
    if len(data) != len(text):
        # Byte offsets differ from character offsets: map the candidates through the ASCII prefix
        # when there is one, else scan the text the slow way (rare: non-ASCII tool output).
        return _detect_all(text)
    raw: list[tuple[int, int, int, str]] = []
    for index, spans in _ENGINE.candidates(data).items():
        detector = DETECTORS[index]
        for start, end in spans:
            low, high = max(0, start - detector.lead - _MARGIN), min(len(text), end + detector.reach + _MARGIN)
            raw.extend((index, s, e, v) for s, e, v in _exact(detector, text, low, high, end))
    return _resolve(raw)

"""Detect PII and secrets in text that would go to the cloud.

Detectors (detector.py) come from three places: Tandem's own (patterns.py), national ids
validated by python-stdnum (national_ids.py) and provider secret rules from gitleaks' published
rule data (provider_rules.py). Every one reports a kind of the small vocabulary in kinds.py.

Speed: hyperscan looks for every detector's core at once, in one pass over the UTF-8 bytes;
the exact pattern (with its look-arounds), the validator and the context rules run only where a
core matched. Cores that could match at every position of a long run (digits, hex) start at a
token boundary, so a 50 MB line of digits gives one candidate, not fifty million. Without
hyperscan every exact pattern scans the whole text: the same findings, more slowly.

Optional backends (a Presidio analyzer for names and addresses, see presidio.py) plug in through
`register`; they run after Tandem's detectors and their findings take the places left free.
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import importlib.metadata
import itertools
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path

from router.privacy import (
    admin_secrets,
    app_secrets,
    bank_details,
    build_secrets,
    call_secrets,
    client_configs,
    credentials,
    data_secrets,
    deploy_secrets,
    documents,
    dump_secrets,
    encoded,
    env_dumps,
    escaped_markup,
    home_secrets,
    hosting_secrets,
    id_columns,
    key_material,
    key_pieces,
    list_secrets,
    national_ids,
    network_secrets,
    opt_in,
    pair_secrets,
    patterns,
    prefixed_tokens,
    printed_secrets,
    prose_passwords,
    provider_rules,
    saved_logins,
    service_keys,
    sql_secrets,
    wallet_secrets,
    web_secrets,
    wrapped_secrets,
)
from router.privacy.anchors import char_offsets, continuation_bytes, utf8
from router.privacy.detector import Detector, Finding
from router.privacy.escaped_letters import with_letters
from router.privacy.heads import first_strings, forward_reach
from router.privacy.spans import Hits, char_spans
from router.privacy.taken import Taken
from router.privacy.windows import HEAD_SPAN as _HEAD_SPAN
from router.privacy.windows import starts_of, windows

__all__ = ["DETECTORS", "TYPES", "Backend", "Detector", "Finding", "detect", "detect_uncached", "register"]

_OWN = patterns.DETECTORS
_SECRETS = tuple(
    d for d in _OWN if d.type not in ("SECRET_ASSIGNMENT", "EMAIL", "IBAN", "CARD", "US_SSN", "PHONE", "IP_ADDRESS")
)
_ASSIGNMENTS = tuple(d for d in _OWN if d.type == "SECRET_ASSIGNMENT")
_PERSONAL_FIRST = tuple(d for d in _OWN if d.type in ("EMAIL", "IBAN", "CARD"))
_PERSONAL_LAST = tuple(d for d in _OWN if d.type in ("US_SSN", "PHONE", "IP_ADDRESS"))


def _skipping(detector: Detector) -> Detector:
    """The detector, searching its windows from where a match may begin (heads.py), each search
    for where one begins reading no further than it needs (Detector.head_span)."""
    if detector.head is None and detector.skip_to is None:
        skip_to = first_strings(detector.pattern.pattern, detector.pattern.flags)
        if skip_to is None:
            return detector
        detector = dataclasses.replace(detector, skip_to=skip_to)
    leading = detector.head if detector.head is not None else detector.skip_to
    assert leading is not None
    span = forward_reach(leading.pattern, leading.flags)
    if detector.head_span is None and span is not None and span < _HEAD_SPAN:
        detector = dataclasses.replace(detector, head_span=span)
    return detector


# Ordered from the most specific: where two findings overlap, the earlier detector's stands.
DETECTORS: tuple[Detector, ...] = tuple(
    _skipping(detector)
    for detector in _SECRETS
    + prefixed_tokens.DETECTORS
    + credentials.DETECTORS
    + web_secrets.DETECTORS
    + build_secrets.DETECTORS
    + app_secrets.DETECTORS
    + client_configs.DETECTORS
    + data_secrets.DETECTORS
    + deploy_secrets.DETECTORS
    + network_secrets.DETECTORS
    + key_material.DETECTORS
    + key_pieces.DETECTORS
    + list_secrets.DETECTORS
    + prose_passwords.DETECTORS
    + sql_secrets.DETECTORS
    + wrapped_secrets.DETECTORS
    + home_secrets.DETECTORS
    + wallet_secrets.DETECTORS
    + bank_details.DETECTORS
    + saved_logins.DETECTORS
    + printed_secrets.DETECTORS
    + call_secrets.DETECTORS
    + hosting_secrets.DETECTORS
    + pair_secrets.DETECTORS
    + dump_secrets.DETECTORS
    + admin_secrets.DETECTORS
    + provider_rules.detectors()
    + encoded.DETECTORS
    + _ASSIGNMENTS
    + credentials.PASSWORDS
    + env_dumps.DETECTORS
    + service_keys.DETECTORS
    + _PERSONAL_FIRST
    + national_ids.detectors()
    + documents.DETECTORS
    + _PERSONAL_LAST
)
TYPES: tuple[str, ...] = tuple(dict.fromkeys(d.type for d in DETECTORS))


# Hyperscan's expressions: one per distinct core (fourteen national-id detectors share the
# label words), each reported once however many detectors read its matches (`_READERS`).
# A detector with a split core has one expression per part; one with a native search has none.
def _expressions() -> dict[tuple[bytes, int], list[int]]:
    expressions: dict[tuple[bytes, int], list[int]] = {}
    for index, detector in enumerate(DETECTORS):
        if detector.native is not None:
            continue
        for core in detector.split_core or (detector.core,):
            expressions.setdefault((core, detector.keyword_core), []).append(index)
    return expressions


_EXPRESSIONS = _expressions()
_READERS: tuple[tuple[int, ...], ...] = tuple(tuple(readers) for readers in _EXPRESSIONS.values())
# Detectors whose candidates come from several expressions (their spans are merged) or none.
_SPLIT = frozenset(index for index, detector in enumerate(DETECTORS) if detector.split_core)
_NATIVE = tuple((index, detector.native) for index, detector in enumerate(DETECTORS) if detector.native is not None)
# Without start-of-match tracking a match reports start 0: its start is at most this far back.
_KEYWORD_SPAN = [keyword for _core, keyword in _EXPRESSIONS]
# The column pass's anchors, compiled after the cores: expression ids from _COLUMNS_FROM on.
_COLUMN_ANCHORS = id_columns.COLUMNS.anchors.expressions()
_COLUMNS_FROM = len(_EXPRESSIONS)
# The anchor id under which the hyperscan pass reports an escaped quote or bracket.
_MARKUP_ANCHOR = len(_COLUMN_ANCHORS)

Backend = Callable[[str], list[Finding]]
_BACKENDS: list[Backend] = []


def register(backend: Backend) -> None:
    """Add a detector backend (names, addresses…): called with each text after Tandem's own."""
    _BACKENDS.append(backend)


# Texts detected lately -> what was found. Trajectories resend the same texts (a client's system
# prompt, a task's template) at their first step, and each text costs ~10-40 µs a KB to scan
# against a lookup that hashes it at ~1 µs a KB. Bounded in characters (the texts are held).
_SEEN: dict[str, tuple[Finding, ...]] = {}
_SEEN_MAX_CHARS = 4_000_000
_SEEN_MAX_TEXT = 65_536
_seen_chars = 0
_SEEN_LOCK = threading.Lock()
_seen_with: list[Backend] = []  # the backends the kept findings were found with


class _Engine:
    """Hyperscan over every detector's core at once: only where a core matches does the exact
    pattern, with its validator, run. Compiling ~270 expressions takes seconds, so the compiled
    database is kept in a cache directory (`TANDEM_CACHE_DIR`, else the user's cache) keyed by
    the expressions and the hyperscan version; without a writable one it is compiled each time."""

    def __init__(self) -> None:
        import hyperscan

        cores = [core for core, _keyword in _EXPRESSIONS]
        # Start of match is costly to track: only cores that need it ask for it.
        flags = [0 if keyword else hyperscan.HS_FLAG_SOM_LEFTMOST for _core, keyword in _EXPRESSIONS]
        # The column pass's header words are found in the same pass (a second pass over the
        # text cost ~0.6 µs a KB of typical text, in the same one they cost next to nothing),
        # with the flags `Anchors` gives them.
        for expression, caseless in _COLUMN_ANCHORS:
            cores.append(expression)
            flags.append(
                hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_UTF8 | (hyperscan.HS_FLAG_CASELESS if caseless else 0)
            )
        # Escaped quotes and brackets: reported as the anchor after the column pass's (`_MARKUP`).
        cores.append(escaped_markup.CORE)
        flags.append(0)
        version = importlib.metadata.version("hyperscan")
        key = hashlib.sha256(repr((version, cores, flags)).encode()).hexdigest()[:24]
        cache = Path(os.environ.get("TANDEM_CACHE_DIR") or Path.home() / ".cache" / "tandem") / f"hs-{key}.db"
        try:
            database = hyperscan.loadb(cache.read_bytes(), hyperscan.HS_MODE_BLOCK)
        except Exception:  # absent, unreadable or from another build: compile it
            database = hyperscan.Database()
            database.compile(expressions=cores, ids=list(range(len(cores))), elements=len(cores), flags=flags)
            try:
                cache.parent.mkdir(parents=True, exist_ok=True)
                partial = cache.with_suffix(f".{os.getpid()}.tmp")
                partial.write_bytes(hyperscan.dumpb(database))
                partial.replace(cache)
            except OSError:
                pass
        self._db = database
        # A scratch space serves one scan at a time: each thread that scans gets its own clone
        # (two gateways in one process, or a scan moved off the event loop, never share one).
        self._scratch = hyperscan.Scratch(database)
        self._per_thread = threading.local()

    def candidates(self, data: bytes) -> tuple[dict[int, list[tuple[int, int]]], dict[int, list[int]]]:
        """Per detector (its index in DETECTORS), the merged spans (byte offsets) where its core
        matched (detectors sharing a core share the list, read only); and per anchor of the
        column pass (its index in `id_columns.COLUMNS.anchors`), the byte offsets where its
        matches end."""
        collected = Hits(_KEYWORD_SPAN, _COLUMNS_FROM)
        scratch = getattr(self._per_thread, "scratch", None)
        if scratch is None:
            scratch = self._per_thread.scratch = self._scratch.clone()
        self._db.scan(data, match_event_handler=collected, scratch=scratch)
        found: dict[int, list[tuple[int, int]]] = {}
        for expression, spans in collected.spans.items():
            for reader in _READERS[expression]:
                if reader in _SPLIT and reader in found:
                    found[reader] = _merge(found[reader] + spans)
                else:
                    found[reader] = spans
        for reader, search in _NATIVE:
            if spans := search(data):
                found[reader] = spans
        return found, collected.column_ends


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted spans, overlapping or touching ones merged (as one expression's matches are)."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def _load_engine() -> _Engine | None:
    try:
        return _Engine()
    except ImportError:
        return None


_ENGINE = _load_engine()


class _Kept:
    """Findings kept so far, as sorted non-overlapping spans: detectors run from the most
    specific, and a later detector's match that overlaps a kept finding is dropped before its
    (costly) validation, as it would be after it."""

    def __init__(self) -> None:
        self.taken = Taken()
        self.findings: list[Finding] = []

    def overlaps(self, start: int, end: int) -> bool:
        return self.taken.overlaps(start, end)

    def add(self, detector: Detector, found: list[tuple[int, int, str]]) -> None:
        for start, end, value in sorted(found):
            if self.taken.take(start, end):
                self.findings.append(Finding(detector.type, value, start, end, detector.rule or detector.type))

    def result(self) -> list[Finding]:
        return sorted(self.findings, key=lambda f: f.start)


def _exact(
    detector: Detector, text: str, start: int, end: int, before: int | None = None, kept: _Kept | None = None
) -> list[tuple[int, int, str]]:
    """The exact pattern's validated matches in text[start:end] (look-arounds see around it)
    that begin before `before` (matches further on belong to a later candidate) and overlap no
    kept finding. A match that fails is retried one character on, so that a longer look-alike
    does not hide a value inside it and the result does not depend on where the window begins."""
    found = []
    position = start
    rejected: set[str] = set()  # values that failed validation (pathological runs repeat them)
    head = detector.head if before is not None else None
    skip_to = detector.skip_to if before is not None else None
    while position < end:
        if head is not None:
            # Only where the head begins before `before` can a match begin (see Detector.head).
            found_head = head.search(text, position, min(end, before + _HEAD_SPAN))  # type: ignore[operator]
            if found_head is None or found_head.start() >= before:  # type: ignore[operator]
                break
            match = detector.pattern.match(text, found_head.start(), end)
            if match is None:
                position = found_head.start() + 1
                continue
        else:
            if skip_to is not None:
                # No match begins before the first place where one of its first strings occurs.
                found_skip = skip_to.search(text, position, min(end, before + _HEAD_SPAN))  # type: ignore[operator]
                if found_skip is None or found_skip.start() >= before:  # type: ignore[operator]
                    break
                position = found_skip.start()
            match = detector.pattern.search(text, position, end)
            if match is None or (before is not None and match.start() >= before):
                break
        span = match.span(detector.group) if detector.value_span is None else detector.value_span(match)
        value = text[span[0] : span[1]]
        if not value or value in rejected or (kept is not None and kept.overlaps(*span)):
            position = match.start() + 1
            continue
        if detector.validate is not None and not detector.validate(value):
            rejected.add(value)
            position = match.start() + 1
            continue
        if detector.check is None or detector.check(text, *span):
            found.append((*span, value))
            position = max(match.end(), match.start() + 1)
        else:
            position = match.start() + 1
    return found


def _detect_all(text: str) -> list[Finding]:
    """Without hyperscan: every exact pattern over the whole text (correct, but slower)."""
    kept = _Kept()
    for detector in DETECTORS:
        kept.add(detector, _exact(detector, text, 0, len(text), kept=kept))
    return kept.result()


def _own(text: str, data: bytes) -> tuple[list[Finding], list[Finding]]:
    """The column pass's findings and the detectors'."""
    if _ENGINE is None:
        return id_columns.COLUMNS.find(text, data), _detect_all(text)
    hits, column_ends = _ENGINE.candidates(data)
    if column_ends.pop(_MARKUP_ANCHOR, None) is not None:
        _MARKUP.seen = True
    continuation = None
    if len(data) != len(text):
        # Non-ASCII text: map the candidates' byte offsets to character offsets. Windows measured
        # in characters cover at least as much as the same count of bytes.
        continuation = continuation_bytes(data, len(text))  # found once for both passes
        if continuation is not None:  # mostly ASCII: counted along each list (spans.py)
            hits = char_spans(hits, continuation)
        else:
            positions = [p for spans in hits.values() for span in spans for p in span]
            mapping = char_offsets(data, positions, len(text), continuation)
            hits = {i: [(mapping[s], mapping[e]) for s, e in spans] for i, spans in hits.items()}
    columns = id_columns.COLUMNS.find(text, data, column_ends, continuation)
    kept = _Kept()
    shared: _Starts = {}
    for index in sorted(hits):
        detector = DETECTORS[index]
        kept.add(detector, run(detector, text, hits[index], kept.taken, shared))
    return columns, kept.result()


# The starts of the windows of detectors that share a core (Detector.starts), by core and window.
_Starts = dict[tuple[bytes, int, int], list[list[int]]]


def run(
    detector: Detector, text: str, spans: list[tuple[int, int]], taken: Taken, shared: _Starts
) -> list[tuple[int, int, str]]:
    """One detector's validated matches in the windows of its candidates (windows.py), the
    starts it shares with others found once a scan (`shared`, empty at the scan's start)."""
    if detector.starts is None:
        return windows(detector, text, spans, taken)
    key = (detector.core, detector.lead, detector.reach)
    starts = shared.get(key)
    if starts is None:
        starts = shared[key] = starts_of(detector, text, spans)
    return windows(detector, text, spans, taken, starts)


def detect(text: str, optional: frozenset[str] = frozenset()) -> list[Finding]:
    """Every sensitive value in `text`, earliest first; where findings overlap, the more specific
    detector's stands. Offsets are in `text` (characters). `optional`: the opt-in kinds the
    route asks for besides the default ones (`person`, `address`: opt_in.py)."""
    if optional and text:
        return _with_opt_in(detect(text), _opt_in(text, optional))
    global _seen_chars, _seen_with
    if not text:
        return []
    if len(text) > _SEEN_MAX_TEXT:
        return _detect(text)
    # The texts seen are shared by the event loop and the threads large scans run in
    # (router/privacy/guard.py): read and written under a lock, the scan itself outside it.
    with _SEEN_LOCK:
        if _seen_with != _BACKENDS:
            _SEEN.clear()
            _seen_chars, _seen_with = 0, list(_BACKENDS)
        kept = _SEEN.pop(text, None)
        if kept is not None:
            _SEEN[text] = kept  # reinserted last: evicted last
            return list(kept)
    kept = tuple(_detect(text))
    with _SEEN_LOCK:
        if _SEEN.pop(text, None) is None:  # another thread may have kept it meanwhile
            _seen_chars += len(text)
        _SEEN[text] = kept
        while _seen_chars > _SEEN_MAX_CHARS and len(_SEEN) > 1:
            _seen_chars -= len(_SEEN.pop(next(iter(_SEEN))))
    return list(kept)


def _opt_in(text: str, optional: frozenset[str]) -> list[Finding]:
    """The opt-in kinds' findings, read as the default kinds are past invisible characters (a
    name with a zero-width space or a soft hyphen inside it, `J\u200bed`, `Fern\u00adández`:
    copied web text, or a value split to slip past a filter)."""
    if not text.isascii() and any(char in text for char in _INVISIBLE_CHARS):
        found = _without(_INVISIBLE, text, lambda view: opt_in.find(view, optional))
        if found is not None:
            return found
    return opt_in.find(text, optional)


def detect_uncached(text: str) -> list[Finding]:
    """`detect` without the cache of texts seen (decoded values are scanned with it: what a
    nested scan finds depends on how deep it is)."""
    return _detect(text) if text else []


def _merged(findings: list[Finding], extra: list[Finding]) -> list[Finding]:
    """`findings` plus those of `extra` that overlap none of them, earliest first."""
    if not extra:
        return findings
    taken = Taken()
    for finding in findings:
        taken.take(finding.start, finding.end)
    extra = [f for f in extra if taken.take(f.start, f.end)]
    return sorted(findings + extra, key=lambda f: f.start) if extra else findings


# What an opt-in finding's piece outside a default finding is trimmed of at its ends (`221B Baker
# Street, London NW1 6XE, tel` once the phone after it is the phone's).
_PIECE_EDGES = " \t\r\n,;:|-"
_PIECE_MIN = 4  # characters a piece keeps to stand as a finding of its own


def _with_opt_in(findings: list[Finding], extra: list[Finding]) -> list[Finding]:
    """`findings` (the default kinds') and the opt-in kinds' `extra`: where one of `extra`
    overlaps a default finding, that stands and the pieces of the opt-in finding outside it stand
    as findings of their own (an address whose line ends in a phone keeps its street; dropped
    whole, the street reached the cloud)."""
    if not extra:
        return findings
    spans = sorted((f.start, f.end) for f in findings)
    taken = Taken()
    for start, end in spans:
        taken.take(start, end)
    kept: list[Finding] = []
    for finding in extra:
        if taken.take(finding.start, finding.end):
            kept.append(finding)
            continue
        at = finding.start
        index = bisect.bisect_left(spans, (finding.start, -1))
        while index > 0 and spans[index - 1][1] > finding.start:
            index -= 1  # a default finding that starts before this one and reaches into it
        pieces = []
        while at < finding.end:
            stop = spans[index][0] if index < len(spans) and spans[index][0] < finding.end else finding.end
            if stop > at:
                pieces.append((at, stop))
            if index >= len(spans) or spans[index][0] >= finding.end:
                break
            at = max(at, spans[index][1])
            index += 1
        for start, end in pieces:
            piece = finding.value[start - finding.start : end - finding.start]
            lead = len(piece) - len(piece.lstrip(_PIECE_EDGES))
            trimmed = piece.strip(_PIECE_EDGES)
            if len(trimmed) < _PIECE_MIN or not any(c.isalnum() for c in trimmed):
                continue
            begin = start + lead
            if taken.take(begin, begin + len(trimmed)):
                kept.append(dataclasses.replace(finding, value=trimmed, start=begin, end=begin + len(trimmed)))
    return sorted(findings + kept, key=lambda f: f.start) if kept else findings


# Full-width forms of ASCII (`４１１１`, `ＡＫＩＡ…`, as Japanese and Chinese input methods type them)
# and the ideographic space: read as ASCII, one character for one, so offsets stay those of the
# text and a finding's value is the text's own characters.
_AS_ASCII = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}


# An escaped quote after one of these opens a value (read ` "`); after any other character it
# closes one (read `" `).
_OPENS_AFTER = frozenset(' \t\r\n=:([{,"\\')
_ENDS = frozenset(("", " ", "\t", "\r", "\n"))
# A quote escaped between a value's characters (`"p@ss\\"w0rd"`, a password holding a quote in a
# JSON document) is one of them: neither opens nor closes a value.
_INSIDE_AFTER = frozenset("!#$%&*+-/<>?@^_|~")


def _unescaped(text: str) -> str:
    """`text` as JSON-escaped text means it, one character for one: a tool that prints JSON
    escapes the quotes of what it quotes (`{"output": "token = \\"ab12…\\""}`), and a value
    after `\\"` or before it is then read as quoted (a quote beside the value, the backslash
    read as a space on the other side; `\\n` is read ` ` and a line break). Offsets stay the
    text's."""
    parts = text.split('\\"')
    pieces = [parts[0]]
    for before, part in itertools.pairwise(parts):
        # A regex with a look-behind took ~15 ms a MiB of escaped JSON; this, ~1 µs a quote.
        # After `:` or `=` a quote opens a value, unless a space or the end follows it: then it
        # closes one (`curl -u \\"user:\\" …`, a password left empty).
        if before and before[-1] not in _OPENS_AFTER and (part[:1].isalnum() or part[:1] in _INSIDE_AFTER):
            pieces.append("''")  # a value's own quote: its characters stay one value
        else:
            opens = (not before or before[-1] in _OPENS_AFTER) and part[:1] not in _ENDS
            pieces.append(' "' if opens else '" ')
        pieces.append(part)
    view = "".join(pieces)
    if "\\n" in view:
        view = view.replace("\\r\\n", "\r\n  ").replace("\\n", "\n ")
    # A tab or carriage return escaped (a tab-separated table, `mysql -B`, in a tool's JSON
    # output) parts values as the character does: its `t` glued to the next value hid it.
    if "\\t" in view:
        view = view.replace("\\t", "\t ")
    if "\\r" in view:
        view = view.replace("\\r", "\r ")
    return view


# A terminal's colour and cursor codes (ANSI CSI sequences: ESC, `[`, parameters, a final
# letter), as coloured CLI output carries them into a tool result; and as a JSON string escapes
# them (`\u001b[93m`). The final letter stuck to a value (`\x1b[93msk-…`) hid it from every
# pattern that starts at a word's boundary, and codes between a name and its value parted them.
_COLOUR = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_COLOUR_ESCAPED = re.compile(r"\\u001[bB]\[[0-9;?]*[ -/]*[@-~]")


# Characters that show as nothing (zero-width space, non-joiner and joiner, word joiner, byte
# order mark, soft hyphen), as pasted text, a page an agent read, or a leak made to look
# harmless carries them: one inside a value (`4111\u200b1111…`, `jane.\u200bdoe@…`, a token
# with a soft hyphen) parted it, and the value went to the cloud whole or in part.
_INVISIBLE_CHARS = "\u200b\u200c\u200d\u2060\ufeff\u00ad"
_INVISIBLE = re.compile(f"[{_INVISIBLE_CHARS}]+")
_INVISIBLE_CODES = ("\\u200", "\\u2060", "\\ufeff", "\\uFEFF", "\\u00ad", "\\u00AD")
_INVISIBLE_ESCAPED = re.compile(r"(?:\\u(?:200[bBcCdD]|2060|[fF][eE][fF][fF]|00[aA][dD]))+")


def _detect(text: str) -> list[Finding]:
    # All of them are outside ASCII: an ASCII text (most tool output) is told by a flag.
    if not text.isascii() and any(char in text for char in _INVISIBLE_CHARS):
        found = _without(_INVISIBLE, text, _detect_visible)
        if found is not None:
            return found
    return _detect_visible(text)


def _detect_visible(text: str) -> list[Finding]:
    if "\x1b" in text:  # one character: found at memchr's speed
        found = _without(_COLOUR, text, _detect_markup)
        if found is not None:
            return found
    return _detect_markup(text)


class _Seen(threading.local):
    seen = False  # whether a scan in this thread met an escaped quote or bracket


_MARKUP = _Seen()


def _detect_markup(text: str) -> list[Finding]:
    """`_detect_written` of `text`, or where its quotes or brackets are written as HTML entities
    or JSON escapes (the hyperscan pass tells), of the text with them read as the characters
    (escaped_markup.py): scanned again, which only such texts pay."""
    outer, _MARKUP.seen = _MARKUP.seen, False
    found = _detect_written(text)
    seen = _MARKUP.seen if _ENGINE is not None else escaped_markup.may_hold(text)
    _MARKUP.seen = outer or seen
    if seen:
        view = escaped_markup.with_entities(text, _detect_written)
        if view is not None:
            return view
    return found


def _without(codes: re.Pattern[str], text: str, scan: Callable[[str], list[Finding]]) -> list[Finding] | None:
    """`scan` of `text` with the matches of `codes` taken out, its findings placed back in
    `text` (a value with a code inside it keeps the code); None when nothing matched."""
    parts: list[str] = []
    at: list[int] = []  # where in the view each code was taken out
    removed: list[int] = []  # the characters taken out up to and with it
    last = total = 0
    for match in codes.finditer(text):
        parts.append(text[last : match.start()])
        at.append(match.start() - total)
        total += match.end() - match.start()
        removed.append(total)
        last = match.end()
    if not at:
        return None
    parts.append(text[last:])

    def placed(position: int) -> int:  # a character of the view -> its place in `text`
        index = bisect.bisect_right(at, position) - 1
        return position + (removed[index] if index >= 0 else 0)

    out = []
    for finding in scan("".join(parts)):
        start, end = placed(finding.start), placed(finding.end - 1) + 1
        out.append(Finding(finding.type, text[start:end], start, end, finding.rule))
    return out


# JSON text inside a JSON string (a tool's JSON output inside an MCP result) escapes its own
# quotes and line breaks twice (`\\\\\\"`, `\\\\n`): one escape level taken off them is text
# escaped once, which the view below reads.
_TWICE_ESCAPED = re.compile(r'\\\\(?=\\")|\\(?=\\n)')


def _detect_written(text: str) -> list[Finding]:
    if _escaped(text):
        if '\\\\\\"' in text:
            found = _without(_TWICE_ESCAPED, text, _detect_written)
            if found is not None:
                return found
        view = _unescaped(text)  # the same offsets as `text`
        wide = _wide_scan(view)
        found = None
        if "\\u001" in view:  # in escaped JSON only: a search for a backslash's string costs more
            found = _without(_COLOUR_ESCAPED, view, wide)
        if found is None:
            found = _without_escaped_invisible(view, wide)
        return [_as_written(text, f) for f in (wide(view) if found is None else found)]
    if not _JSON_START.match(text):
        return _detect_wide(text)
    # Escaped invisible characters and letters outside a JSON document are text about them.
    wide = _wide_scan(text)
    found = _without_escaped_invisible(text, wide)
    return wide(text) if found is None else found


def _wide_scan(text: str) -> Callable[[str], list[Finding]]:
    """The scan of escaped JSON: with its escaped letters read as letters, where it has any."""
    if "\\u" not in text:
        return _detect_wide

    def scan(view: str) -> list[Finding]:
        found = with_letters(view, _detect_wide)
        return _detect_wide(view) if found is None else found

    return scan


def _without_escaped_invisible(text: str, scan: Callable[[str], list[Finding]]) -> list[Finding] | None:
    """JSON written ASCII-only (Python's `json.dumps`) escapes the invisible characters: the
    scan of `text` without them, or None when it has none."""
    # Looked for as strings first (~0.1 ms a MiB each): the expression's own search reads the
    # text at ~20 ms a MiB.
    if "\\u" not in text or not any(code in text for code in _INVISIBLE_CODES):
        return None
    return _without(_INVISIBLE_ESCAPED, text, scan)


_JSON_START = re.compile(r"\s*[\[{]")
# A JSON document after a line of its own, to the text's end: a tool's JSON output under a
# harness's heading (`Output:`, `Observation:`, the command run).
_JSON_AFTER_LINE = re.compile(r"[^\n]{0,160}\n\s*(?:\{\s*\"|\[\s*[\[{\"])")


def _first_escaped_quote(text: str) -> int:
    """Where `\\"` first is, or -1: from backslash to backslash (a search of one character
    runs at memchr's speed; of the two, ~0.8 ms a MiB of non-ASCII text)."""
    at = text.find("\\")
    for _ in range(32):
        if at < 0 or text.startswith('"', at + 1):
            return at
        at = text.find("\\", at + 1)
    return text.find('\\"', at)  # text of many backslashes: the search of both from here


def _escaped(text: str) -> bool:
    """Escaped text: a JSON document (a tool's JSON output, alone or under a heading line to the
    text's end) with an escaped quote or line break in it, or text where, around its first
    escaped quote, a third or more of the quotes are escaped (a JSON string quoted whole). Source
    code with an escaped quote here and there is read as written. Counted around the first one
    only: counting a MiB of text cost ~1.5 ms."""
    if _JSON_START.match(text) or (_JSON_AFTER_LINE.match(text) and text[-64:].rstrip().endswith(("}", "]"))):
        # A line break escaped before a token (`…\nfo1_…`) glues its `n` to the token.
        return "\\" in text and ('\\"' in text or "\\n" in text or "\\t" in text)
    first = _first_escaped_quote(text)
    if first < 0:
        return False
    low, high = max(0, first - 4096), first + 4096
    return text.count('\\"', low, high) * 3 >= text.count('"', low, high)


def _as_written(text: str, finding: Finding) -> Finding:
    """A finding of the unescaped view as the text writes it: a value that the view ended at
    its closing quote (a password may hold spaces) ends before that quote's backslash."""
    start, end = finding.start, finding.end
    if text.startswith('\\"', end - 1) and end - 1 > start:
        end -= 1
    value = text[start:end]
    return finding if value == finding.value else Finding(finding.type, value, start, end, finding.rule)


def _detect_wide(text: str) -> list[Finding]:
    if text.isascii():
        return _detect_narrow(text, text.encode())
    data = utf8(text)
    # Looked for in the UTF-8 bytes the scan needs anyway, first by their lead byte (one byte is
    # found at memchr's speed; a search of the characters took ~2 ms a MiB of non-ASCII text,
    # one of two bytes ~0.8 ms). `EF BC`, `EF BD`: U+FF00–U+FF7F (the full-width forms and a few
    # others, told apart by the translation, which also reads U+3000 as a space).
    if b"\xef" in data and (b"\xef\xbc" in data or b"\xef\xbd" in data):
        narrow = text.translate(_AS_ASCII)
        if narrow != text:
            return [
                Finding(f.type, text[f.start : f.end], f.start, f.end, f.rule)
                if f.value == narrow[f.start : f.end]
                else f
                for f in _detect_narrow(narrow, utf8(narrow))
            ]
    return _detect_narrow(text, data)


def _detect_narrow(text: str, data: bytes) -> list[Finding]:
    # Values that only their table's header names (a `phone` or `ssn` column: id_columns.py); a
    # whole cell under such a column stands over a part of it found by its shape.
    findings = _merged(*_own(text, data))
    for backend in _BACKENDS:
        taken = [(f.start, f.end) for f in findings]
        extra = [f for f in backend(text) if not any(s < f.end and f.start < e for s, e in taken)]
        if extra:
            findings = sorted(findings + extra, key=lambda f: f.start)
    return findings

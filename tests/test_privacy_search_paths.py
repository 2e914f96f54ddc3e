"""The cheaper search paths of the detectors find exactly what the plain ones find.

- Windows searched from where a match may begin (`heads.first_strings`, Detector.skip_to) and
  gitleaks' generic rules without their lead before the keyword (`heads.without_lead`) give the
  values the plain patterns give, on texts built from every pattern (a sampler of the parsed
  pattern, the samples glued to names, keywords and each other).
- Byte offsets map to the same character offsets whether the text is mostly ASCII (its few
  continuation bytes counted) or not (walked).
- A long text that is not all ASCII, encoded in slices, gives the bytes encoding it whole gives;
  a table's column found in the detectors' hyperscan pass is the one the column pass finds alone.
- The base64 blob's candidates found natively (`encoded.blob_candidates`) are the spans its
  hyperscan core gave; the phone core compiled in parts gives the spans of the whole.
"""

from __future__ import annotations

import dataclasses
import random
import re
import string
from re import _constants as constants  # type: ignore[attr-defined]
from re import _parser as parser  # type: ignore[attr-defined]
from typing import Any

import pytest

from router.privacy import detect, encoded, id_columns, patterns, provider_rules
from router.privacy.anchors import char_offsets, utf8
from router.privacy.detector import Detector
from router.privacy.heads import first_strings, without_lead
from router.privacy.secret_rules import RULES

_POOL = string.ascii_letters + string.digits + "_-.+/=:;,'\"` \t\n|%~@$!#&*(){}[]<>?"


def _member(items: list[tuple[Any, Any]], char: str) -> bool:
    negate = False
    inside = False
    for op, value in items:
        if op is constants.NEGATE:
            negate = True
        elif op is constants.LITERAL:
            inside |= ord(char) == value
        elif op is constants.RANGE:
            inside |= value[0] <= ord(char) <= value[1]
        elif op is constants.CATEGORY:
            name = str(value).lower()
            category = r"\d" if "digit" in name else r"\w" if "word" in name else r"\s"
            hit = bool(re.fullmatch(category, char))
            inside |= not hit if "not" in name else hit
    return inside != negate


_MEMBERS: dict[str, list[str]] = {}


def _sample(items: list[tuple[Any, Any]], rng: random.Random) -> str:
    """A string the parsed pattern `items` (nearly always) matches: look-arounds are ignored."""
    out: list[str] = []
    for op, value in items:
        if op is constants.LITERAL:
            out.append(chr(value))
        elif op is constants.NOT_LITERAL:
            out.append(rng.choice([c for c in _POOL if ord(c) != value]))
        elif op is constants.ANY:
            out.append(rng.choice(string.ascii_letters))
        elif op is constants.IN:
            members = _MEMBERS.get(repr(value))
            if members is None:
                members = _MEMBERS[repr(value)] = [c for c in _POOL if _member(list(value), c)] or ["a"]
            out.append(rng.choice(members))
        elif op in (constants.MAX_REPEAT, constants.MIN_REPEAT, constants.POSSESSIVE_REPEAT):
            low, high, item = value
            high = low + 12 if high is constants.MAXREPEAT else min(high, low + 12)
            out.extend(_sample(list(item), rng) for _ in range(rng.randint(low, high)))
        elif op is constants.SUBPATTERN:
            out.append(_sample(list(value[3]), rng))
        elif op is constants.BRANCH:
            out.append(_sample(list(rng.choice(value[1])), rng))
    return "".join(out)


def _texts(pattern: str, keywords: tuple[str, ...], seed: int, count: int = 20) -> list[str]:
    rng = random.Random(seed)
    parsed = list(parser.parse(pattern))
    texts = []
    for _ in range(count):
        pieces = []
        for _ in range(rng.randint(1, 4)):
            glue = rng.choice(["", " ", "\n", "_", ".", "-", "x", "my_app.", "=", '"', "'", "; ", "a" * 60])
            keyword = rng.choice(keywords) if keywords and rng.random() < 0.5 else ""
            keyword = keyword.upper() if rng.random() < 0.3 else keyword
            pieces.append(
                glue + keyword + (rng.choice([" = ", ": ", "=", ""]) if keyword else "") + _sample(parsed, rng)
            )
        pieces.append(rng.choice(["", " ", "\n", "\"'", "x"]))
        texts.append("".join(pieces))
    return texts


def _found(detector: Detector, text: str) -> list[tuple[int, int, str]]:
    return detect._exact(detector, text, 0, len(text), len(text))


_REGEX = {rule_id: regex for rule_id, _kind, regex, *_rest in RULES}
_PROVIDER = [d for d in detect.DETECTORS if d.rule in _REGEX]
_KEYWORDS = {rule_id: keywords for rule_id, _kind, _regex, keywords, *_rest in RULES}


@pytest.mark.parametrize("detector", _PROVIDER, ids=lambda d: d.rule)
def test_provider_rules_find_what_their_gitleaks_regex_finds(detector: Detector) -> None:
    plain = dataclasses.replace(detector, pattern=re.compile(_REGEX[detector.rule]), skip_to=None, head=None)
    for seed, text in enumerate(_texts(_REGEX[detector.rule], _KEYWORDS[detector.rule], hash(detector.rule) % 1000)):
        assert _found(detector, text) == _found(plain, text), (seed, text)


_SKIPPING = [d for d in detect.DETECTORS if d.skip_to is not None and d.gate is None]


@pytest.mark.parametrize("detector", _SKIPPING, ids=lambda d: d.rule or d.type)
def test_own_detectors_find_the_same_values_from_their_first_strings(detector: Detector) -> None:
    plain = dataclasses.replace(detector, skip_to=None)
    for text in _texts(detector.pattern.pattern, (), 7, 40):
        assert _found(detector, text) == _found(plain, text), text


def test_the_generated_texts_hold_findings() -> None:
    """The differential tests above compare findings, not only their absence."""
    rules = _PROVIDER
    found = sum(
        1 for d in rules for text in _texts(_REGEX[d.rule], _KEYWORDS[d.rule], hash(d.rule) % 1000) if _found(d, text)
    )
    assert found > 1000


def test_first_strings() -> None:
    def strings(pattern: str) -> set[str] | None:
        head = first_strings(pattern)
        return None if head is None else set(head.pattern[len("(?i)(?:") : -1].replace("\\", "").split("|"))

    assert strings(r"\b((?:sk|rk)_(?:test|live)_[a-zA-Z0-9]{10,99})") == {"sk_", "rk_"}
    assert strings(r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}") == {"eyj"}
    assert strings(r"(?i)(?:adafruit)(?:[ \t\w.-]{0,20})") == {"ada"}
    assert strings(r"s\.[a-z0-9]{24}|hvs\.\w+") == {"s.", "hvs"}
    assert strings(r"\w+@example") is None  # any word character first
    assert strings(r"(?:https?://)?hooks") is None  # may begin with `hooks` or `http`: `h` alone
    assert strings(r"a?bc") is None  # may begin with `b`
    assert strings(r"x") is None  # one character is found nearly everywhere


def test_without_lead() -> None:
    lead = r"(?i)[\w.-]{0,50}?(?:acme)(?:[ \t\w.-]{0,20})[\s'\"]{0,3}(?:=|:)([a-z0-9]{32})"
    assert without_lead(lead) == lead.replace(r"[\w.-]{0,50}?", "")
    double = r"[\w.-]{0,50}?(?i:[\w.-]{0,50}?(?:(?-i:[Oo]kta|OKTA))[\s'\"]{0,3})(?:=|:)([a-z0-9]{42})"
    assert without_lead(double) == r"(?i:(?:(?-i:[Oo]kta|OKTA))[\s'\"]{0,3})(?:=|:)([a-z0-9]{42})"
    branches = r"(?i)[\w.-]{0,50}?(?:jira)[=:]([a-z0-9]{24})|\b(ATATT3[A-Za-z0-9_\-=]{186})"
    assert without_lead(branches) == branches  # the first start decides the branch there
    assert without_lead(r"\bsk_[a-z]+") == r"\bsk_[a-z]+"
    # The rule that cost ~1 ms a window: the same values, without the lead.
    value = "zq81bt0xnw4klp2rs9vyc3mf6hj7ud5e"
    text = "x" * 500 + " adafruit_key = " + value + "\n"
    rule = next(d for d in _PROVIDER if d.rule == "adafruit-api-key")
    assert _found(rule, text) == [(516, 548, value)]


def _engine(*cores: bytes, keyword: int = 0) -> Any:
    hyperscan = pytest.importorskip("hyperscan")
    database = hyperscan.Database()
    flags = [0 if keyword else hyperscan.HS_FLAG_SOM_LEFTMOST] * len(cores)
    database.compile(expressions=list(cores), ids=list(range(len(cores))), elements=len(cores), flags=flags)
    return database


def _spans(database: Any, data: bytes, keyword: int = 0) -> list[list[tuple[int, int]]]:
    """Per expression, the merged spans detect._Engine makes of its matches."""
    spans: dict[int, list[tuple[int, int]]] = {}

    def on_match(index: int, start: int, end: int, _flags: int, _context: object) -> None:
        if not start and keyword:
            start = max(0, end - keyword)
        found = spans.setdefault(index, [])
        if found and start <= found[-1][1]:
            found[-1] = (min(found[-1][0], start), max(found[-1][1], end))
        else:
            found.append((start, end))

    database.scan(data, match_event_handler=on_match)
    return [spans[index] for index in sorted(spans)]


def _blobby(rng: random.Random) -> bytes:
    pieces = []
    for _ in range(rng.randint(1, 30)):
        kind = rng.random()
        if kind < 0.5:
            pieces.append(
                "".join(rng.choice(string.ascii_letters + string.digits + "+/") for _ in range(rng.randint(1, 120)))
            )
        else:
            pieces.append(rng.choice([" ", "\n", "=", "_", "==", "é", "-", ".", "\\n", "\x00", ":"]))
    return "".join(pieces).encode("utf-8", "surrogatepass")


def test_blob_candidates_are_the_spans_of_its_core() -> None:
    blob = next(d for d in encoded.DETECTORS if d.rule == "encoded-blob")
    assert blob.native is encoded.blob_candidates
    database = _engine(blob.core, keyword=blob.keyword_core)
    rng = random.Random(5)
    with_spans = 0
    for _ in range(400):
        data = _blobby(rng)
        expected = [span for spans in _spans(database, data, blob.keyword_core) for span in spans]
        assert encoded.blob_candidates(data) == expected, data
        with_spans += bool(expected)
    assert with_spans > 100


def test_the_phone_core_in_parts_gives_the_spans_of_the_whole() -> None:
    phone = next(d for d in patterns.DETECTORS if d.type == "PHONE" and d.split_core)
    whole_core, parts_cores = _engine(phone.core), _engine(*phone.split_core)
    rng = random.Random(3)
    alphabet = "0123456789" * 4 + " .-()+/:@x\n,"
    checked = 0
    for _ in range(300):
        data = "".join(rng.choice(alphabet) for _ in range(rng.randint(5, 400))).encode()
        whole = [span for spans in _spans(whole_core, data) for span in spans]
        parts = detect._merge([span for spans in _spans(parts_cores, data) for span in spans])
        assert parts == whole, data
        checked += bool(whole)
    assert checked > 100
    assert provider_rules.detectors()  # the rules build with their heads


@pytest.mark.parametrize("share", [0.001, 0.05, 0.6])
def test_char_offsets_of_mostly_ascii_and_other_text(share: float) -> None:
    rng = random.Random(int(share * 1000))
    text = "".join(rng.choice("éü…東😀\ud800") if rng.random() < share else rng.choice("ab 1\n") for _ in range(20_000))
    data = text.encode("utf-8", "surrogatepass")
    expected: dict[int, int] = {}
    byte = 0
    for index, char in enumerate(text):
        expected[byte] = index
        byte += len(char.encode("utf-8", "surrogatepass"))
    expected[byte] = len(text)
    positions = [*rng.sample(sorted(expected), 500), 0, len(data)]
    assert char_offsets(data, positions, len(text)) == {p: expected[p] for p in positions}


@pytest.mark.parametrize("at", [4093, 4094, 4095, 4096, 8191])
def test_char_offsets_with_characters_across_ascii_blocks(at: int) -> None:
    # Mostly ASCII text is read in blocks (ASCII ones skipped): a character split between two
    # blocks, or at a block's edge, counts as one.
    for char in "é…😀":
        text = "a" * at + char + "b" * 9000 + char + "c"
        data = text.encode()
        positions = [0, at, at + len(char.encode()), len(data) - 1 - len(char.encode()), len(data) - 1, len(data)]
        expected = {0: 0, positions[1]: at, positions[2]: at + 1}
        expected |= {positions[3]: len(text) - 2, positions[4]: len(text) - 1, positions[5]: len(text)}
        assert char_offsets(data, positions, len(text)) == expected


@pytest.mark.parametrize("odd", ["é", "…", "😀", "\ud800", "\udfff\ud800"])
def test_utf8_of_a_long_text_in_slices_is_its_encoding(odd: str) -> None:
    rng = random.Random(7)
    for size in (8192, 8193, 50_000):
        chars = [rng.choice("ab 1\n") for _ in range(size)]
        for at in (0, 4095, 4096, 8191, size - 1):
            chars[at] = odd
        text = "".join(chars)
        assert utf8(text) == text.encode("utf-8", "surrogatepass")
        assert utf8("a" * size) == b"a" * size


def test_columns_found_in_the_shared_pass_are_those_found_alone() -> None:
    # Mostly ASCII text (a few characters of two or three bytes), so offsets are mapped with the
    # continuation bytes found once for both passes; headers on either side of them.
    table = "name,phone,ssn\nAnn,4155552671,123-45-6789\nBob,2025550143,078-05-1120\n"
    insert = "INSERT INTO people (name, mobile) VALUES ('Zoë', '07700900123');\n"
    text = ("x = 1 …\n" * 900) + table + "Größe é\n" * 700 + insert + table
    alone = sorted(id_columns.COLUMNS.find(text), key=lambda finding: finding.start)
    assert len(alone) >= 4
    found = [f for f in detect.detect(text) if f.rule.startswith(("PHONE_COLUMN", "ID_COLUMN"))]
    assert found == alone


def test_email_candidates_are_the_spans_of_its_core() -> None:
    email = next(d for d in patterns.DETECTORS if d.type == "EMAIL")
    assert email.native is patterns.email_candidates
    database = _engine(email.core)
    rng = random.Random(8)
    alphabet = "abZ" * 4 + "9@@..-_%+ \n:é/\x00"
    with_spans = 0
    for _ in range(3000):
        data = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 120))).encode()
        expected = [span for spans in _spans(database, data) for span in spans]
        assert patterns.email_candidates(data) == expected, data
        with_spans += bool(expected)
    assert with_spans > 100


def test_label_words_before_a_value_are_found_as_the_label_patterns_find_them() -> None:
    # phones._label_before and national_ids._labelled (label_window.LabelWindow) answer ASCII windows holding none of the
    # words without their regex: the answer must be the regex's, in any case and script.
    from router.privacy import national_ids, phones

    rng = random.Random(5)
    words = [*phones._LABEL_WORDS, *national_ids.LABEL_WORDS, "teL", "SSN", "Tax ID", "x", "ſms", "İd"]
    pieces = [*words, " ", ": ", "=", "\n", "1", "ab", "é", "K"]
    for _ in range(4000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        text = text.upper() if rng.random() < 0.2 else text
        for start in range(len(text) + 1):
            assert phones._label_before(text, start) == bool(phones._LABEL.search(text, max(0, start - 40), start))
            expected = bool(national_ids._LABEL.search(text, max(0, start - 48), start))
            assert national_ids._labelled(text, start, start) == expected


def test_labelled_ids_matched_at_shared_starts_find_what_their_window_search_finds() -> None:
    # detect.run matches the labelled ids' patterns only where a value may begin (found once per
    # window for all of them); windows.windows searches each window whole. Same values, same places.
    from router.privacy import windows as search_paths
    from router.privacy.taken import Taken

    labelled = [d for d in detect.DETECTORS if d.starts is not None]
    assert len(labelled) >= 15
    rng = random.Random(13)
    matched = 0
    pieces = [
        "SSN: ",
        "BSN ",
        "PESEL: ",
        "tax id ",
        "nhs number ",
        "1",
        "12",
        "123 ",
        "4567",
        "89",
        "-",
        ".",
        " ",
        "\n",
        "a",
    ]
    for _ in range(1500):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(5, 60)))
        spans = [(m.start(), m.end()) for m in re.finditer(r"(?i)ssn|bsn|pesel|tax id|nhs", text)]
        if not spans:
            continue
        shared: dict[tuple[bytes, int, int], list[list[int]]] = {}
        for detector in labelled:
            # As shipped, and with no validation (so that the random digits match often).
            for variant in (detector, dataclasses.replace(detector, validate=None)):
                expected = search_paths.windows(variant, text, spans, Taken())
                assert detect.run(variant, text, spans, Taken(), shared) == expected, (detector.rule, text)
                matched += bool(expected)
    assert matched >= 200


def test_a_head_searched_no_further_than_it_reads_finds_what_a_head_span_search_finds() -> None:
    # detect._skipping gives each detector with a head (or first strings) the head's forward reach
    # (heads.forward_reach) when it is under windows.HEAD_SPAN: its windows' searches for where a
    # match begins stop there. Same values, same places, as searching HEAD_SPAN past.
    from router.privacy import windows as search_paths
    from router.privacy.heads import forward_reach
    from router.privacy.taken import Taken

    assert forward_reach(r"ab(?![A-Za-z0-9])") == 3
    assert forward_reach(r"(?<![\w.])\d(?=x{2})") == 3
    assert forward_reach(r"(?i)(?:pass(?:word)?|pw)[0-9]{0,2}\b") == 11
    assert forward_reach(r"\d[\d .-]{6,}\d") is None
    assert forward_reach(r"(a)\1") is None
    spanned = [d for d in detect.DETECTORS if d.head_span is not None]
    assert len(spanned) >= 100
    rng = random.Random(17)
    pieces = [
        "password",
        "PASSWORD",
        "pwd",
        "token",
        "api_key",
        "secret_key",
        "Key",
        "_key",
        "bearer ",
        " = ",
        ": ",
        '"',
        "'",
        "ghp_",
        "sk-",
        "AKIA",
        "xoxb-",
        "@",
        "example.com",
        "+44 ",
        "(415) ",
        "GB82 WEST ",
        "1234",
        "56",
        "abcdefgh",
        "Zx9",
        " ",
        "\n",
        "-",
        ".",
    ]
    matched = 0
    for _ in range(600):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(5, 60)))
        for detector in spanned:
            pattern = detector.head or detector.skip_to
            assert pattern is not None
            spans = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
            if not spans:
                continue
            for variant in (detector, dataclasses.replace(detector, validate=None, check=None)):
                plain = dataclasses.replace(variant, head_span=None)
                expected = search_paths.windows(plain, text, spans, Taken())
                assert search_paths.windows(variant, text, spans, Taken()) == expected, (detector.rule, text)
                matched += bool(expected)
    assert matched >= 200

"""Known sensitive values found in text in one pass, however many a trajectory holds.

A trajectory's vault grows a few values a step (and sometimes by thousands at once, a data
dump). One regex alternation of every value costs a compilation per step and a pass per value;
here the values sit in levels of Aho-Corasick automata over runs of them in arrival order,
sized like a binary counter: new values make a new level, which merges with the last one while
that one is no bigger. Adding a few values rebuilds a small automaton, never the whole set, and
a text is read once per level (there are at most log2(values) of them); the newest few values
are looked for one by one until there are enough of them for a level of their own.

What is replaced is exactly what one alternation of the values, longest first, replaces: at the
leftmost position where a value starts, the longest value starting there, then on after it;
except that a person's name, an address or a value of `WHOLE_WORDS_UNDER` characters or fewer is
replaced only as a whole word (not `Lars` in `LassoLarsIC`, `Poly` in `PolynomialError`: a
name found once in prose otherwise mangled every identifier holding it, for the rest of the run).
"""

from __future__ import annotations

from collections.abc import Mapping

from ahocorasick_rs import AhoCorasick, BytesAhoCorasick, MatchKind

Occurrence = tuple[int, int, str]  # start, end, the value
# Values added since the last automaton was built, looked for one by one (`str.find`) until
# there are more than this: a trajectory adding a value or two a step rebuilds nothing.
LOOSE = 16
# Values this short (any kind) are replaced only where they stand as whole words.
WHOLE_WORDS_UNDER = 5
# Kinds whose values are words of ordinary text (a name, a street): whole words only.
_WORD_KINDS = ("[PERSON", "[ADDRESS")


def _wordy(char: str) -> bool:
    # ASCII only: scripts written without spaces (Chinese, Japanese, Thai) put a name right
    # against the next word (`田中さん`), and a name found there is still replaced.
    return char.isascii() and (char.isalnum() or char == "_")


def _whole(text: str, begin: int, end: int) -> bool:
    """Whether text[begin:end] stands as a whole word: no letter, digit or `_` joins it on a
    side where it begins or ends with one."""
    if begin > 0 and _wordy(text[begin]) and _wordy(text[begin - 1]):
        return False
    return not (end < len(text) and _wordy(text[end - 1]) and _wordy(text[end]))


def _occurrences(value: str, text: str) -> list[Occurrence]:
    found: list[Occurrence] = []
    at = text.find(value)
    while at >= 0:
        found.append((at, at + len(value), value))
        at = text.find(value, at + 1)
    return found


def leftmost_longest(hits: list[Occurrence]) -> list[Occurrence]:
    """Non-overlapping occurrences, as a scan from the left that takes the longest value at the
    first position where one starts would take them."""
    if len(hits) < 2:
        return hits
    hits.sort(key=lambda hit: (hit[0], -hit[1]))
    kept: list[Occurrence] = []
    cursor = 0
    for hit in hits:
        if hit[0] >= cursor:
            kept.append(hit)
            cursor = hit[1]
    return kept


class _Level:
    __slots__ = ("automaton", "end", "start")

    def __init__(self, values: list[str], start: int, end: int) -> None:
        self.start, self.end = start, end
        # Standard + overlapping: every occurrence of every value; the choice is made after.
        self.automaton = AhoCorasick(values[start:end], matchkind=MatchKind.Standard)


class ValueMatcher:
    """Values -> placeholders, and where the values occur in a text."""

    def __init__(self, values: Mapping[str, str] | None = None) -> None:
        self.values: list[str] = []  # in arrival order; `values[:n]` is the vault at size n
        self.chars = 0  # the values' total length (for a memory bound)
        self.placeholder: dict[str, str] = {}  # value -> placeholder
        self.value_of: dict[str, str] = {}  # placeholder -> value
        self._levels: list[_Level] = []
        self._built = 0  # values[:_built] are in the levels
        # The automaton of values[start:end] last asked for, over their UTF-8 (start, end, it).
        self._recent_bytes: tuple[int, int, BytesAhoCorasick] | None = None
        self._whole_words: set[str] = set()  # values replaced only as whole words
        for value, placeholder in (values or {}).items():
            self.add(value, placeholder)

    def __len__(self) -> int:
        return len(self.values)

    def add(self, value: str, placeholder: str) -> bool:
        """Know `value` as `placeholder`; False when it was known (then the placeholder is
        updated: the caller forgets what it redacted with the old one)."""
        if not value:
            return False  # an empty value occurs everywhere and means nothing
        old = self.placeholder.get(value)
        self.placeholder[value] = placeholder
        self.value_of[placeholder] = value
        if len(value) <= WHOLE_WORDS_UNDER or placeholder.startswith(_WORD_KINDS):
            self._whole_words.add(value)
        if old is not None:
            return False
        self.values.append(value)
        self.chars += len(value)
        return True

    def _levels_now(self) -> list[_Level]:
        if len(self.values) - self._built > LOOSE:
            level = _Level(self.values, self._built, len(self.values))
            while self._levels and self._levels[-1].end - self._levels[-1].start <= level.end - level.start:
                level = _Level(self.values, self._levels.pop().start, level.end)
            self._levels.append(level)
            self._built = len(self.values)
        return self._levels

    def find(self, text: str) -> list[Occurrence]:
        """Where known values occur in `text`: leftmost-longest, without overlap."""
        if not text or not self.values:
            return []
        hits: list[Occurrence] = []
        values = self.values
        for level in self._levels_now():
            start = level.start
            for index, begin, end in level.automaton.find_matches_as_indexes(text, overlapping=True):
                hits.append((begin, end, values[start + index]))
        for value in values[self._built :]:
            hits.extend(_occurrences(value, text))
        if self._whole_words:
            words = self._whole_words
            hits = [hit for hit in hits if hit[2] not in words or _whole(text, hit[0], hit[1])]
        return leftmost_longest(hits)

    def spans_since(self, known: int, data: bytes | bytearray) -> list[tuple[int, int]]:
        """Where the values added after the first `known` occur in `data` (UTF-8 text, lone
        surrogates passed through): byte spans, every occurrence. A value's UTF-8 found in UTF-8
        text starts and ends on character boundaries, so these are exactly the values' places."""
        fresh = self.values[known:]
        if not fresh or not data:
            return []
        if len(fresh) <= LOOSE:
            # One automaton per value: a single pattern is searched with memmem (~25 µs for
            # 400 KB), where a few patterns together, digits among them (a card number), defeat
            # the prefilters and cost a full automaton pass (~0.7 ms).
            spans: list[tuple[int, int]] = []
            for value in fresh:
                automaton = BytesAhoCorasick([value.encode("utf-8", "surrogatepass")])
                spans += [(begin, end) for _, begin, end in automaton.find_matches_as_indexes(data, overlapping=True)]
            return spans
        recent = self._recent_bytes
        if recent is None or recent[0] != known or recent[1] != len(self.values):
            patterns = [value.encode("utf-8", "surrogatepass") for value in fresh]
            recent = self._recent_bytes = (known, len(self.values), BytesAhoCorasick(patterns))
        return [(begin, end) for _, begin, end in recent[2].find_matches_as_indexes(data, overlapping=True)]

    def replace(self, text: str) -> tuple[str, list[str]]:
        """`text` with each known value as its placeholder; the values replaced, in order."""
        hits = self.find(text)
        if not hits:
            return text, []
        pieces: list[str] = []
        cursor = 0
        for begin, end, value in hits:
            pieces.append(text[cursor:begin])
            pieces.append(self.placeholder[value])
            cursor = end
        pieces.append(text[cursor:])
        return "".join(pieces), [hit[2] for hit in hits]

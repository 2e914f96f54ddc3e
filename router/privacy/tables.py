"""Values in named columns: a table's header row (CSV, TSV, `;`- or `|`-separated, Markdown)
or an SQL INSERT's column list says what each column holds, so a cell under `phone`, `ssn` or
`last_name` is taken with that label even when nothing beside the value names it.

A `Columns` set maps header names to a kind and a test of the value (a phone number's validity,
a national id's check digits, a name's shape). It looks for its header words first (hyperscan,
one pass; `re` without it) and parses a table only below a line that is a header: text without
such a line costs one pass and nothing more.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from router.privacy.anchors import Anchor, Anchors
from router.privacy.detector import Finding

# A header name -> (kind, rule) when the column holds that kind, else None.
Classify = Callable[[str], "tuple[str, str] | None"]
# (kind, rule, value) -> whether the cell's value is one (validity, shape).
Accept = Callable[[str, str, str], bool]
# (every header of the table, their kinds) -> the kinds, changed by what the other columns say.
Refine = Callable[[list[str], list["tuple[str, str] | None"]], list["tuple[str, str] | None"]]

_DELIMITERS = ",;\t|"
# A header cell: a name, not a number or a sentence (quotes and brackets already stripped).
_HEADER_CELL = re.compile(r"[^\W\d][\w .#()/-]{0,48}")
# Characters no header line holds (code, logs, key-value text): such a line is not parsed.
_NOT_HEADER = re.compile(rb"[=:{}<>\[\]@\\]")
_DELIMITER = re.compile(rb"[,;\t|]")
# A rule under a header: Markdown's (`|---|:--:|`), psql's (`----+-----`) and tabulate's
# (`===+===`, Airflow's tables), read as a row's whole line (`re`'s `^` would match at the text's
# start only).
_RULE_LINE = re.compile(r"[ \t]*\|?[ \t]*:?(?:-{2,}|={2,})[-=+|: \t]*\r?")
_INSERT = re.compile(r"(?is)insert\s+(?:ignore\s+|or\s+\w+\s+)?into\s+[\w.\"`\[\]]+\s*\(([^()]{1,4000})\)\s*values\s*")
# One SQL value: a quoted string ('' or \' escapes), or anything up to the next `,` or `)`.
_SQL_VALUE = re.compile(
    r"\s*(?:'((?:[^'\\]|''|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"|([^,()'\"]*(?:\([^()]*\))?[^,()'\"]*))\s*"
)


def _word_core(word: str) -> str:
    """A header word as a whole part of a name, in any case: `phone`, `home_phone`, `PHONE`,
    `homePhone` (no look-arounds: hyperscan has none)."""
    lower, title, upper = re.escape(word.lower()), re.escape(word.title()), re.escape(word.upper())
    return f"(?:(?:^|[^A-Za-z])(?:{lower}|{title}|{upper})|[a-z]{title})(?:[^a-z]|$)"


class _MayBeHeader:
    """Whether the line of a header word's match (UTF-8 bytes) may be a header: it has a
    delimiter and none of the characters of code and logs. An INSERT's match always counts.
    The last line's answer is kept: matches come in order, and a long line holding thousands of
    them is read once, not once a match."""

    def __init__(self) -> None:
        self._start, self._stop, self._answer = -1, -1, False

    def __call__(self, data: bytes, end: int) -> bool:
        if b"into" in data[max(0, end - 8) : end].lower():
            return True
        if not self._start <= end - 1 < self._stop:
            start = data.rfind(b"\n", 0, end) + 1
            stop = data.find(b"\n", end)
            stop = len(data) if stop < 0 else stop
            self._start, self._stop = start, stop
            self._answer = (
                _DELIMITER.search(data, start, stop) is not None and _NOT_HEADER.search(data, start, stop) is None
            )
        return self._answer


def normalize(header: str) -> str:
    """`First Name`, `"first-name"`, `FirstName` -> `first_name`."""
    header = header.strip().strip("\"'`[]").strip()
    header = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", header)
    return re.sub(r"[\s.\-/#()]+", "_", header).strip("_").lower()


@dataclass(frozen=True)
class _Field:
    start: int
    end: int
    value: str


def _fields(text: str, start: int, end: int, delimiter: str, most: int = 1 << 30) -> list[_Field]:
    """The fields of text[start:end] split at `delimiter`, quotes stripped, with their spans;
    no more than `most` + 1 (a row with more than its header's is no row of it)."""
    fields: list[_Field] = []
    position = start
    while True:
        while position < end and text[position] in " \t":
            position += 1
        if position < end and text[position] == '"':
            close = position + 1
            while True:
                close = text.find('"', close, end)
                if close < 0 or text[close + 1 : close + 2] != '"':
                    break
                close += 2
            if close < 0:
                close = end
            value_start, value_end = position + 1, close
            after = text.find(delimiter, close, end)
        else:
            after = text.find(delimiter, position, end)
            value_start, value_end = position, end if after < 0 else after
            while value_end > value_start and text[value_end - 1] in " \t\r":
                value_end -= 1
        fields.append(_Field(value_start, value_end, text[value_start:value_end]))
        if after < 0 or len(fields) > most:
            return fields
        position = after + 1


def _occurrences(text: str, word: str) -> Iterator[int]:
    position = text.find(word)
    while position >= 0:
        yield position
        position = text.find(word, position + 1)


def _line(text: str, position: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    return start, len(text) if end < 0 else end


def _strip_pipes(text: str, start: int, end: int) -> tuple[int, int]:
    """A Markdown row's outer pipes are not delimiters of empty first and last columns."""
    while start < end and text[start] in " \t":
        start += 1
    while end > start and text[end - 1] in " \t\r":
        end -= 1
    if start < end and text[start] == "|" and text[end - 1] == "|" and end - start > 1:
        return start + 1, end - 1
    return start, end


class Columns:
    """The columns of one or more kinds, found by their header names."""

    def __init__(
        self,
        words: tuple[str, ...],
        classify: Classify,
        accept: Accept,
        refine: Refine | None = None,
        headers: tuple[str, ...] = (),
    ) -> None:
        self._refine = refine
        self._classify = classify
        self._accept = accept
        # The header words, then an INSERT's start (caseless), then other ways a header line may
        # be told (`headers`: caseless expressions, for words that name a column only beside
        # another, `first,last`): one pass over the text.
        self._anchors = Anchors(
            [
                *(Anchor(_word_core(w)) for w in words),
                Anchor(r"insert\s+(?:\w+\s+)?into", True),
                *(Anchor(h, True) for h in headers),
            ]
        )
        self._insert = len(words)

    @property
    def anchors(self) -> Anchors:
        """The header words and the INSERT's start, for a caller that scans for them in its own
        pass (`find(…, scanned=…)`)."""
        return self._anchors

    def find(
        self,
        text: str,
        data: bytes | None = None,
        scanned: dict[int, list[int]] | None = None,
        continuation: list[int] | None = None,
    ) -> list[Finding]:
        """Every accepted value in a named column of a table or an SQL INSERT in `text` (`data`:
        its UTF-8, when the caller has it; `scanned`, `continuation`: see `Anchors.ends`)."""
        found: list[Finding] = []
        hits = self._anchors.ends(text, _MayBeHeader(), data, scanned, continuation)
        inserts = hits.pop(self._insert, None)
        line_end = -1
        for position in sorted(p for ends in hits.values() for p in ends):
            if position - 1 < line_end:
                # The line of the match before, or a row of the table parsed from it: a table's
                # rows are read once, not again from each row that names a column (`Ann,cell`
                # under `name,phone`), which made a table of n such rows cost n^2.
                continue
            start, line_end = _line(text, max(0, position - 1))
            line_end = max(line_end, self._table(text, start, line_end, found))
        if inserts:
            found.extend(self._inserts(text))
        return found

    def _kinds(self, headers: list[str]) -> list[tuple[str, str] | None]:
        kinds = [self._classify(header) for header in headers]
        return kinds if self._refine is None else self._refine(headers, kinds)

    def _header(self, text: str, start: int, end: int) -> tuple[str, list[tuple[str, str] | None]] | None:
        """The line's delimiter and the kind of each column, when the line is a header naming one."""
        start, end = _strip_pipes(text, start, end)
        line = text[start:end]
        counts = [(line.count(d), d) for d in _DELIMITERS]
        count, delimiter = max(counts)
        if count == 0 or count > 200:
            return None
        cells = [f.value.strip() for f in _fields(text, start, end, delimiter)]
        if not all(_HEADER_CELL.fullmatch(cell) for cell in cells):
            return None
        kinds = self._kinds([normalize(cell) for cell in cells])
        if not any(kinds):
            return None
        return delimiter, kinds

    def _table(self, text: str, start: int, end: int, found: list[Finding]) -> int:
        """Adds the accepted cells of the table whose header may be text[start:end] to `found`;
        returns where its last row ends (`end` when the line is no header)."""
        header = self._header(text, start, end)
        if header is None:
            return end
        delimiter, kinds = header
        last = end
        position = end + 1
        while position < len(text):
            row_start, row_end = _line(text, position)
            position = row_end + 1
            if not text[row_start:row_end].strip():
                break
            low, high = _strip_pipes(text, row_start, row_end)
            if delimiter == "|" and _RULE_LINE.fullmatch(text, row_start, row_end):
                last = row_end
                continue
            fields = _fields(text, low, high, delimiter, len(kinds))
            if len(fields) != len(kinds):
                break  # the table ended (or the row is not one of its rows)
            for field, kind in zip(fields, kinds, strict=True):
                found.extend(self._cell(kind, field))
            last = row_end
        return last

    def _cell(self, kind: tuple[str, str] | None, field: _Field) -> Iterator[Finding]:
        if kind is None or not field.value.strip():
            return
        value = field.value.strip()
        start = field.start + (len(field.value) - len(field.value.lstrip()))
        if self._accept(kind[0], kind[1], value):
            yield Finding(kind[0], value, start, start + len(value), kind[1])

    def _inserts(self, text: str) -> Iterator[Finding]:
        starts = sorted(i for word in ("INSERT", "insert", "Insert") for i in _occurrences(text, word))
        for start in starts:
            match = _INSERT.match(text, start)
            if match is None or (start and text[start - 1].isalnum()):
                continue
            names = [normalize(name) for name in match.group(1).split(",")]
            kinds = self._kinds(names)
            if any(kinds):
                yield from self._rows(text, match.end(), kinds)

    def _rows(self, text: str, position: int, kinds: list[tuple[str, str] | None]) -> Iterator[Finding]:
        """The tuples after VALUES: `(1, 'Ann', NULL), (2, 'Bob', now())`."""
        while position < len(text) and text[position] == "(":
            position += 1
            column = 0
            while position < len(text):
                value = _SQL_VALUE.match(text, position)
                if value is None:
                    return
                group = next((g for g in (1, 2, 3) if value.group(g) is not None), 3)
                if column < len(kinds) and group in (1, 2):
                    yield from self._cell(
                        kinds[column], _Field(value.start(group), value.end(group), value.group(group))
                    )
                position = value.end()
                if position >= len(text) or text[position] not in ",)":
                    return
                position += 1
                column += 1
                if text[position - 1] == ")":
                    break
            while position < len(text) and text[position] in " \t\r\n,":
                position += 1

"""Authors and owners in code, packages and bibliographies: `@author`, a copyright holder,
`TODO(name)`, a manifest's people, R's `person("Given", "Family")`, BibTeX's `author = {…}`,
`git shortlog`'s lines and the names under a file's `# Authors` heading."""

from __future__ import annotations

import re
from collections.abc import Iterator

from router.privacy.names.forms import CAPITAL, FULL, INITIALLED
from router.privacy.names.lists import family_names, given_names, place_names
from router.privacy.names.words import name_shaped, name_words, read_full_name, words_of

# A documentation comment's author tag (Javadoc, JSDoc, PHPDoc: `@author Cosmin Raghunathan`).
AT_AUTHOR = re.compile(rf"(?<![\w@])@(?:author|maintainer)[ \t]+({FULL})")
# R's `person("Given", "Family", …)` (a DESCRIPTION's `Authors@R`).
R_PERSON = re.compile(
    rf"(?<![\w.])person\([ \t]*(?:given[ \t]*=[ \t]*)?[\"']({FULL})[\"'][ \t]*,[ \t]*"
    rf"(?:family[ \t]*=[ \t]*)?[\"']({FULL})[\"']"
)


def read_r_person(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    """R's `person("Given", "Family")`: both parts, each a name's shape."""
    if name_shaped(match.group(1)) and name_shaped(match.group(2)):
        yield match.start(1), match.end(1), rule
        yield match.start(2), match.end(2), rule


# A licence's or a header's copyright holder (`Copyright (c) 2021-2024 Signe Lindqvist`).
COPYRIGHT = re.compile(
    rf"(?i:copyright)[ \t]+(?:(?:\((?i:c)\)|©)[ \t]*)?(?:\d{{4}}(?:[ \t]*[-–,][ \t]*\d{{4}})*,?[ \t]+)?(?-i:({FULL}))"
)


def read_copyright(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    """A copyright holder that is a full name (`read_full_name`), not an institution's first
    words (`California Institute of Technology`: a listed place, or `of` after it)."""
    words = [w.lower() for w in words_of(match.group(1))]
    if text.startswith((" of ", "\tof "), match.end(1)) or any(
        w in place_names() and w not in given_names() and w not in family_names() for w in words
    ):
        return
    yield from read_full_name(text, match, rule)


# A to-do's owner (`TODO(Radomir):`, `FIXME(Anouk)`).
TODO_OWNER = re.compile(rf"(?<![\w])(?:TODO|FIXME|XXX|HACK|NOTE)\(({CAPITAL}(?:[ \t]+{CAPITAL})?)\)")
# A manifest's list of people as strings (`"contributors": ["Radomir Pryce <…>"]`).
PEOPLE_LIST = re.compile(r"(?i)(?<![\w-])(?:authors|maintainers|contributors|developers)[\"']?[ \t]*[:=][ \t]*\[")
_LIST_ITEM = re.compile(rf"[\"']({FULL})(?:[ \t]*<[^<>\s]+>)?(?:[ \t]*\([^()\s]+\))?[\"']")


def read_people_list(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    """The strings of a manifest's list of people (up to its `]`, 600 characters at most) that
    are full names (`read_full_name`'s test), an address or a homepage after the name allowed."""
    end = text.find("]", match.end(), match.end() + 600)
    for item in _LIST_ITEM.finditer(text, match.end(), end if end >= 0 else match.end() + 600):
        yield from read_full_name(text, item, rule)


# `git shortlog -sn`'s lines: a count, a tab, the author.
SHORTLOG = re.compile(rf"^[ \t]*\d+\t({INITIALLED})[ \t]*$", re.MULTILINE)


# BibTeX's people (`author = {Okafor, Ottilie and Ken Mbeki}`), `and` between them.
BIBTEX_PEOPLE = re.compile(r"(?i:(?<![\w-])(?:author|editor)[ \t]*=[ \t]*)[{\"]([^{}\"\n]{3,600})[}\"]")
_BIBTEX_AND = re.compile(r"[ \t]+and[ \t]+")


def read_bibtex(text: str, match: re.Match[str], _rule: str) -> Iterator[tuple[int, int, str]]:
    return _bibtex_people(text, *match.span(1))


def _bibtex_people(text: str, start: int, end: int) -> Iterator[tuple[int, int, str]]:
    """Each person of a BibTeX field's value (`Last, First` or `First Last`)."""
    at = start
    for joint in [*_BIBTEX_AND.finditer(text, start, end), None]:
        stop = end if joint is None else joint.start()
        part = text[at:stop]
        pieces = part.split(",", 1)
        offsets = [at, at + len(pieces[0]) + 1]
        for piece, offset in zip(pieces, offsets, strict=False):
            value = piece.strip()
            if value and name_shaped(value) and name_words(value) is not None:
                begin = offset + piece.index(value)
                yield begin, begin + len(value), "name-bibtex"
        if joint is not None:
            at = joint.end()


# A file's or a section's list of its people, under its heading (`# Authors`, `Contributors:`).
PEOPLE_HEADING = re.compile(
    r"(?im)^[ \t#=*-]*(?:authors?|contributors?|maintainers?|credits|people|thanks[ \t]+to)\b[^\n]{0,60}\n"
)
_PEOPLE_LINE = re.compile(
    rf"[ \t]*(?:[-*+][ \t]+)?({INITIALLED})(?:[ \t]+(?:\([^()\n]*\)|<[^<>\n]*>|[-–—][^\n]*))?[ \t]*$"
)


def read_people_heading(text: str, match: re.Match[str], _rule: str) -> Iterator[tuple[int, int, str]]:
    return _people_lines(text, match.end())


_PEOPLE_LINES = 100  # lines read under a people heading


def _people_lines(text: str, start: int) -> Iterator[tuple[int, int, str]]:
    """The names alone on the lines under a people heading (two words or more, each listed or no
    everyday word), to the next heading or after `_PEOPLE_LINES` lines."""
    at = start
    for _ in range(_PEOPLE_LINES):
        if at >= len(text):
            return
        newline = text.find("\n", at)
        stop = len(text) if newline < 0 else newline
        line = text[at:stop]
        if line.lstrip().startswith(("#", "=")):
            return
        match = _PEOPLE_LINE.match(text, at, stop)
        if match is not None:
            value = match.group(1)
            if len(words_of(value)) >= 2 and name_shaped(value) and name_words(value) is not None:
                yield match.start(1), match.end(1), "name-listed"
        at = stop + 1

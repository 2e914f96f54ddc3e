"""The names package's entry point, the finder of the opt-in kind `person` (opt_in.py):
`find_rules` (the names the rules find by context) and `find` (those, the prose model's names in
running text (names_model.py) and the other places of each full name found), with look-alikes
dropped: firms, streets, places, software."""

from __future__ import annotations

from router.privacy import names_model
from router.privacy.anchors import longest_first
from router.privacy.detector import Finding
from router.privacy.names.addressing import addressed, addressed_last, asked
from router.privacy.names.columns import COLUMNS
from router.privacy.names.enumerations import enumerated
from router.privacy.names.free_text import in_free_text
from router.privacy.names.labels import headings
from router.privacy.names.lookalikes import UNCUED, no_firms, not_people
from router.privacy.names.messages import OPENING, speaker_labels
from router.privacy.names.rules import anchored
from router.privacy.names.software import SOFTWARE_READ, no_software
from router.privacy.names.words import name_words


def _tidied(text: str, found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The spans without a greeting before the name (`Hi Carlos` is `Carlos`) or a possessive
    ending after it (`Maite Lemmens's` is `Maite Lemmens`: a name's words may hold an apostrophe,
    `O'Connor`, so a candidate carries its `'s` along)."""
    tidy = []
    for start, end, rule in found:
        greeting = OPENING.match(text, start, end)
        if greeting is not None and greeting.end() < end:
            start = greeting.end()
        if end - start > 3 and text[end - 2 : end] in ("'s", "’s"):
            end -= 2
        tidy.append((start, end, rule))
    return tidy


def _by_rules(text: str) -> list[tuple[int, int, str]]:
    """The rules' names (start, end, rule), overlapping."""
    found = [(f.start, f.end, f.rule) for f in COLUMNS.find(text)]
    found.extend(anchored(text))
    found.extend(in_free_text(text))
    found.extend(speaker_labels(text))
    found.extend(headings(text))
    found.extend(enumerated(text))
    found.extend(addressed(text))
    found.extend(addressed_last(text))
    found.extend(asked(text))
    return found


def find_rules(text: str) -> list[Finding]:
    """Every person's name found in `text` by its context (non-overlapping, earliest first)."""
    return longest_first("PERSON", text, _tidied(text, no_firms(text, _by_rules(text))))


# A name found is the same person's at its other places: the full names (two words or more)
# found are looked for again, as whole words, in any line (a heading's name repeated in the record
# below it, a signature's in the quoted reply). At most this many distinct names.
_AGAIN_NAMES = 64


def _again(text: str, found: list[Finding]) -> list[tuple[int, int, str]]:
    """The other places of the full names in `found` that a cue found (whole words, the same
    letters; the prose model looks for its own again, names_model.py)."""
    # (Each word listed or no everyday word: a firm or a place taken for a name, `Kellynch Hall`,
    # is not spread further.)
    names = {
        f.value
        for f in found
        if f.rule not in UNCUED and " " in f.value and len(f.value) >= 6 and name_words(f.value) is not None
    }
    taken = {(f.start, f.end) for f in found}
    places: list[tuple[int, int, str]] = []
    for name in sorted(names)[:_AGAIN_NAMES]:
        start = text.find(name)
        while start >= 0:
            end = start + len(name)
            before = text[start - 1] if start else " "
            after = text[end] if end < len(text) else " "
            if (
                (start, end) not in taken
                and not (before.isalnum() or before in "_@")
                and not (after.isalnum() or after == "_")
            ):
                places.append((start, end, "name-again"))
            start = text.find(name, end)
    return places


def find(text: str) -> list[Finding]:
    """Names found by their context, and names in running text the prose model finds
    (names_model.py), and their other places, non-overlapping, earliest first."""
    found = _by_rules(text)
    known = [(start, end) for start, end, _rule in found]
    found.extend((start, end, "name-model") for start, end in names_model.find(text, known))
    found = no_software(text, not_people(text, found), SOFTWARE_READ)
    first = longest_first("PERSON", text, _tidied(text, found))
    places = _again(text, first)
    if not places:
        return first
    return longest_first("PERSON", text, [*((f.start, f.end, f.rule) for f in first), *places])

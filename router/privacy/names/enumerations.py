"""Lists of people after a colon (`Attendees: Ana Lima, Priya Nair and Tomás`, `they had 6:
silvana, adam, christopher and caleb`): each item a name when the list reads as one of people."""

from __future__ import annotations

import re
from collections.abc import Iterator

from router.privacy import names_model
from router.privacy.names.forms import CAPITAL, JOINING, LOWER_LETTER
from router.privacy.names.lists import AMBIGUOUS, STOP, family_names, given_names
from router.privacy.names.words import name_shaped, name_words, words_of

# A list of people after a colon (`our 3 founders: Kónya, Becker and Vasquez`, `Attendees: Ana
# Lima, Priya Nair and Tomás`): three items or more, each one to three name-cased words, the last
# joined by `and`, `or` or `&`, or by a comma where the list ends the line (`Attendees: Farida,
# Niamh, Yusuf`).
_ITEM = rf"{CAPITAL}(?:[ \t]+{CAPITAL}){{0,2}}"
_ENUMERATION = re.compile(
    rf":[ \t]*({_ITEM}(?:,[ \t]+{_ITEM}){{1,12}}"
    rf"(?:,?[ \t]+(?:and|or|&)[ \t]+{_ITEM}(?![\w'’-])|(?=[ \t]*(?:[.;]?[ \t]*$))))",
    re.MULTILINE,
)
_ITEM_PATTERN = re.compile(_ITEM)
# The same in lower case (`they had 6: silvana, adam, christopher and caleb`): single words.
_LOWER_ITEM = rf"{LOWER_LETTER}{{2,}}"
_ENUMERATION_LOWER = re.compile(
    rf":[ \t]*({_LOWER_ITEM}(?:,[ \t]+{_LOWER_ITEM}){{1,12}},?[ \t]+(?:and|or|&)[ \t]+{_LOWER_ITEM})(?![\w'’-])"
)
_LOWER_ITEM_PATTERN = re.compile(_LOWER_ITEM)


def _among_names(value: str) -> bool:
    """A list's item that is a name among names: a listed given name (`Sherry`), or words each
    listed or no everyday word, none software's (`Tom Martin`)."""
    given, family = given_names(), family_names()
    if value.lower() in given:
        return True
    everyday: frozenset[str] = names_model.model()["lexicon"]
    words = [w.lower() for w in words_of(value) if not JOINING.fullmatch(w)]
    return len(words) >= 2 and all(
        w not in names_model.NEVER
        and w not in STOP
        and (w in given or w in family or (w not in everyday and w not in AMBIGUOUS))
        for w in words
    )


def enumerated(text: str) -> Iterator[tuple[int, int, str]]:
    """Each item of a list of people (`_ENUMERATION`) when two items or more hold a listed name
    and every item is a name in form (`name_shaped`, `name_words`). One item that is not (`Python,
    Go and Ruby`) and the list is no list of people."""
    if ":" not in text:
        return
    for match in _ENUMERATION.finditer(text):
        items = list(_ITEM_PATTERN.finditer(text, *match.span(1)))
        # An item that is an everyday word too is a name among names when listed (`Sherry`), and
        # so is one whose words are each listed or no everyday word, an ambiguous one among them
        # (`Tom Martin`, `Martin Gonzales`: `Martin` is a make of car too).
        counts = [name_words(item.group()) if name_shaped(item.group()) else None for item in items]
        counts = [
            0 if count is None and name_shaped(item.group()) and _among_names(item.group()) else count
            for item, count in zip(items, counts, strict=True)
        ]
        if len(items) >= 3 and None not in counts and sum(1 for count in counts if count) >= 2:
            for item in items:
                yield item.start(), item.end(), "name-list"
    yield from _enumerated_lower(text)


def _enumerated_lower(text: str) -> Iterator[tuple[int, int, str]]:
    """Each item of a list in lower case (`_ENUMERATION_LOWER`) when three or more items are
    listed given names that are no everyday word and the rest are listed or no everyday word
    either (not `colours: red, amber, olive and rose`, `deps: flask, celery and redis`)."""
    everyday: frozenset[str] = names_model.model()["lexicon"]
    given = given_names()
    for match in _ENUMERATION_LOWER.finditer(text):
        items = [
            item for item in _LOWER_ITEM_PATTERN.finditer(text, *match.span(1)) if item.group() not in ("and", "or")
        ]
        words = [item.group() for item in items]
        sure = sum(1 for w in words if w in given and w not in AMBIGUOUS and w not in everyday)
        if sure >= 3 and all(
            w in given or not (names_model.everyday(w, everyday) or w in STOP or w in names_model.NEVER) for w in words
        ):
            for item in items:
                yield item.start(), item.end(), "name-list"

"""The name lists (data/, SOURCES.md), read once: given names (hand-written and the US
records'), family names, the ambiguous and stop words, places, peoples and faiths, and software.
Every rule and look-alike of the names package reads its words here; the prose model
(names_model.py) was trained with the hand-written ones as its feature."""

from __future__ import annotations

import functools
from importlib import resources


@functools.cache
def _names(file: str) -> frozenset[str]:
    text = resources.files("router.privacy").joinpath("data", file).read_text(encoding="utf-8")
    return frozenset(w.lower() for line in text.splitlines() if not line.startswith("#") for w in line.split())


@functools.cache
def given_names() -> frozenset[str]:
    """Every listed given name: the hand-written lists and the US records' (data/SOURCES.md)."""
    return hand_given_names() | _names("given_names_us.txt")


def hand_given_names() -> frozenset[str]:
    """The hand-written given names (the prose model was trained with these as its feature)."""
    return _names("first_names.txt")


def family_names() -> frozenset[str]:
    return _names("surnames.txt")


def ambiguous_words() -> frozenset[str]:
    return _names("ambiguous_words.txt")


def stop_words() -> frozenset[str]:
    return _names("stop_words.txt")


# Given names and family names that are also everyday capitalised words (`Will you…`, `Mark as
# done`, `Long Term Support`): in free text they count only beside stronger evidence.
AMBIGUOUS = _names("ambiguous_words.txt")
# Capitalised words that are not names wherever they stand (teams, products, places in prose).
STOP = _names("stop_words.txt")


@functools.cache
def raw_names() -> tuple[str, ...]:
    """The listed names as written (capitalised), for the free-text anchor."""
    words: set[str] = set()
    for file in ("first_names.txt", "given_names_us.txt", "surnames.txt"):
        text = resources.files("router.privacy").joinpath("data", file).read_text(encoding="utf-8")
        words.update(w for line in text.splitlines() if not line.startswith("#") for w in line.split())
    return tuple(sorted(words))


@functools.cache
def place_names() -> frozenset[str]:
    """Places, peoples and faiths (data/places.txt, data/countries.txt), lower case, one space
    between words."""
    listed = (
        line.strip().lower()
        for file in ("places.txt", "countries.txt")
        for line in resources.files("router.privacy").joinpath("data", file).read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    )
    return frozenset(" ".join(place.split()) for place in listed)


@functools.cache
def software() -> frozenset[str]:
    """Names of software, languages and formats (data/software.txt), lower case."""
    return _names("software.txt")

"""What a value's words say of it: a name's form (`name_shaped`), listed names among them
(`any_listed`, `name_words`), a name a greeting could address (`addressed_name`), a full name
(`read_full_name`, the reader several rules share); and where a name found starts and ends
(`trim`, `without_lead`). The tests every rule asks of what it read."""

from __future__ import annotations

import re
from collections.abc import Iterator

from router.privacy import names_model
from router.privacy.names.forms import JOINING, NAME_CASED, PARTICLE
from router.privacy.names.lists import AMBIGUOUS, STOP, family_names, given_names

# Clinical notes' abbreviations, capitalised as names are (`Pt's daughter`, `Hx:`). (Kept apart
# from the stop words, which the prose model was trained with.)
_CLINICAL = frozenset({"pt", "pts", "hx", "dx", "rx", "sx", "tx"})


def words_of(value: str) -> list[str]:
    return [w for w in re.split(r"[ \t]+", value.rstrip(".")) if w]


def is_capitalised(word: str) -> bool:
    return word[:1].isupper() and not (word.isupper() and len(word) > 3)


def name_shaped(value: str, allow_upper: bool = False) -> bool:
    """A person's name in form: 1-4 capitalised words (particles aside), none a stop word."""
    words = words_of(value)
    if not words or len(words) > 5 or len(value) > 60:
        return False
    # Particles and a middle initial without its period (`Martim A Pereira`: `a` is a stop word).
    named = [
        w
        for i, w in enumerate(words)
        if not re.fullmatch(PARTICLE, w) and not (0 < i < len(words) - 1 and re.fullmatch("[A-Z]", w))
    ]
    if not named:
        return False
    for word in named:
        if word.lower() in STOP or word.lower() in _CLINICAL or re.fullmatch(r"I['’](?:m|d|ll|ve)", word):
            return False
        if not (is_capitalised(word) or (allow_upper and word.isupper())):
            return False
    return True


def any_listed(value: str) -> bool:
    given, family = given_names(), family_names()
    return any(w.lower() in given or w.lower() in family for w in words_of(value))


def name_words(value: str) -> int | None:
    """How many of `value`'s words (initials and particles aside) are listed names (no ambiguous
    word), when each is cased as a name, none is a word of a machine or of code
    (`names_model.NEVER`) and each is listed or no everyday word; else None."""
    everyday: frozenset[str] = names_model.model()["lexicon"]
    given, family = given_names(), family_names()
    listed = 0
    for word in words_of(value):
        if JOINING.fullmatch(word):
            continue
        low = word.lower()
        if not NAME_CASED.fullmatch(word) or low in names_model.NEVER:
            return None
        if (low in given or low in family) and low not in AMBIGUOUS:
            listed += 1
        elif low in everyday or low in AMBIGUOUS:
            return None
    return listed


# Given names that are everyday words too: a name only with a family name after them (`Warm
# regards, Bill Gottlieb`), never alone (`Thanks, Bill`, `Best, Will`).
_EVERYDAY_GIVEN = frozenset(
    (
        "bill",
        "will",
        "mark",
        "rich",
        "dawn",
        "don",
        "pat",
        "grace",
        "hope",
        "joy",
        "faith",
        "jack",
        "frank",
        "ray",
        "art",
        "bob",
        "rob",
        "drew",
        "gene",
        "guy",
        "max",
        "miles",
        "sandy",
        "chase",
        "wade",
        "cliff",
        "dean",
        "glen",
        "herb",
        "jay",
        "lance",
        "nick",
        "penny",
        "ruby",
        "rusty",
        "sky",
        "summer",
        "victor",
        "warren",
        "wolf",
        "bud",
        "chip",
        "chuck",
        "dick",
        "hank",
        "kit",
        "matt",
        "pete",
        "ron",
        "ted",
        "tom",
    )
)


def addressed_name(value: str) -> bool:
    """A name a greeting or a sign-off addresses (`Hi Anselm,`, `Thanks Anselm!`): a listed
    name, or words cased as names none of which is an everyday word or software's (`Hello
    World!`, `Thanks Jenkins!`, `Hi Team,` are none); a given name that is an everyday word too
    leads a name of two words or more (`Bill Gottlieb`)."""
    everyday: frozenset[str] = names_model.model()["lexicon"]
    given = given_names()
    words = words_of(value)
    for index, word in enumerate(words):
        low = word.lower()
        if JOINING.fullmatch(word):
            continue
        if low in names_model.NEVER or low in STOP or not NAME_CASED.fullmatch(word):
            return False
        if index == 0 and len(words) >= 2 and low in _EVERYDAY_GIVEN:
            continue
        if low not in given and (names_model.everyday(low, everyday) or low.endswith(("ed", "ing"))):
            return False  # (a verb's forms the lexicon lacks: `Thanks, Merged`)
    return True


def read_full_name(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    """A name of two words or more, each listed or no everyday word (`git shortlog`'s lines, a Notes
    address): the rule's first group."""
    value = match.group(1)
    if len(words_of(value)) >= 2 and name_shaped(value) and name_words(value) is not None:
        yield match.start(1), match.end(1), rule


# A run's first word and the blanks after it.
FIRST_WORD = re.compile(r"([^ \t]+)[ \t]+")


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Without a trailing word that is not part of a name (`Ana Lima Team` keeps `Ana Lima`)."""
    value = text[start:end]
    words = words_of(value)
    while len(words) > 1 and words[-1].lower() in STOP:
        words.pop()
    kept = " ".join(words)
    if value.startswith(kept):
        return start, start + len(kept)
    return start, end


def without_lead(text: str, start: int, end: int) -> tuple[int, int]:
    """Without leading words that are everyday words and no listed name: a sentence's first word
    is capitalised too (`Contact Priya Raman`, `Patient Maria Gonzalez`, `Ask Svetlana`)."""
    everyday: frozenset[str] = names_model.model()["lexicon"]
    given, family = given_names(), family_names()
    while (lead := FIRST_WORD.match(text, start, end)) is not None:
        word = lead.group(1).lower()
        if word not in everyday or word in given or word in family:
            break
        start = lead.end()
    return start, end

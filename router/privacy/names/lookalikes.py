"""Firms, streets, institutions and fields taken for people: a firm's legal form
(`Fernandez Inc.`), a firm named after its partners (`Hawkins, Richardson and Santana`), a
street's type (`Marina Fort Street`), an institution's kind (`Kennedy Space Center`), a field
that names a place or a work (`city: 'Austin'`, `title="Jane Eyre"`), and a place (places.py).
Firms are dropped from every rule's names, the rest from the uncued rules' (`UNCUED`)."""

from __future__ import annotations

import re

from router.privacy import names_model
from router.privacy.names.lists import family_names, given_names
from router.privacy.names.places import a_place
from router.privacy.names.words import words_of

# The rules that read a name from its words alone, with no cue beside it (a listed name in free
# text, a listed given name acting, the prose model): these take a firm's or a street's name for
# a person's, which `not_people` drops.
UNCUED = frozenset({"name-text", "name-acts", "name-model"})
_CAP_WORD = rf"{names_model._UPPER}{names_model._LOWER}+"
# A surname in a firm's name, `Mc`, `Mac` and `O'` ones too (`Feil, McCullough and Jacobs`).
_SURNAME = rf"(?:Mc|Mac|O['’])?{_CAP_WORD}"
# A firm named after its partners (`Hawkins, Richardson and Santana`, `the Jones, Smith and Davis
# Orchestra`): three to five single capitalised words, commas between them, `and` or `&` before
# the last. People listed so follow a colon (`our 3 founders: Kónya, Becker and Vasquez`, read by
# `enumerated`) or hold a given name (`Tom, Dick and Harry`): those stay names.
_FIRM = re.compile(
    rf"(?<![\w'’-])(?:{_SURNAME})(?:,[ \t]+{_SURNAME}){{1,3}},?[ \t]+(?:and|&)[ \t]+{_SURNAME}"
    r"(?![\w-]|['’](?!s\b))"
)
_FIRM_ITEM = re.compile(_SURNAME)
# Two surnames a spaced dash joins (`Kemmer - Becker`, `Ritchie - Lindgren`): a firm's name; a
# person's double surname is written without the spaces (`Gislason-Tillman`). A firm of one
# family (`Herzog and Sons`).
_FIRM_PAIR = re.compile(rf"(?<![\w'’-]){_SURNAME}[ \t]+[-–][ \t]+{_SURNAME}(?![\w-]|['’](?!s\b))")
_SONS_NEXT = re.compile(r"[ \t]+(?:and|&)[ \t]+(?:Sons|Daughters|Brothers|Bros\.?)(?![\w'’-])")
# A currency's name taken for a person's (`Swiss Franc`, `Malagasy Ariary`, `Rand 270.68k`): its
# unit last in a run, or a unit alone beside an amount.
_CURRENCY_UNITS = (
    r"Franc|Peso|Rupee|Dollar|Pound|Lev|Leu|Dram|Ariary|Sol|Rial|Riyal|Dinar|Dirham|Krona|Krone|Kuna|Lira"
    r"|Shilling|Yen|Yuan|Won|Rand|Kip|Kina|Leone|Sheqel|Shekel|Real|Ruble|Rouble|Rupiah|Ringgit|Baht|Dong"
    r"|Zloty|Forint|Koruna|Lari|Manat|Som|Tenge|Taka|Kwacha|Cedi|Naira|Birr|Afghani|Lempira|Quetzal|Colon"
    r"|Balboa|Guarani|Boliviano|Escudo|Ouguiya|Pula|Loti|Lilangeni|Metical|Kwanza|Dalasi|Nakfa|Ngultrum"
    r"|Tala|Vatu|Rufiyaa|Kyat|Riel|Tugrik|Pataca|Denar|Hryvnia|Gourde|Dobra|Somoni|Sum"
)
_CURRENCY_LAST = re.compile(rf"[ \t](?:{_CURRENCY_UNITS})$|^(?:Rial|Riyal|Dinar|Peso)[ \t]")
_CURRENCY_ALONE = re.compile(rf"(?:{_CURRENCY_UNITS})$")
_AMOUNT_NEXT = re.compile(r"[ \t]?(?:[\d.,]+[kmb]?\b|\(code)")
_AMOUNT_BEFORE = re.compile(r"(?:\d[kmb]?|(?i:currency|paid[ \t]+in|pay[ \t]+in|payment[ \t]+of))[ \t]*$")
_CITED_YEAR = re.compile(r",?[ \t]*\(?(?:1[5-9]|20)\d\d\b")
# A street's name (`Marina Fort Street`, `Zachary Cliffs`, `Monika Union`: a person's name then the
# street's type, one word between at most): the types that are neither everyday words beside a
# name nor family names (`Green`, `Hill`, `Way` are left out).
_STREET_AFTER = re.compile(
    rf"(?:[ \t]+{_CAP_WORD})?[ \t]+(?:Street|Avenue|Road|Boulevard|Lane|Drive|Parkway|Highway|Terrace|Crescent"
    r"|Plaza|Square|Islands|Cliffs|Heights|Springs|Estates|Union|Point|Stravenue|Crossroad|Expressway|Freeway"
    r"|Ave|Blvd|Rd|Ln|Pkwy|Hwy)\.?(?![\w'’-])"
)

# The same types ending a run the prose model took for a name (`Zachary Cliffs`, `Nino Point`).
_STREET_LAST = re.compile(_STREET_AFTER.pattern.removeprefix(rf"(?:[ \t]+{_CAP_WORD})?") + "$")


# A run taken for a name that ends in the kind of a place or an institution named after a person
# (`Kennedy Space Center`, `Lincoln Memorial`, `Nobel Prize`): the kinds that are no family names
# too (`Hall`, `Park`, `Church`, `Lake` are left out: `Stuart Hall` is a person).
_INSTITUTIONS = (
    r"(?:Center|Centre|Airport|Memorial|University|College|Institute|School|Academy|Hospital|Museum|Library"
    r"|Stadium|Station|Foundation|Prize|Award|Trophy|Fellowship|Scholarship|Theatre|Theater|Cathedral"
    r"|Observatory|Laboratory|Laboratories|District|County|Township)"
)
INSTITUTION_LAST = re.compile(rf"(?<![\w'’-]){_INSTITUTIONS}$")
# A single word taken for a name, then capitalised words that end in such a kind (`Kennedy` of
# `Kennedy Space Center`): a full name before an institution stays (`Priya Nair School of …`,
# a signature's line run together).
_INSTITUTION_AFTER = re.compile(rf"(?:[ \t]+{_CAP_WORD}){{0,2}}[ \t]+{_INSTITUTIONS}(?![\w'’-])")


# The value of a field that names a work (`Book.objects.create(title="Jane Eyre")`, `"album":
# "Billie Jean"`): a title, no person, though a listed name opens it.
_WORK_FIELD = re.compile(r"(?i)(?<![\w-])(?:title|book|album|song|film|movie|novel|track)[\"']?[ \t]*[:=][ \t]*[\"']?$")
# A run of several words ending in an everyday word that is no listed name, then an institution's
# kind (`John F. Kennedy International Airport`): the place's name, not a person's (`Priya Nair
# School` ends in a listed name, `Chiang Kai Shek Memorial` in no everyday word: they stay).
_INSTITUTION_NEXT = re.compile(rf"[ \t]+{_INSTITUTIONS}(?![\w'’-])")


def _last_not_listed(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] is two words or more, the last an everyday word and no listed name."""
    words = words_of(text[start:end])
    last = words[-1].lower() if words else ""
    return (
        len(words) >= 2
        and last in names_model.model()["lexicon"]
        and last not in given_names()
        and last not in family_names()
    )


# A field that names a place (`city: 'Austin'`, `"state": "Georgia"`): its value is no person,
# however many people bear the name.
_PLACE_FIELD = re.compile(
    r"(?i)(?<![\w-])(?:city|town|state|country|county|province|region|location|place|locality|l)"
    r"[\"']?[ \t]*[:=][ \t]*[\"']?$"
)


# A firm's legal form or a word a firm's name ends in, last in a run or after it (`Rand
# Corporation`, `Fernandez Inc.`, `Russell Investments`): no person's name, whatever rule took it.
_FIRM_LAST = re.compile(rf"(?:^|[ \t]){names_model._FIRM_WORDS}\.?$")
_FIRM_NEXT = re.compile(rf"[ \t]+{names_model._FIRM_WORDS}(?![\w'’-])")


def _currency(text: str, start: int, end: int) -> bool:
    """A currency's name: beside an amount, or a run ending in its unit where no other word is a
    listed given name and the unit no listed name (`Swiss Franc`; not `Jose Colon`, `Kim Won`)."""
    amount = bool(_AMOUNT_NEXT.match(text, end) or _AMOUNT_BEFORE.search(text, max(0, start - 16), start))
    if _CURRENCY_LAST.search(text, start, end):
        if amount:
            return True
        given, family = given_names(), family_names()
        words = [word.lower() for word in words_of(text[start:end])]
        return not any(word in given for word in words[:-1]) and words[-1] not in given and words[-1] not in family
    return amount and _CURRENCY_ALONE.match(text, start, end) is not None


# A job's title or a gender taken for a name (`Hello Designer`, `our Customer Metrics Architect`,
# `Hi Cisgender`): words no name list holds, whatever rule took them.
_ROLES = (
    r"(?:Designer|Planner|Liaison|Architect|Producer|Manager|Director|Officer|Engineer|Specialist"
    r"|Consultant|Coordinator|Administrator|Analyst|Developer|Associate|Assistant|Executive|Facilitator"
    r"|Orchestrator|Representative|Strategist|Supervisor|Technician|Committee|Guardians"
    r"|Cisgender|Transgender|Trans|Omnigender|Multigender|Bigender|Agender|Genderqueer|Genderfluid|Nonbinary"
    r"|Non-binary|Intersex|Demi-boy|Demi-girl)"
)
_ROLE_LAST = re.compile(rf"(?<![\w'’-]){_ROLES}$")
# A word of a job's title before its last word (`Metrics` of `Customer Metrics Architect`).
_ROLE_NEXT = re.compile(rf"[ \t]+{_ROLES}(?![\w'’-])")


def _role(text: str, start: int, end: int) -> bool:
    if not (_ROLE_LAST.search(text, start, end) or _ROLE_NEXT.match(text, end)):
        return False
    given, family = given_names(), family_names()
    return not any(word.lower() in given or word.lower() in family for word in words_of(text[start:end]))


def no_firms(text: str, found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The findings without firms' names (`_FIRM_LAST`, `_FIRM_NEXT`) and jobs' titles (`_role`)."""
    return [
        f
        for f in found
        if not (_FIRM_LAST.search(text, f[0], f[1]) or _FIRM_NEXT.match(text, f[1]) or _role(text, f[0], f[1]))
    ]


# How far around an uncued name a firm's name holding it is looked for (five surnames, their
# commas and `and`): the text between the names is never searched.
_FIRM_REACH = 160


def _firms(text: str, uncued: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Firms' names (`_FIRM`, `_FIRM_PAIR`) around the uncued names: searched in windows around
    them, not the whole text (a scan of every capital of a MiB of logs cost a third of the names'
    time)."""
    windows: list[tuple[int, int]] = []
    for start, end in sorted(uncued):
        low, high = max(0, start - _FIRM_REACH), min(len(text), end + _FIRM_REACH)
        if windows and low <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(windows[-1][1], high))
        else:
            windows.append((low, high))
    firms: list[tuple[int, int]] = []
    given, family = given_names(), family_names()
    lexicon = names_model.model()["lexicon"]
    for low, high in windows:
        for match in _FIRM.finditer(text, low, high):
            if text[max(0, match.start() - 8) : match.start()].rstrip(" \t").endswith((":", "(", ";")):
                continue  # people listed after a colon, authors cited (`(Lewis, Simons, & Fennig, 2014)`)
            if _CITED_YEAR.match(text, match.end()):
                continue
            items = [m.group().lower() for m in _FIRM_ITEM.finditer(match.group())]
            if any(item in given and item not in family for item in items):
                continue
            firms.append(match.span())
        for match in _FIRM_PAIR.finditer(text, low, high):
            items = [m.group().lower() for m in _FIRM_ITEM.finditer(match.group())]
            # (`Attendee - Brooke`: a word and a name; `Tom - Becker`: a person named)
            if not any((item in given and item not in family) or item in lexicon for item in items):
                firms.append(match.span())
    return firms


def not_people(text: str, found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The findings without firms' names (`no_firms`), and without the uncued ones that lie in
    a firm's name made of surnames, that name a street (`_FIRM`, `_STREET_AFTER`), an institution
    (`INSTITUTION_LAST`) or a place (`a_place`)."""
    found = no_firms(text, found)
    uncued = [(start, end) for start, end, rule in found if rule in UNCUED]
    if not uncued:
        return found
    firms = _firms(text, uncued)
    dropped = {
        (start, end)
        for start, end in uncued
        if any(s <= start and end <= e for s, e in firms)
        or _SONS_NEXT.match(text, end)
        or _currency(text, start, end)
        or _STREET_AFTER.match(text, end)
        or _STREET_LAST.search(text, start, end)
        or INSTITUTION_LAST.search(text, start, end)
        or (" " not in text[start:end] and _INSTITUTION_AFTER.match(text, end))
        or (_INSTITUTION_NEXT.match(text, end) and _last_not_listed(text, start, end))
        or _PLACE_FIELD.search(text, max(0, start - 24), start)
        or _WORK_FIELD.search(text, max(0, start - 24), start)
        or a_place(text, start, end)
    }
    return [f for f in found if f[2] not in UNCUED or (f[0], f[1]) not in dropped]

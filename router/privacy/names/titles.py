"""Titles, offices and degrees beside a name: honorifics (`Dr. Chen Wei`, `ms. quinzia`,
`mr. elliott`), offices, ranks and callings (`President Bush`, `Capt. Spastic`), and a
clinician's degree after it (`Xiomara Quillfeather, MD`)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from router.privacy import names_model
from router.privacy.names.forms import FULL, HONORIFIC, INITIALLED, JOINING, LOWER_LETTER, NAME_CASED
from router.privacy.names.lists import AMBIGUOUS, STOP, family_names, given_names, place_names
from router.privacy.names.places import a_place
from router.privacy.names.words import addressed_name, name_shaped, name_words, trim, words_of

TITLED = re.compile(rf"(?<![\w.])(?:{HONORIFIC}\.?|M\.|Mme\.?)[ \t]+({FULL})")


_OUR_LADY = re.compile(r"(?i:nossa|nuestra|nostra|notre)[ \t]+$")


def read_title(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    if _OUR_LADY.search(text, max(0, match.start() - 10), match.start()):
        return  # `Nossa Senhora Aparecida`, `Nuestra Señora del Pilar`: a saint's title, a place's
    value = match.group(1)
    words = words_of(value)
    if len(words) == 1 and _short_everyday(words[0].lower()):
        return  # `Dr Who`, `Dr. Go`: a short everyday word after the title, no listed name
    if name_shaped(value) and len(words) <= 4:
        yield (*trim(text, *match.span(1)), rule)


def _short_everyday(low: str) -> bool:
    """Whether a word (lower case) of three letters at most is an everyday word and no listed
    name (`who`, `go`; not `li`, `wu`, `ng`)."""
    return (
        len(low) <= 3
        and low in names_model.model()["lexicon"]
        and low not in given_names()
        and low not in family_names()
    )


# Written in lower case with its dot, as people type it (`join accounts with ms. Marcela`): the
# name must then be no everyday word (`took 5 ms. Then`).
TITLED_LOWER = re.compile(rf"(?<![\w.])(?:mr|mrs|ms|mx|dr|prof|dott|sig|sr|sra|srta)\.[ \t]+({FULL})")


AFTER_NUMBER = re.compile(r"\d[ \t]*(?:mr|mrs|ms|mx|dr|prof)?$")  # `5 ms.`: a unit, no title


def not_everyday(value: str) -> bool:
    """A name after a weak cue: a listed given or family name that is no ambiguous word, or two
    words or more led by no everyday word (not `Thanks, Merged`, `took 5 ms. Then`)."""
    words = [w.lower() for w in words_of(value)]
    given, family = given_names(), family_names()
    if any((w in given or w in family) and w not in AMBIGUOUS for w in words):
        return True
    return len(words) >= 2 and words[0] not in names_model.model()["lexicon"]


# A title and a name all in lower case (`mr. elliott flew`, `ms. quinzia park`): the name's words
# are the listed ones that follow the title.
TITLED_LOWER_CASE = re.compile(
    rf"(?<![\w.])(?:mr|mrs|ms|mx|dr|prof)\.[ \t]+({LOWER_LETTER}+(?:[ \t]+{LOWER_LETTER}+)?)(?![\w'’-])"
)


def read_title_lower_case(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    """`mr. elliott flew`: the listed words after the title."""
    if AFTER_NUMBER.search(text, max(0, match.start() - 8), match.start()):
        return
    given, family = given_names(), family_names()
    start = end = match.start(1)
    for word in re.finditer(r"[^ \t]+", match.group(1)):
        low = word.group()
        if not ((low in given or low in family) and low not in STOP and low not in AMBIGUOUS):
            break
        end = start + word.end()
    if end > start:
        yield start, end, rule


# Offices, ranks and callings before a name (`President Bush`, `Doctor Hank`, `Capt. Spastic`):
# a name-cased word after the offices that go with a family name, even an everyday word
# (`_OFFICE_ANY`); after the others a word `addressed_name` takes, or (`_OFFICE_LISTED`: `King`,
# `Father`, `Sister`, which also open places and titles) a listed name.
_OFFICE_ANY = frozenset(
    re.findall(
        r"\S+",
        "president senator governor judge justice sen rep gov rev sir dame prof professor drs capt sgt lt col gen adm",
    )
)
_OFFICE_LISTED = frozenset(re.findall(r"\S+", "prince princess king queen lord lady father sister brother"))
# A place's or an institution's last word after an office's (`Prince Edward Island`, `King George
# Hospital`), and a rank's (`Professor Emeritus`): no person.
_OFFICE_NOT_NAME = frozenset(
    re.findall(
        r"\S+",
        "island islands county city valley bay park hall college university school hospital bridge street road square"
        " station airport sound emeritus",
    )
)
OFFICE = re.compile(
    r"(?<![\w.])((?:Sen|Rep|Gov|Rev|Prof|Drs|Capt|Sgt|Lt|Col|Gen|Adm)\.?|President|Senator|Governor|Judge|Justice|Sir"
    r"|Dame|Professor|Doctor|Coach|Detective|Sergeant|Captain|Lieutenant|Colonel|Admiral|Minister|Mayor|Chancellor"
    r"|Pastor|Rabbi|Imam|Sheikh|Shaikh|Bishop|Cardinal|Ambassador|Nurse|Uncle|Aunt|Auntie|Grandma|Grandpa|Prince"
    r"|Princess|King|Queen|Lord|Lady|Father|Sister|Brother"
    # The same in lower case after an article or a people (`the teacher Adz`, `Shiite cleric Muqtada`).
    r"|(?<=the )(?:teacher|coach|doctor|lawyer|attorney|professor|cleric|leader|spokesman|spokeswoman|photographer"
    r"|artist|author|writer|singer|actor|actress|director|host|owner|instructor|trainer|therapist|dentist|nurse)"
    r"|(?<=[a-z] )(?:cleric|leader))[ \t]+"
    rf"({FULL})(?![\w@-])"
)


def read_office(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    office = match.group(1).lower().rstrip(".")
    span = trim(text, *match.span(2))
    if text.startswith(("'s", "’s"), span[1] - 2):
        span = (span[0], span[1] - 2)  # (`Capt. Brannigan's page`)
    value = text[span[0] : span[1]]
    if not name_shaped(value) or len(words_of(value)) > 4:
        return
    words = [w.lower() for w in words_of(value)]
    if any(w in names_model.NEVER or w in STOP for w in words) or value.lower() in place_names():
        return
    if words[-1] in _OFFICE_NOT_NAME:
        return
    if office in _OFFICE_LISTED:
        accepted = (words[0] in given_names() or words[0] in family_names()) and words[0] not in AMBIGUOUS
    elif office in _OFFICE_ANY and len(words) == 1:
        accepted = all(NAME_CASED.fullmatch(w) for w in words_of(value) if not JOINING.fullmatch(w))
    else:
        accepted = addressed_name(value)
    if accepted:
        yield (*span, rule)


# A clinician's name before a degree (`Xiomara Quillfeather, MD`, `Ondine Velarquez, RN`, `Zhang
# Wei, PA-C`), as clinical notes sign and attribute them. `MD` alone is also Maryland
# (`Silver Spring, MD 20910`): `read_degree` asks more of it.
DEGREES = (
    r"M\.D\.|MD|D\.O\.|DO|R\.N\.|RN|N\.P\.|NP|PA-C|Ph\.D\.|PhD|MBBS|MBChB|DDS|DMD|FRCP|FRCS|MRCP|FACP|FACS"
    r"|CRNA|LPN|APRN|FNP|FNP-BC|PharmD|LCSW|DNP|MSN|BSN|DPM|OD|PsyD"
)
DEGREE = re.compile(rf"(?<![\w@./\\-])({INITIALLED}),[ \t]*({DEGREES})(?![\w-])(?:,[ \t]*(?:{DEGREES})(?![\w-]))?")
_ZIP_AFTER = re.compile(r"[ \t]+\d{5}(?!\d)")


def read_degree(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    value, degree = match.group(1), match.group(2)
    # (Each word cased as a name and listed or no everyday word: not `Tested, OD`, `set DO, RN`.)
    if (
        not name_shaped(value)
        or len(words_of(value)) > 4
        or name_words(value) is None
        or value.lower() in place_names()
    ):
        return
    if degree == "MD" and match.group(0).count(",") == 1:
        # Maryland unless the name reads as a person's: two words or more, the first a listed
        # given name or an initial, no postcode after and no listed place at its end.
        words = words_of(value)
        if (
            _ZIP_AFTER.match(text, match.end())
            or len(words) < 2
            or not (words[0].lower() in given_names() or len(words[0]) == 1)
            or a_place(text, *match.span(1))
        ):
            return
    yield (*trim(text, *match.span(1)), rule)

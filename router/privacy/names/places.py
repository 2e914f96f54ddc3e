"""Places taken for people: a listed place (`San Diego`, `Palestinians`), a place's other
words beside the name (`San Francisco`, `Lawrence, KS`), a flight's cities, a storm's name
(`Hurricane Katrina`). Asked of the uncued names (lookalikes.py) and of a name before `, MD`,
which is Maryland as often (titles.py). The listed places themselves are lists.py's."""

from __future__ import annotations

import re

from router.privacy.names.lists import family_names, given_names, place_names
from router.privacy.names.words import words_of

# Words that say a place follows (`preferably in San Jose`, `a day stop-over in Paris`) or a storm
# (`Hurricane Rita`, named as people are).
_PLACE_BEFORE = re.compile(
    r"(?<![\w'’-])(?i:in|near|around|across|throughout|outside|inside|via|visit|visiting|visited)[ \t]+(?:the[ \t]+)?$"
)
_STORM_BEFORE = re.compile(r"(?<![\w'’-])(?:Hurricane|Typhoon|Cyclone|Storm)[ \t]+$")
# The first word of a place's name (`San Francisco`, `Fort Smith`, `East Allison`) before the word
# found, and a US
# state's code after it (`Lawrence, KS`).
_PLACE_LEAD = re.compile(
    r"(?<![\w'’-])(?:San|Santa|Santo|São|Los|Las|Fort|Ft\.|Port|Mount|Mt\.|Lake|Cape|North|South|East|West|New)[ \t]+$"
)
# A place named by a compass point and a name (`West Lenore`, `South Julie`, `North Carolina`).
_COMPASS_FIRST = re.compile(r"(?:North|South|East|West)[ \t]+[A-Z]")
_STATE_AFTER = re.compile(
    r",?[ \t]+(?:AL|AK|AZ|AR|CA|CO|CT|DE|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|NM|NY|NC"
    r"|ND|OH|OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY|DC)(?![\w'’-])"
)


# A journey's two ends, each with its airport's code (`from Boston (BOS) to Orlando (MCO)`): places.
# (One code alone is no sign: `send it to Priya (CTO)`.)
_PLACE_WORDS = r"[A-Z][\w.'’-]*(?:[ \t]+[A-Z][\w.'’-]*){0,3}"
_AIRPORT = r"[ \t]+\([A-Z]{3}\)"
_JOURNEY_FROM = re.compile(rf"{_AIRPORT}[ \t]+(?i:to)[ \t]+{_PLACE_WORDS}{_AIRPORT}")
_JOURNEY_TO = re.compile(rf"(?<![\w'’-])(?i:from)[ \t]+{_PLACE_WORDS}{_AIRPORT}[ \t]+(?i:to)[ \t]+$")


# Planets are given names too (`Venus`), but far more often the planets in text that names them.
_SKY = frozenset(["mercury", "venus", "mars", "jupiter", "saturn", "uranus", "neptune", "pluto"])


def a_place(text: str, start: int, end: int) -> bool:
    """Whether an uncued finding names a place, a people or a storm rather than a person: a
    listed place (`San Diego`, `Palestinians`; one that is also a given name, `Florence`, only
    after a word that says a place follows), a name ending in a listed place that is no one's
    name (`Miramar California`), a place's name's other words beside it (`San Francisco`, `Lawrence,
    KS`), or a storm's name (`Hurricane Katrina`)."""
    if _STORM_BEFORE.search(text, max(0, start - 16), start) or text.startswith(("Hurricane ", "Typhoon "), start):
        return True
    if _PLACE_LEAD.search(text, max(0, start - 8), start) or _COMPASS_FIRST.match(text, start, end):
        return True
    if _STATE_AFTER.match(text, end) and not any(c in " \t" for c in text[start:end]):
        return True  # (one word: a person's name is followed by a degree, `Harry Preuss, MD`)
    if _JOURNEY_FROM.match(text, end) or (
        text.startswith((" (", "\t("), end) and _JOURNEY_TO.search(text, max(0, start - 80), start)
    ):
        return True  # `from Boston (BOS) to Orlando (MCO)`: the cities of a flight
    words = [w.lower() for w in words_of(text[start:end])]
    if not words:
        return False
    places, given, family = place_names(), given_names(), family_names()
    if " ".join(words) in places:
        people = len(words) == 1 and (words[0] in given or words[0] in family) and words[0] not in _SKY
        return not people or _PLACE_BEFORE.search(text, max(0, start - 24), start) is not None
    last = words[-1]
    return len(words) >= 2 and last in places and last not in given and last not in family

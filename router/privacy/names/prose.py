"""Cue phrases of running text, each followed or preceded by a name: `my name is` and its
kind in other languages, work handed to a person (`assigned to`, `spoke with`), kin and
colleagues (`Amanda's daughter`, `my colleague Dagny Berg`), a quotation's speaker (`…," says
Bergqvist.`), a role between commas (`Ana Lima, our CTO, told us`), a middle initial (`Alvir D.
Pušaver`) and an age (`Cossor Ali, 24,`)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from router.privacy import names_model
from router.privacy.names.forms import CAPITAL, INITIALLED, JOINING, LOWER_LETTER, REPORTING
from router.privacy.names.lists import AMBIGUOUS, STOP, family_names, given_names, place_names
from router.privacy.names.words import (
    FIRST_WORD,
    addressed_name,
    any_listed,
    name_shaped,
    name_words,
    trim,
    without_lead,
    words_of,
)

# A name of lower-case words (`my name is ana lima.`): taken after the strongest cues only, and
# only when its first word is a listed given name.
_LOWER = rf"{LOWER_LETTER}+(?:[ \t]+{LOWER_LETTER}+){{0,2}}"


# Phrases that introduce a person's name in prose or dialogue: `My name is Ana Lima`, `What's
# your name? Ana Lima`, `her maiden name is Lima`, `I'm Ana Lima, from …`, `named her Ana`,
# `directed by Ana Lima`. (A lower-case name after them: see _LOWER.)
_CUE_WORDS = (
    r"my[ \t]+name[ \t]+is|my[ \t]+name's|(?:what's|what[ \t]+is)[ \t]+your[ \t]+(?:full[ \t]+|first[ \t]+|last[ \t]+)?"
    r"name\?(?:[ \t]+(?:user|customer|client)[ \t]*:)?|maiden[ \t]+name[ \t]+is|named[ \t]+(?:him|her)"
    r"|directed[ \t]+by|i'm|i[ \t]+am|everyone[ \t]+calls[ \t]+me|call[ \t]+me"
    # Other languages' `my name is`: German, French, Spanish, Italian, Portuguese, Dutch,
    # Polish, Swedish, Czech.
    r"|ich[ \t]+heiße|ich[ \t]+heisse|mein[ \t]+name[ \t]+ist|je[ \t]+m'appelle|je[ \t]+m’appelle"
    r"|mon[ \t]+nom[ \t]+est|me[ \t]+llamo|mi[ \t]+nombre[ \t]+es|mi[ \t]+chiamo|il[ \t]+mio[ \t]+nome[ \t]+è"
    r"|(?:o[ \t]+)?meu[ \t]+nome[ \t]+é|mijn[ \t]+naam[ \t]+is|nazywam[ \t]+się|jag[ \t]+heter"
    r"|jmenuji[ \t]+se"
)
CUE = re.compile(
    rf"(?<![\w'])(?i:({_CUE_WORDS}))[ \t]+(?:({INITIALLED})(?![\w'’-])|({_LOWER})(?=[ \t]*(?:[.,;!?\n]|$)))"
)


_STRONG_CUES = (
    "my name",
    "what",
    "maiden",
    "named",
    "everyone",
    "ich hei",
    "mein name",
    "je m",
    "mon nom",
    "me llamo",
    "mi nombre",
    "mi chiamo",
    "il mio nome",
    "o meu nome",
    "meu nome",
    "mijn naam",
    "nazywam",
    "jag heter",
    "jmenuji",
)
# Cues a name, not a state, follows (`call me Piusz`, not `I'm Happy`): a capitalised word after
# them is a name unless an everyday word or software's (`call me Maybe`).
_NAMING_CUES = ("call me", "calls me", "everyone calls me")


def _cued(match: re.Match[str]) -> int:
    """The group of a cue's match (`CUE`) that holds a name, or 0."""
    cue = re.sub(r"[ \t]+", " ", match.group(1).lower())
    strong = cue.startswith(_STRONG_CUES)
    if match.group(2):
        value = match.group(2)
        words = words_of(value)
        if not name_shaped(value) or (words[0].lower() in AMBIGUOUS and not strong):
            return 0
        if cue in _NAMING_CUES and len(value) > 1 and addressed_name(value):
            return 2
        return 2 if strong or any_listed(value) or len(words) >= 2 else 0
    if match.group(3) and strong:
        first = words_of(match.group(3))[0]
        listed = family_names() if cue.startswith("maiden") else given_names()
        if first in STOP or first not in listed or first in AMBIGUOUS:
            return 0
        return 3
    return 0


def read_cue(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    group = _cued(match)
    if group:
        yield (*trim(text, *match.span(group)), rule)


# Work handed to or from a person, as tickets, reviews and notes write it (`assigned to Rubija
# Liberšar`, `reviewed by Ana M. Lima`, `escalated to Priya`, `spoke with Tom Berg`): the name
# follows the phrase. Bots, pipelines and teams are handed work too; `handed` tells them apart.
_HANDOFF_WORDS = (
    r"(?:re)?assigned[ \t]+to|(?:reported|reviewed|approved|requested|submitted|opened|closed|authored|written"
    r"|signed(?:[ \t]+off)?)[ \t]+by|(?:escalated|forwarded|handed[ \t]+(?:it[ \t]+)?over)[ \t]+to"
    r"|on[ \t]+behalf[ \t]+of|(?:spoke|talked)[ \t]+(?:with|to)|(?:meeting|met)[ \t]+with"
    r"|reach(?:ed)?[ \t]+out[ \t]+to|follow(?:ed)?[ \t]+up[ \t]+with|check(?:ed)?[ \t]+with"
    r"|zugewiesen[ \t]+an|assignée?[ \t]+à|asignad[oa][ \t]+a|assegnat[oa][ \t]+a|atribuíd[oa][ \t]+a"
    r"|toegewezen[ \t]+aan|przypisan[eya][ \t]+do|tilldelad[ \t]+till"
)
HANDOFF = re.compile(rf"(?<![\w'’])(?i:{_HANDOFF_WORDS})[ \t]+({INITIALLED})(?![\w'’-])")


def handed(value: str, alone: bool = True) -> bool:
    """A name after a hand-off phrase (`HANDOFF`): 1-4 words in a name's form (`name_words`);
    one word only when listed (`Priya`, not `Legal`) and `alone` allows it (a quoted person's
    role between commas follows a full name)."""
    words = words_of(value)
    if not name_shaped(value) or len(words) > 4:
        return False
    listed = name_words(value)
    if listed is None:
        return False
    named = [w for w in words if not JOINING.fullmatch(w)]
    return len(named) >= 2 or (alone and listed > 0)


# A person quoted with their role between commas, as news and reports write it (`Hijacinta
# Godina, the technical writer, said: …`, `Ana Lima, our CTO, told us`).
APPOSITIVE = re.compile(
    rf"(?<![\w@./\\-])({INITIALLED}),[ \t]+(?:the|our|their|his|her|its|a|an)[ \t]+[^,\n]{{2,60}},"
    rf"[ \t]+{REPORTING}(?![\w'’-])"
)


# A person's family and the people of their life, said of a name: `Amanda's daughter`,
# `Franciska's kid`; `my kid Agi`, `our colleague Dagny Berg`, `her brother Tomás`.
KIN_WORDS = (
    r"daughters?|sons?|kids?|child(?:ren)?|wife|husband|spouse|mother|father|mom|mum|dad|brothers?|sisters?|parents"
    r"|grand(?:mother|father|ma|pa|son|daughter|children)|aunt|uncle|niece|nephew|cousin|fianc[ée]e?|boyfriend"
    r"|girlfriend|widow(?:er)?"
)
OWN_WORDS = (
    rf"{KIN_WORDS}|colleague|co-?worker|friend|boss|manager|teammate|neighbou?r|landlord|landlady|room-?mate"
    r"|flatmate|intern|lawyer|attorney|doctor|dentist|therapist|tutor|teacher|mentor|supervisor|caregiver"
)
KIN_OF = re.compile(rf"(?<![\w@./\\-])({INITIALLED})['’]s[ \t]+(?:{KIN_WORDS}|birthday|wedding|funeral)(?![\w'’-])")
KIN_BEFORE = re.compile(
    rf"(?<![\w'’-])(?i:my|our|his|her|their|your)[ \t]+(?i:{OWN_WORDS})[ \t]+({INITIALLED})(?![\w'’-])"
)
# The same in the other languages agents read (`Meine Tochter Mechthild`, `mon fils Régis`,
# `mi hija Nerea`, `mijn collega Joost`).
OWN_OTHER_WORDS = (
    r"fils|fille|femme|mari|frère|s(?:œ|oe)ur|mère|père|coll[èe]gue|sohn|tochter|frau|mann|bruder|schwester|mutter"
    r"|vater|kolleg(?:e|in)|hij[oa]|espos[oa]|marido|herman[oa]|madre|padre|colega|figli[oa]|moglie|marito"
    r"|fratello|sorella|collega|filh[oa]|irmão|irmã|mãe|pai|zoon|dochter|vrouw|broer|zus|moeder|vader|syn|córka"
    r"|żona|mąż|brat|siostra|dotter|bror|syster|kollega|dcera|manžel(?:ka)?|sestra|bratr"
)
OWN_OTHER = (
    r"mon|ma|mes|notre|meine?[mn]?|unsere?[mn]?|mi|mis|nuestr[oa]|il[ \t]+mio|la[ \t]+mia|mio|mia|(?:o[ \t]+)?meu"
    r"|(?:a[ \t]+)?minha|mijn|onze|mój|moja|min|mitt|můj|moje"
)
KIN_OTHER = re.compile(rf"(?<![\w'’-])(?i:{OWN_OTHER})[ \t]+(?i:{OWN_OTHER_WORDS})[ \t]+({INITIALLED})(?![\w'’-])")
# The speaker after a quotation (`"… direction," says Bergqvist.`): a quote's closing mark, the
# reporting verb, then the name where the clause ends.
# (Other languages' too: `», a déclaré Régis Vautrin,`, `", sagte …`, `", dijo …`.)
REPORTING_OTHER = (
    r"(?:a[ \t]+(?:déclaré|dit|expliqué|ajouté|précisé)|sagte|erklärte|betonte|dijo|explicó|afirmó|añadió"
    r"|ha[ \t]+(?:dichiarato|detto|spiegato)|disse|afirmou|explicou|zei|verklaarde|powiedział[a]?|sade|řekl[a]?)"
)
QUOTED_BY = re.compile(
    rf"[\"”»][ \t]*,?[ \t]+(?:{REPORTING}|{REPORTING_OTHER})[ \t]+({INITIALLED})"
    # (the clause's end, or a manner of saying first: `said Tuppence severely.`)
    r"(?=(?:[ \t]+[a-z]+ly)?[ \t]*(?:[.,;!?\n]|$))"
)
# The speaker named after the quotation, before the verb (`"…right," Dewar said.`, `“…,” Okafor
# told reporters`): the quotation ends in a comma, `!` or `?` inside its closing quote.
_SAYS_AFTER = (
    rf"(?:{REPORTING}|continued|recalled|admitted|insisted|argued|warned|declared|stated|remarked|responded"
    r"|conceded|agreed|cried|joked)"
)
QUOTED_THEN = re.compile(rf"[,!?][\"”»][ \t]+({INITIALLED})[ \t]+{_SAYS_AFTER}(?![\w'’-])")


def read_around(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    """A name the words around it tell (kin, a quotation's speaker): without the everyday words
    and the pronoun that may lead it (`Then Amanda's`, `I'm Amanda's daughter`)."""
    span = without_lead(text, *match.span(1))
    while (lead := FIRST_WORD.match(text, *span)) is not None and not name_shaped(lead.group(1)):
        span = (lead.end(), span[1])
    value = text[span[0] : span[1]]
    if len(value) > 1 and name_shaped(value) and len(words_of(value)) <= 4 and addressed_name(value):
        yield (*trim(text, *span), rule)


# A given name, an initial and a family name (`Alvir D. Pušaver`, `Elita B Desaulniers`): how
# people, and rarely anything else, are written. (A sentence ending in a capital, `…chose Plan
# B. Then`, `Plan B Options`, has everyday words beside the initial: `initialled` leaves those.)
WITH_INITIAL = re.compile(rf"(?<![\w@./\\-])({CAPITAL}[ \t]+[A-Z]\.?[ \t]+{CAPITAL})(?![\w@'’-])")


# Letters that are words of their own in many languages (articles, conjunctions, `I`): with no
# period they make no initial between two words of prose.
_VOWEL_WORDS = frozenset("AEIOUY")


def initialled(value: str) -> bool:
    """`Given I. Family` in prose: both words in a name's form and neither an everyday word
    (unless a listed name)."""
    words = words_of(value)
    # (A given and a family name have two letters or more: `wanted: B C X+` is a list of letters.)
    if len(words) != 3 or not name_shaped(value) or len(words[0]) < 2 or len(words[2]) < 2:
        return False
    if words[1] in _VOWEL_WORDS:  # `Chimica A Produselor`, `Vinte E Cinco`: a word, no initial
        return False
    everyday: frozenset[str] = names_model.model()["lexicon"]
    given, family = given_names(), family_names()
    for word in (words[0], words[2]):
        low = word.lower()
        if low in AMBIGUOUS or (len(word) > 1 and word.isupper()):
            return False  # (`GNU R Polygon`: an acronym, no given name)
        if low not in given and low not in family and (low in everyday or (len(low) >= 6 and low.endswith("ing"))):
            return False  # everyday words and a verb's `-ing` form (`Developing R Packages`)
    return True


# People listed with their age (`Cossor Ali, 24, London E17`, as news and police reports list
# them): two to four words cased as names, then the age between commas.
AGED = re.compile(
    rf"(?:^|(?<=[\n;(])|(?<=[,;:][ \t]))[ \t]*({CAPITAL}(?:[ \t]+{CAPITAL}){{1,3}}),[ \t]+\d{{1,2}},[ \t]+(?=[A-Z])",
    re.MULTILINE,
)


def read_aged(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    """A person listed with an age: words cased as names, each listed or no everyday word, and no
    place (`High Wycombe, 24, …` is not read as a person)."""
    value = match.group(1)
    if name_shaped(value) and name_words(value) is not None and value.lower() not in place_names():
        yield match.start(1), match.end(1), rule

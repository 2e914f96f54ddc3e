"""Person names (opt-in per route: `privacy_detect: [person]`), by rules with context, on CPU
and with no model: a name is taken where its context says it is one.

- Labelled fields: `"first_name": "Ana"`, `Name: Maria Gonzalez`, `customer=…`, in JSON, YAML,
  `.env`, logs and forms.
- Named columns of tables and SQL INSERTs (`first_name`, `last_name`, `customer`, …: tables.py).
- E-mail headers and trailers: `From: Ana Lima <ana@…>`, `Signed-off-by:`, `Author:`.
- Greetings (`Dear Ms Okafor,`, `Hi Tom,`), titles (`Dr. Chen Wei`), signature blocks (the
  line after `Best regards,`).
- Free text: two or three capitalised words led by a listed given name (`…called Priya Nair
  about…`), or ending in a listed family name; the lists (data/, SOURCES.md) cover many
  cultures. Given names that are also common English words (`Will`, `Mark`) need a listed
  family name after them.
- Names in running text that no rule finds: a small linear model over capitalised words of
  prose (names_model.py, trained on public corpora; data/SOURCES.md).

A generic label (`name`, `author`, `owner`) takes a value only when it looks like a person's
name: a listed given or family name in it, or two or more capitalised words none of which is a
common product or team word.
"""

from __future__ import annotations

import builtins
import functools
import keyword
import re
from collections.abc import Callable, Iterator
from importlib import resources

from router.privacy import addresses, names_model
from router.privacy.anchors import LINE_MARKS, Anchor, Anchors, longest_first, search, windows
from router.privacy.detector import Finding
from router.privacy.tables import Columns


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
_AMBIGUOUS = _names("ambiguous_words.txt")
# Capitalised words that are not names wherever they stand (teams, products, places in prose).
_STOP = _names("stop_words.txt")
# Clinical notes' abbreviations, capitalised as names are (`Pt's daughter`, `Hx:`). (Kept apart
# from the stop words, which the prose model was trained with.)
_CLINICAL = frozenset({"pt", "pts", "hx", "dx", "rx", "sx", "tx"})
_WORD = r"[^\W\d_](?:[^\W\d_]|['’](?=[^\W\d_])|-(?=[^\W\d_]))*"
# A capitalised word (Latin scripts): names are runs of them.
_CAPITAL = r"[A-ZÀ-ÖØ-Þ\u0100-\u017F](?:[^\W\d_]|['’](?=[^\W\d_])|-(?=[^\W\d_]))*"
_PARTICLE = r"(?:van|von|der|den|de|del|della|di|da|du|la|le|bin|binti|ibn|al|el|dos|das|ten|ter|y|e)"
_FULL = rf"{_CAPITAL}\.?(?:[ \t]+(?:{_PARTICLE}[ \t]+){{0,2}}(?:[A-Z]\.(?=[ \t]+[A-Z])|{_CAPITAL})){{0,3}}"
_HONORIFIC = (
    r"(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Herr|Frau|Mme|Mlle|Sr|Sra|Srta|Sig|Sig\.ra|Signora|Signor|Dott|Madame|Monsieur"
    r"|Mademoiselle|Señor|Señora|Señorita|Senhor|Senhora|Pani|Fru|Mevrouw|Meneer|Paní)"
)

_PERSON_KEYS = (
    r"(?:full|first|last|given|family|middle|display|maiden|legal|preferred|contact|customer|client"
    r"|patient|employee|recipient|sender|holder|card[_ -]?holder|account[_ -]?holder|owner|guest"
    r"|passenger|applicant|candidate|member|buyer|seller|shipping|billing|emergency[_ -]?contact)"
    # (`fname`, `l_name`, `mname`: the short column names of exports and schemas.)
    r"[_ -]?names?|surname|(?:first|last|given|family|fore)name|[flm][_-]?name|nombre|apellidos?|prénom|prenom"
    r"|nom[_ -]de[_ -]famille|vorname|nachname|cognome|nome|voornaam|achternaam"
)
# Keys naming a person's role: a value of two or more capitalised words is a name.
_ROLE_KEYS = (
    r"author|assignee|reporter|requester|customer|contact|patient|employee|recipient|passenger|guest|member"
    # A ticket's, a review's or a change's people: `Assigned to: Dmitri`, `Reviewed by: Ana Lima`.
    r"|(?:assigned|delegated|escalated)[ _-]?to|(?:reported|created|requested|reviewed|approved|submitted|signed"
    r"|opened|closed|resolved|owned|raised|tested|acked|suggested|helped|co-developed"
    # A clinical note's people (`Dictated by:`, `Attending:`, `PCP:`).
    r"|dictated|transcribed|co-?signed|referred|seen|examined|evaluated|interpreted|authenticated)[ _-]?by"
    r"|attending(?:[ _-]?physician)?|pcp|physician|surgeon|clinician"
    r"|(?:referring|primary[ _-]?care)[ _-]?(?:physician|provider)"
    # A form's contact person in other languages (`Ansprechpartner:`, `Interlocuteur :`).
    r"|ansprechpartner(?:in)?|interlocut(?:eur|rice)|contactpersoon|persona[ _-]de[ _-]contacto|referente"
    r"|kontaktperson|osoba[ _-]kontaktowa|pessoa[ _-]de[ _-]contacto|kontaktní[ _-]osoba|pt"
)
# Keys that name anything (`name: Widget Pro`): a name needs a listed word or a contact beside it.
_GENERIC_KEYS = r"name|owner|user"
# (A bracket right after the value is a call's, `nome = TextField(unique=True)`; after a space,
# a note's: `name: Ana Lima (id=42)`.)
_LABELLED = re.compile(
    rf"(?i:(?<![A-Za-z])(?:({_PERSON_KEYS})|({_ROLE_KEYS})|(?:{_GENERIC_KEYS})))[\"']?[ \t]*(?::|=|=>|->)[ \t]*[\"']?"
    rf"(?:{_HONORIFIC}\.?[ \t]+)?({_FULL})(?=[\"',;)}}\]\n]|[ \t]*(?:<|$|\n)|[ \t]+\(|[ \t][a-z])",
    re.MULTILINE,
)
_MAIL = re.compile(rf"(?<![\w@.])\"?({_FULL})\"?[ \t]*(?:<[^<>\s@]+@[^<>\s]+>|\([^()\s@]+@[^()\s]+\))")
# After a word naming a person's role in prose: `user Ana Lima (id=42)`, `patient Tom Baker`.
_ROLE = re.compile(
    r"(?<![\w.-])(?i:user|customer|client|patient|member|employee|contact|passenger|guest|tenant|applicant)"
    rf"[ \t]+({_FULL})"
    r"(?=[ \t]*(?:[,.;:()\n]|$|[ \t][a-z]))"
)
# A contact field beside a value: the record is a person's (`name:` then `phone:` or `email:`).
# (A role mailbox, `support@`, is a team's contact, not a person's.)
_CONTACT = re.compile(
    r"(?i)(?:phone|mobile|tel|address|street)[\"']?[ \t]*[:=]"
    r"|e-?mail[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"(?!(?:support|info|sales|no-?reply|help|admin|ops|team|contact|billing|hello)@)"
)
_GREETING_WORDS = (
    r"Dear|Hi|Hello|Hey|Hallo|Liebe[rs]?|Sehr geehrte[r]?|Bonjour|Cher|Chère|Hola|Estimad[oa]|Querid[oa]|Ciao"
    r"|Gentile|Caro|Cara|Olá|Ola|Happy[ \t]+birthday|Congrats|Congratulations|Welcome(?:[ \t]+(?:aboard|back))?"
)
_GREETING = re.compile(
    rf"(?:^|(?<=[\s>\"']))(?:{_GREETING_WORDS})[ \t]+"
    rf"(?:{_HONORIFIC}\.?[ \t]+|(?:Herr|Frau|Madame|Monsieur|Señora?|Senhora?)[ \t]+)?"
    rf"({_FULL})[ \t]*(?=[,!:\n])"
)
_TITLED = re.compile(rf"(?<![\w.])(?:{_HONORIFIC}\.?|M\.|Mme\.?)[ \t]+({_FULL})")
# Written in lower case with its dot, as people type it (`join accounts with ms. Marcela`): the
# name must then be no everyday word (`took 5 ms. Then`).
_TITLED_LOWER = re.compile(rf"(?<![\w.])(?:mr|mrs|ms|mx|dr|prof|dott|sig|sr|sra|srta)\.[ \t]+({_FULL})")
_OUR_LADY = re.compile(r"(?i:nossa|nuestra|nostra|notre)[ \t]+$")
_AFTER_NUMBER = re.compile(r"\d[ \t]*(?:mr|mrs|ms|mx|dr|prof)?$")  # `5 ms.`: a unit, no title
# English sign-offs, on a line of their own above a name or before it on the same line.
_THANKS = (
    r"best(?: regards| wishes)?|kind regards|kindest regards|regards|warm regards|warmest regards|warm wishes"
    r"|many thanks|with thanks|thanks(?: again)?|thank you|thx|cheers|sincerely|respectfully|all the best"
    r"|take care|keep in touch|talk soon|talk to you (?:soon|later)|see you(?: soon| later)?|love|hugs|xoxo"
)
# A closing opens its line, or follows a sentence on it (`… your time. Warm regards, Bill Gottlieb`).
_CLOSING_START = r"(?:^[ \t>]*|(?<=[.!?][ \t]))"
_CLOSING = re.compile(
    rf"(?im){_CLOSING_START}(?:{_THANKS}|sincerely yours|yours(?: truly| sincerely| faithfully)?"
    r"|mit freundlichen grüßen|mit freundlichen gruessen|viele grüße|beste grüße|liebe grüße|cordialement"
    r"|bien à vous|bien cordialement|saludos(?: cordiales)?|atentamente|un saludo|cordiali saluti|distinti saluti"
    r"|atenciosamente|met vriendelijke groet(?:en)?|(?:com os )?(?:melhores )?cumprimentos|z poważaniem"
    r"|s pozdravem|med vänliga hälsningar|vänliga hälsningar|mvh|--)[ \t]*[,!.]?[ \t]*\r?\n(?:[ \t>]*\r?\n)?[ \t>]*"
    rf"({_FULL})[ \t]*\r?$"
)
# A sign-off and a name on one line, the line's last words (`Thanks, Oluwaseun`, `Cheers - Ana`).
_SIGN_OFF = re.compile(
    rf"(?im){_CLOSING_START}(?:{_THANKS})[ \t]*[,!.]?[ \t]*(?:[-–—][ \t]*)?"
    rf"(?-i:({_FULL}))[ \t]*[.!]?[ \t]*\r?$"
)
# A single capitalised word doing what people do (`Luiza is from Xignite`, `Asya spent a year`,
# `…, said Maria.`, `Carlos here.`): taken when the word is a listed given name that is no everyday word.
_DOES = (
    r"(?:is|was|has|had|said|says|told|tells|asked|asks|wrote|writes|replied|replies|lives|lived|works"
    r"|worked|spent|joined|thinks|thought|wants|wanted|needs|needed|knows|knew|smiled|laughed|nodded"
    r"|shrugged|sighed|whispered|shouted|answered|agreed|explained|called|emailed|mentioned|suggested"
    # Saying who writes, as chats and mails open (`Hi team, Carlos here.`): at the clause's end.
    r"|here(?=[ \t]*(?:[.,!;:\n]|$)))"
)
_DOES_AFTER = re.compile(rf"[ \t]+{_DOES}(?![\w'’-])")
# The verbs that report what a person said: before a name (`…, said Maria.`) and after a name
# quoted with its role (`Ana Lima, our CTO, told us`).
_REPORTING = (
    r"(?:said|says|told|asked|added|adds|wrote|writes|replied|answered|explained|noted|commented|announced"
    r"|confirmed|whispered|shouted)"
)
_SAID_BEFORE = re.compile(rf"(?<![\w'’-]){_REPORTING}[ \t]+$")
_CLAUSE_END = re.compile(r"[ \t]*(?:[.,;!?\n]|$)")
# A given name, an initial and a family name (`Alvir D. Pušaver`, `Elita B Desaulniers`): how
# people, and rarely anything else, are written. (A sentence ending in a capital, `…chose Plan
# B. Then`, `Plan B Options`, has everyday words beside the initial: `_initialled` leaves those.)
_WITH_INITIAL = re.compile(rf"(?<![\w@./\\-])({_CAPITAL}[ \t]+[A-Z]\.?[ \t]+{_CAPITAL})(?![\w@'’-])")
_CAPITALISED_RUN = re.compile(
    rf"(?<![\w@./\\-])({_CAPITAL}(?:[ \t]+(?:[A-Z]\.[ \t]+|{_PARTICLE}[ \t]+)?{_CAPITAL}){{1,2}})(?![\w@-])"
)

# A name with initials (`Ana M. Lima`, `Ana M Lima`), 1-4 words.
_INITIALLED = rf"{_CAPITAL}(?:[ \t]+(?:[A-Z]\.[ \t]+|(?:{_PARTICLE}[ \t]+){{1,2}})?{_CAPITAL}){{0,3}}"  # `van de`
# A lower-case letter of a Latin script (`žilková` as well as `smith`; written as characters, which
# hyperscan's UTF-8 mode and `re` both read).
_LOWER_LETTER = "[a-zß-öø-ÿĀ-ſ]"
# A name of lower-case words (`my name is ana lima.`): taken after the strongest cues only, and
# only when its first word is a listed given name.
_LOWER = rf"{_LOWER_LETTER}+(?:[ \t]+{_LOWER_LETTER}+){{0,2}}"
# A title and a name all in lower case (`mr. elliott flew`, `ms. quinzia park`): the name's words
# are the listed ones that follow the title.
_TITLED_LOWER_CASE = re.compile(
    rf"(?<![\w.])(?:mr|mrs|ms|mx|dr|prof)\.[ \t]+({_LOWER_LETTER}+(?:[ \t]+{_LOWER_LETTER}+)?)(?![\w'’-])"
)
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
_CUE = re.compile(
    rf"(?<![\w'])(?i:({_CUE_WORDS}))[ \t]+(?:({_INITIALLED})(?![\w'’-])|({_LOWER})(?=[ \t]*(?:[.,;!?\n]|$)))"
)
# Work handed to or from a person, as tickets, reviews and notes write it (`assigned to Rubija
# Liberšar`, `reviewed by Ana M. Lima`, `escalated to Priya`, `spoke with Tom Berg`): the name
# follows the phrase. Bots, pipelines and teams are handed work too; `_handed` tells them apart.
_HANDOFF_WORDS = (
    r"(?:re)?assigned[ \t]+to|(?:reported|reviewed|approved|requested|submitted|opened|closed|authored|written"
    r"|signed(?:[ \t]+off)?)[ \t]+by|(?:escalated|forwarded|handed[ \t]+(?:it[ \t]+)?over)[ \t]+to"
    r"|on[ \t]+behalf[ \t]+of|(?:spoke|talked)[ \t]+(?:with|to)|(?:meeting|met)[ \t]+with"
    r"|reach(?:ed)?[ \t]+out[ \t]+to|follow(?:ed)?[ \t]+up[ \t]+with|check(?:ed)?[ \t]+with"
    r"|zugewiesen[ \t]+an|assignée?[ \t]+à|asignad[oa][ \t]+a|assegnat[oa][ \t]+a|atribuíd[oa][ \t]+a"
    r"|toegewezen[ \t]+aan|przypisan[eya][ \t]+do|tilldelad[ \t]+till"
)
_HANDOFF = re.compile(rf"(?<![\w'’])(?i:{_HANDOFF_WORDS})[ \t]+({_INITIALLED})(?![\w'’-])")
# A word cased as a name (`Lima`, `Anne-Marie`, `McKenzie`, `O'Brien`), not as a product (`GitHub`).
_NAME_CASED = re.compile(r"(?:Mc|Mac|O['’]|D['’])?[^\W\d_][^\W\d_A-Z]*(?:-[^\W\d_][^\W\d_A-Z]*)?")
# The words of a name that are neither given nor family names: initials and particles.
_JOINING = re.compile(rf"[A-Z]\.?|{_PARTICLE}")
# A person quoted with their role between commas, as news and reports write it (`Hijacinta
# Godina, the technical writer, said: …`, `Ana Lima, our CTO, told us`).
_APPOSITIVE = re.compile(
    rf"(?<![\w@./\\-])({_INITIALLED}),[ \t]+(?:the|our|their|his|her|its|a|an)[ \t]+[^,\n]{{2,60}},"
    rf"[ \t]+{_REPORTING}(?![\w'’-])"
)
# A dialogue's speaker labels: `Ana: I'll be there.`, `Ana:"Who are you?"` on consecutive lines.
_SPEAKER = re.compile(rf"\n[ \t]*({_CAPITAL})[ \t]*:(?:[ \t]+(?=[^\W\d_\s]|[\"'“])|(?=[\"“]))")
# A person's family and the people of their life, said of a name: `Amanda's daughter`,
# `Franciska's kid`; `my kid Agi`, `our colleague Dagny Berg`, `her brother Tomás`.
_KIN_WORDS = (
    r"daughters?|sons?|kids?|child(?:ren)?|wife|husband|spouse|mother|father|mom|mum|dad|brothers?|sisters?|parents"
    r"|grand(?:mother|father|ma|pa|son|daughter|children)|aunt|uncle|niece|nephew|cousin|fianc[ée]e?|boyfriend"
    r"|girlfriend|widow(?:er)?"
)
_OWN_WORDS = (
    rf"{_KIN_WORDS}|colleague|co-?worker|friend|boss|manager|teammate|neighbou?r|landlord|landlady|room-?mate"
    r"|flatmate|intern|lawyer|attorney|doctor|dentist|therapist|tutor|teacher|mentor|supervisor|caregiver"
)
_KIN_OF = re.compile(rf"(?<![\w@./\\-])({_INITIALLED})['’]s[ \t]+(?:{_KIN_WORDS}|birthday|wedding|funeral)(?![\w'’-])")
_KIN_BEFORE = re.compile(
    rf"(?<![\w'’-])(?i:my|our|his|her|their|your)[ \t]+(?i:{_OWN_WORDS})[ \t]+({_INITIALLED})(?![\w'’-])"
)
# The same in the other languages agents read (`Meine Tochter Mechthild`, `mon fils Régis`,
# `mi hija Nerea`, `mijn collega Joost`).
_OWN_OTHER_WORDS = (
    r"fils|fille|femme|mari|frère|s(?:œ|oe)ur|mère|père|coll[èe]gue|sohn|tochter|frau|mann|bruder|schwester|mutter"
    r"|vater|kolleg(?:e|in)|hij[oa]|espos[oa]|marido|herman[oa]|madre|padre|colega|figli[oa]|moglie|marito"
    r"|fratello|sorella|collega|filh[oa]|irmão|irmã|mãe|pai|zoon|dochter|vrouw|broer|zus|moeder|vader|syn|córka"
    r"|żona|mąż|brat|siostra|dotter|bror|syster|kollega|dcera|manžel(?:ka)?|sestra|bratr"
)
_OWN_OTHER = (
    r"mon|ma|mes|notre|meine?[mn]?|unsere?[mn]?|mi|mis|nuestr[oa]|il[ \t]+mio|la[ \t]+mia|mio|mia|(?:o[ \t]+)?meu"
    r"|(?:a[ \t]+)?minha|mijn|onze|mój|moja|min|mitt|můj|moje"
)
_KIN_OTHER = re.compile(rf"(?<![\w'’-])(?i:{_OWN_OTHER})[ \t]+(?i:{_OWN_OTHER_WORDS})[ \t]+({_INITIALLED})(?![\w'’-])")
# The speaker after a quotation (`"… direction," says Bergqvist.`): a quote's closing mark, the
# reporting verb, then the name where the clause ends.
# (Other languages' too: `», a déclaré Régis Vautrin,`, `", sagte …`, `", dijo …`.)
_REPORTING_OTHER = (
    r"(?:a[ \t]+(?:déclaré|dit|expliqué|ajouté|précisé)|sagte|erklärte|betonte|dijo|explicó|afirmó|añadió"
    r"|ha[ \t]+(?:dichiarato|detto|spiegato)|disse|afirmou|explicou|zei|verklaarde|powiedział[a]?|sade|řekl[a]?)"
)
_QUOTED_BY = re.compile(
    rf"[\"”»][ \t]*,?[ \t]+(?:{_REPORTING}|{_REPORTING_OTHER})[ \t]+({_INITIALLED})"
    # (the clause's end, or a manner of saying first: `said Tuppence severely.`)
    r"(?=(?:[ \t]+[a-z]+ly)?[ \t]*(?:[.,;!?\n]|$))"
)
# The speaker named after the quotation, before the verb (`"…right," Dewar said.`, `“…,” Okafor
# told reporters`): the quotation ends in a comma, `!` or `?` inside its closing quote.
_SAYS_AFTER = (
    rf"(?:{_REPORTING}|continued|recalled|admitted|insisted|argued|warned|declared|stated|remarked|responded"
    r"|conceded|agreed|cried|joked)"
)
_QUOTED_THEN = re.compile(rf"[,!?][\"”»][ \t]+({_INITIALLED})[ \t]+{_SAYS_AFTER}(?![\w'’-])")
# A record's heading line, a name alone above its contact fields or address (a business card, a
# CV, an address label): at the start of the text or after a blank line (its lines may be quoted
# in a reply or bulleted: `> Ana Lima`).
_HEADING = re.compile(rf"\n[ \t]*{LINE_MARKS}\n[ \t]*{LINE_MARKS}({_INITIALLED})[ \t]*(?=\r?\n)")
_RECORD_LINE = re.compile(
    rf"\n[ \t]*{LINE_MARKS}"
    r"(?:\d{1,6}[A-Za-z]?,?(?:[ \t]+\d{1,5})?[ \t]+[^\W\d_]|(?:P\.?[ \t]?O\.?[ \t]?Box|PSC|Unit)[ \t]+\d)"
)


def _words(value: str) -> list[str]:
    return [w for w in re.split(r"[ \t]+", value.rstrip(".")) if w]


def _capitalised(word: str) -> bool:
    return word[:1].isupper() and not (word.isupper() and len(word) > 3)


def _shape(value: str, allow_upper: bool = False) -> bool:
    """A person's name in form: 1-4 capitalised words (particles aside), none a stop word."""
    words = _words(value)
    if not words or len(words) > 5 or len(value) > 60:
        return False
    # Particles and a middle initial without its period (`Martim A Pereira`: `a` is a stop word).
    named = [
        w
        for i, w in enumerate(words)
        if not re.fullmatch(_PARTICLE, w) and not (0 < i < len(words) - 1 and re.fullmatch("[A-Z]", w))
    ]
    if not named:
        return False
    for word in named:
        if word.lower() in _STOP or word.lower() in _CLINICAL or re.fullmatch(r"I['’](?:m|d|ll|ve)", word):
            return False
        if not (_capitalised(word) or (allow_upper and word.isupper())):
            return False
    return True


def _listed(value: str) -> bool:
    given, family = given_names(), family_names()
    return any(w.lower() in given or w.lower() in family for w in _words(value))


def _not_everyday(value: str) -> bool:
    """A name after a weak cue: a listed given or family name that is no ambiguous word, or two
    words or more led by no everyday word (not `Thanks, Merged`, `took 5 ms. Then`)."""
    words = [w.lower() for w in _words(value)]
    given, family = given_names(), family_names()
    if any((w in given or w in family) and w not in _AMBIGUOUS for w in words):
        return True
    return len(words) >= 2 and words[0] not in names_model.model()["lexicon"]


def _name_words(value: str) -> int | None:
    """How many of `value`'s words (initials and particles aside) are listed names (no ambiguous
    word), when each is cased as a name, none is a word of a machine or of code
    (`names_model.NEVER`) and each is listed or no everyday word; else None."""
    everyday: frozenset[str] = names_model.model()["lexicon"]
    given, family = given_names(), family_names()
    listed = 0
    for word in _words(value):
        if _JOINING.fullmatch(word):
            continue
        low = word.lower()
        if not _NAME_CASED.fullmatch(word) or low in names_model.NEVER:
            return None
        if (low in given or low in family) and low not in _AMBIGUOUS:
            listed += 1
        elif low in everyday or low in _AMBIGUOUS:
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


def _addressed_name(value: str) -> bool:
    """A name a greeting or a sign-off addresses (`Hi Anselm,`, `Thanks Anselm!`): a listed
    name, or words cased as names none of which is an everyday word or software's (`Hello
    World!`, `Thanks Jenkins!`, `Hi Team,` are none); a given name that is an everyday word too
    leads a name of two words or more (`Bill Gottlieb`)."""
    everyday: frozenset[str] = names_model.model()["lexicon"]
    given = given_names()
    words = _words(value)
    for index, word in enumerate(words):
        low = word.lower()
        if _JOINING.fullmatch(word):
            continue
        if low in names_model.NEVER or low in _STOP or not _NAME_CASED.fullmatch(word):
            return False
        if index == 0 and len(words) >= 2 and low in _EVERYDAY_GIVEN:
            continue
        if low not in given and (names_model.everyday(low, everyday) or low.endswith(("ed", "ing"))):
            return False  # (a verb's forms the lexicon lacks: `Thanks, Merged`)
    return True


def _handed(value: str, alone: bool = True) -> bool:
    """A name after a hand-off phrase (`_HANDOFF`): 1-4 words in a name's form (`_name_words`);
    one word only when listed (`Priya`, not `Legal`) and `alone` allows it (a quoted person's
    role between commas follows a full name)."""
    words = _words(value)
    if not _shape(value) or len(words) > 4:
        return False
    listed = _name_words(value)
    if listed is None:
        return False
    named = [w for w in words if not _JOINING.fullmatch(w)]
    return len(named) >= 2 or (alone and listed > 0)


# A manifest's list of people (`authors = [{ name = … }]`, `maintainers:` then `- name: …`).
_PEOPLE_ARRAY = re.compile(r"(?i)(?<![\w-])(?:authors|maintainers|contributors|developers|uploaders)[\"']?[ \t]*[:=]")


def _in_people_array(text: str, start: int, value: str) -> bool:
    """Whether a generic `name` of two words or more, each listed or no everyday word, is an
    item of a manifest's list of people opened at most a few lines above it."""
    return (
        len(_words(value)) >= 2
        and _name_words(value) is not None
        and _PEOPLE_ARRAY.search(text, max(0, start - 240), start) is not None
    )


def _contact_near(text: str, start: int, end: int) -> bool:
    """Whether a contact field (e-mail, phone, address) is beside the value, in its record."""
    low = max(start - 160, text.rfind("{", max(0, start - 160), start), text.rfind("}", max(0, start - 160), start), 0)
    high = min(len(text), end + 160)
    for brace in "{}":  # within its JSON object
        found = text.find(brace, end, high)
        if found >= 0:
            high = found
    return _CONTACT.search(text, low, high) is not None


def _free_text(value: str) -> bool:
    """Capitalised words in prose that make a name: led by a listed given name (an everyday
    word needs a listed family name after it), or two words ending in a listed family name."""
    words = _words(value)
    if len(words) < 2 or not _shape(value):
        return False
    given, family = given_names(), family_names()
    first, last = words[0].lower(), words[-1].lower()
    if first in given and first not in _AMBIGUOUS:
        return True
    if last in family and last not in _AMBIGUOUS:
        return first in given or (len(words[0]) > 2 and first not in family)
    return first in given and last in family


# Letters that are words of their own in many languages (articles, conjunctions, `I`): with no
# period they make no initial between two words of prose.
_VOWEL_WORDS = frozenset("AEIOUY")


def _initialled(value: str) -> bool:
    """`Given I. Family` in prose: both words in a name's form and neither an everyday word
    (unless a listed name)."""
    words = _words(value)
    # (A given and a family name have two letters or more: `wanted: B C X+` is a list of letters.)
    if len(words) != 3 or not _shape(value) or len(words[0]) < 2 or len(words[2]) < 2:
        return False
    if words[1] in _VOWEL_WORDS:  # `Chimica A Produselor`, `Vinte E Cinco`: a word, no initial
        return False
    everyday: frozenset[str] = names_model.model()["lexicon"]
    given, family = given_names(), family_names()
    for word in (words[0], words[2]):
        low = word.lower()
        if low in _AMBIGUOUS or (len(word) > 1 and word.isupper()):
            return False  # (`GNU R Polygon`: an acronym, no given name)
        if low not in given and low not in family and (low in everyday or (len(low) >= 6 and low.endswith("ing"))):
            return False  # everyday words and a verb's `-ing` form (`Developing R Packages`)
    return True


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Without a trailing word that is not part of a name (`Ana Lima Team` keeps `Ana Lima`)."""
    value = text[start:end]
    words = _words(value)
    while len(words) > 1 and words[-1].lower() in _STOP:
        words.pop()
    kept = " ".join(words)
    if value.startswith(kept):
        return start, start + len(kept)
    return start, end


_FIRST_WORD = re.compile(r"([^ \t]+)[ \t]+")
_POSSESSIVE_WORD = re.compile(r"[^\W\d_]['’]s(?=[ \t])")
# A contraction opening a run (`It's Ivan Rossi`, `You're Chen Smith`): a pronoun and a verb.
_CONTRACTION = re.compile(r"([^\W\d_]+)['’](?:s|re|m|ll|ve|d)[ \t]+")


def _to_possessive(text: str, start: int, end: int) -> tuple[int, int]:
    """A run without a contraction of everyday words opening it (`It's Ivan Rossi` is `Ivan
    Rossi`), and up to the first possessive after its first word (`Larry Wall's Practical
    Extraction` is `Larry Wall's`): what follows a possessive is the thing owned, not more of
    the name."""
    lead = _CONTRACTION.match(text, start, end)
    if lead is not None and lead.group(1).lower() in names_model.model()["lexicon"]:
        start = lead.end()
    first = _FIRST_WORD.match(text, start, end)
    inner = _POSSESSIVE_WORD.search(text, first.end(), end) if first is not None else None
    return (start, inner.end()) if inner is not None else (start, end)


def _without_lead(text: str, start: int, end: int) -> tuple[int, int]:
    """Without leading words that are everyday words and no listed name: a sentence's first word
    is capitalised too (`Contact Priya Raman`, `Patient Maria Gonzalez`, `Ask Svetlana`)."""
    everyday: frozenset[str] = names_model.model()["lexicon"]
    given, family = given_names(), family_names()
    while (lead := _FIRST_WORD.match(text, start, end)) is not None:
        word = lead.group(1).lower()
        if word not in everyday or word in given or word in family:
            break
        start = lead.end()
    return start, end


def _column_kind(header: str) -> tuple[str, str] | None:
    if re.fullmatch(rf"(?:{_PERSON_KEYS})", header.replace("_", " "), re.IGNORECASE) or re.fullmatch(
        rf"(?:{_PERSON_KEYS})", header, re.IGNORECASE
    ):
        return "PERSON", "name-column"
    if header in ("name", "customer", "contact", "author", "owner", "patient", "employee", "recipient", "person"):
        return "PERSON", "name-column-generic"
    return None


def _column_value(_kind: str, rule: str, value: str) -> bool:
    if rule == "name-column":
        return _shape(value, allow_upper=True)
    if rule == "name-column-contact":
        return _shape(value, allow_upper=True) and (_listed(value) or len(_words(value)) >= 2)
    return _shape(value, allow_upper=True) and _listed(value)


_CONTACT_COLUMN = re.compile(r"(?:^|_)(?:e_?mail|phone|mobile|tel|telephone|address|street|city|zip|postcode)(?:_|$)")


# `first` and `last` (and `middle`) name a person's names only as a pair of columns: alone, a
# `first` column holds anything (a date, a count, a flag). Beside a contact column they are a
# person's; without one their cells are taken as a generic `name` column's (a listed name).
_PAIRED = frozenset(("first", "last", "middle"))


def _refine(headers: list[str], kinds: list[tuple[str, str] | None]) -> list[tuple[str, str] | None]:
    """A generic `name` column of a table that also has contact columns holds people; so do
    `first` and `last` columns in one table."""
    contact = any(_CONTACT_COLUMN.search(h) for h in headers)
    if "first" in headers and "last" in headers:
        paired = ("PERSON", "name-column" if contact else "name-column-generic")
        kinds = [paired if h in _PAIRED else k for h, k in zip(headers, kinds, strict=True)]
    if not contact:
        return kinds
    return [("PERSON", "name-column-contact") if k == ("PERSON", "name-column-generic") else k for k in kinds]


# A header line naming `first` and `last` side by side, either way round (`first,last,email`,
# `| Last | First |`), maybe with `middle` between: what makes the table's header found.
_CELL_GAP = r"[ \t\"'`]*[,;\t|][ \t\"'`]*"
_FIRST_LAST = (
    rf"(?:^|[^a-z_])(?:first{_CELL_GAP}(?:middle{_CELL_GAP})?last"
    rf"|last{_CELL_GAP}(?:middle{_CELL_GAP})?first)(?:[^a-z_]|$)"
)


COLUMNS = Columns(
    (
        "name",
        "surname",
        "firstname",
        "lastname",
        "fullname",
        "customer",
        "contact",
        "author",
        "owner",
        "patient",
        "employee",
        "recipient",
        "person",
        "nombre",
        "vorname",
        "nachname",
        "prenom",
        "prénom",
        "cognome",
        "apellido",
        "fname",
        "lname",
        "mname",
    ),
    _column_kind,
    _column_value,
    _refine,
    headers=(_FIRST_LAST,),
)


@functools.cache
def _raw_names() -> tuple[str, ...]:
    """The listed names as written (capitalised), for the free-text anchor."""
    words: set[str] = set()
    for file in ("first_names.txt", "given_names_us.txt", "surnames.txt"):
        text = resources.files("router.privacy").joinpath("data", file).read_text(encoding="utf-8")
        words.update(w for line in text.splitlines() if not line.startswith("#") for w in line.split())
    return tuple(sorted(words))


# A field written `Last, First` (`Patient: Okafor, Ottilie`, `Pt: Quispe, Noor A.`): after a
# label's value, a comma, the given name, then the field's end.
_INVERTED_TAIL = re.compile(rf",[ \t]+({_CAPITAL}(?:[ \t]+[A-Z]\.?)?)(?=[\"',;\n]|[ \t]{{2,}}|[ \t]*$)", re.MULTILINE)
# Waiting on a person (`let's wait for Ravindra to weigh in`): `for`, the name, `to` and a verb.
_FOR_TO = re.compile(rf"(?<![\w'’-])for[ \t]+({_CAPITAL}(?:[ \t]+{_CAPITAL})?)[ \t]+to[ \t]+[a-z]")
# A greeting typed in lower case (`hey kofi can you`): listed given names only.
_GREETED_LOWER = re.compile(
    rf"(?<![\w'’-])(?:hey|hi|hello|thanks|thank[ \t]+you|morning|cheers)[ \t]+({_LOWER_LETTER}{{2,}})(?=[ \t,!.?]|$)"
)
# BibTeX's people (`author = {Okafor, Ottilie and Ken Mbeki}`), `and` between them.
_BIBTEX_PEOPLE = re.compile(r"(?i:(?<![\w-])(?:author|editor)[ \t]*=[ \t]*)[{\"]([^{}\"\n]{3,600})[}\"]")
_BIBTEX_AND = re.compile(r"[ \t]+and[ \t]+")
# `git shortlog -sn`'s lines: a count, a tab, the author.
_SHORTLOG = re.compile(rf"^[ \t]*\d+\t({_INITIALLED})[ \t]*$", re.MULTILINE)
# A file's or a section's list of its people, under its heading (`# Authors`, `Contributors:`).
_PEOPLE_HEADING = re.compile(
    r"(?im)^[ \t#=*-]*(?:authors?|contributors?|maintainers?|credits|people|thanks[ \t]+to)\b[^\n]{0,60}\n"
)
_PEOPLE_LINE = re.compile(
    rf"[ \t]*(?:[-*+][ \t]+)?({_INITIALLED})(?:[ \t]+(?:\([^()\n]*\)|<[^<>\n]*>|[-–—][^\n]*))?[ \t]*$"
)
# A court filing's caption: a party in capitals, a comma, then its role on the next line.
_CAPTION = re.compile(
    r"^[ \t]*([A-Z][A-Z'’-]+(?:[ \t]+[A-Z][A-Z.'’-]*){1,3}),?[ \t]*\r?\n[ \t]*"
    r"(?:Plaintiffs?|Defendants?|Petitioners?|Respondents?|Appellants?|Appellees?|Claimants?|Debtors?)\b",
    re.MULTILINE,
)
# A label's last word and its `:` or `=` (a key without one, `name` in prose or code, is no label).
_LABEL_ANCHOR = (
    r"(?:names?|author|assignee|reporter|requester|customer|contact|owner|patient|employee|recipient|passenger"
    r"|guest|member|user|nombre|apellidos?|pr[ée]nom|famille|vorname|nachname|cognome|nome|voornaam|achternaam"
    r"|to|by|ansprechpartner(?:in)?|interlocut(?:eur|rice)|contactpersoon|contacto|referente|kontaktperson"
    r"|kontaktowa|osoba|(?:^|[^A-Za-z])pt"  # (`Pt:`, not `Interrupt:`)
    r"|attending|physician|pcp|surgeon|clinician|provider)"
    r"[\"']?[ \t]*(?::|=|->)"
)
# A message's first or last line that is a name alone: a salutation (`Renee,` above the text,
# `Jim, Take a look`) or a signature with no closing word (`… a look at it.` then `Vince`). Taken
# when the first word is a listed given name, no everyday word and no place (`_lone_given`).
_SALUTATION = re.compile(rf"(?m)^[ \t]*({_CAPITAL}(?:[ \t]+{_CAPITAL})?)[ \t]*,(?:[ \t]*\r?\n[ \t]*|[ \t]+)(?=[A-Z])")
_SIGNATURE_ALONE = re.compile(
    rf"(?m)(?<=[.!?)]\n)[ \t]*({_CAPITAL}(?:[ \t]+(?:[A-Z]\.[ \t]*)?{_CAPITAL})?)[ \t]*[.!]?[ \t]*\r?$"
)
# A Lotus Notes address (`Traci Warner@ENRON`, `Rudwell Johnson/ENRON@enronXgate`): a person's
# name, then the organisation's units, no domain.
_NOTES_ADDRESS = re.compile(
    rf"(?<![\w.@/])({_CAPITAL}(?:[ \t]+(?:[A-Z]\.?[ \t]+)?{_CAPITAL}){{1,2}})(?:/[A-Za-z][\w-]*){{0,3}}@[A-Za-z][\w-]*"
    r"(?![\w-]*\.[A-Za-z])"
)
# A mail's sender written family name first (`"Townsend, George" <gtownsend@…>`).
_MAIL_INVERTED = re.compile(
    rf"(?<![\w@.])\"({_CAPITAL}(?:[ \t]+{_CAPITAL})?,[ \t]+{_CAPITAL}(?:[ \t]+[A-Z]\.?)?)\"[ \t]*"
    r"(?:<[^<>\s@]+@[^<>\s]+>|\([^()\s@]+@[^()\s]+\))"
)
# Offices, ranks and callings before a name (`President Bush`, `Doctor Hank`, `Capt. Spastic`):
# a name-cased word after the offices that go with a family name, even an everyday word
# (`_OFFICE_ANY`); after the others a word `_addressed_name` takes, or (`_OFFICE_LISTED`: `King`,
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
_OFFICE = re.compile(
    r"(?<![\w.])((?:Sen|Rep|Gov|Rev|Prof|Drs|Capt|Sgt|Lt|Col|Gen|Adm)\.?|President|Senator|Governor|Judge|Justice|Sir"
    r"|Dame|Professor|Doctor|Coach|Detective|Sergeant|Captain|Lieutenant|Colonel|Admiral|Minister|Mayor|Chancellor"
    r"|Pastor|Rabbi|Imam|Sheikh|Shaikh|Bishop|Cardinal|Ambassador|Nurse|Uncle|Aunt|Auntie|Grandma|Grandpa|Prince"
    r"|Princess|King|Queen|Lord|Lady|Father|Sister|Brother"
    # The same in lower case after an article or a people (`the teacher Adz`, `Shiite cleric Muqtada`).
    r"|(?<=the )(?:teacher|coach|doctor|lawyer|attorney|professor|cleric|leader|spokesman|spokeswoman|photographer"
    r"|artist|author|writer|singer|actor|actress|director|host|owner|instructor|trainer|therapist|dentist|nurse)"
    r"|(?<=[a-z] )(?:cleric|leader))[ \t]+"
    rf"({_FULL})(?![\w@-])"
)


# A documentation comment's author tag (Javadoc, JSDoc, PHPDoc: `@author Cosmin Raghunathan`).
_AT_AUTHOR = re.compile(rf"(?<![\w@])@(?:author|maintainer)[ \t]+({_FULL})")
# R's `person("Given", "Family", …)` (a DESCRIPTION's `Authors@R`).
_R_PERSON = re.compile(
    rf"(?<![\w.])person\([ \t]*(?:given[ \t]*=[ \t]*)?[\"']({_FULL})[\"'][ \t]*,[ \t]*"
    rf"(?:family[ \t]*=[ \t]*)?[\"']({_FULL})[\"']"
)


# A licence's or a header's copyright holder (`Copyright (c) 2021-2024 Signe Lindqvist`).
_COPYRIGHT = re.compile(
    rf"(?i:copyright)[ \t]+(?:(?:\((?i:c)\)|©)[ \t]*)?(?:\d{{4}}(?:[ \t]*[-–,][ \t]*\d{{4}})*,?[ \t]+)?(?-i:({_FULL}))"
)
# A to-do's owner (`TODO(Radomir):`, `FIXME(Anouk)`).
_TODO_OWNER = re.compile(rf"(?<![\w])(?:TODO|FIXME|XXX|HACK|NOTE)\(({_CAPITAL}(?:[ \t]+{_CAPITAL})?)\)")
# A manifest's list of people as strings (`"contributors": ["Radomir Pryce <…>"]`).
_PEOPLE_LIST = re.compile(r"(?i)(?<![\w-])(?:authors|maintainers|contributors|developers)[\"']?[ \t]*[:=][ \t]*\[")
_LIST_ITEM = re.compile(rf"[\"']({_FULL})(?:[ \t]*<[^<>\s]+>)?(?:[ \t]*\([^()\s]+\))?[\"']")


# A person asked, told or thanked, anywhere in a sentence (`We asked Wendelin Thistlewood to
# rerun it`, `pinged Priya about the flaky test`): the verb's object is a person.
_ASKED_VERBS = (
    r"(?:[Aa]sked|[Tt]old|[Pp]inged|[Rr]eminded|[Ee]-?mailed|[Tt]exted|[Mm]essaged|[Ii]nvited|[Tt]hanked"
    r"|[Nn]otified|[Cc]ontacted|[Cc]ongratulated|[Pp]aged|[Cc][Cc]['’]?e?d)"
)
_ASKED_DONE = re.compile(
    rf"(?<![\w'’-]){_ASKED_VERBS}[ \t]+({_CAPITAL}(?:[ \t]+{_CAPITAL})?)(?=[ \t]+[a-z]|[ \t]*(?:[,.!?:;]|\r?$))",
    re.MULTILINE,
)

# Authors cited by name and year, as papers, reports and documentation cite them: `Spang (1983)
# noted`, `Domínguez Caparrós, (2000)`, `Smith and Jones (2020)`, `Smith et al. (2019)` in the
# text, and `(Quilis 1964)`, `(Lewis, Simons, & Fennig, 2014)`, `(see Milekic 2010; Heidenreich &
# Turano 2011)` in parentheses. Each author is one or two words cased as a name, none an everyday
# word or software's (`_name_words`: not `Windows (2000)`, `(March 2020)`, `(Python 2019)`).
_CITED_NAME = rf"{_CAPITAL}(?:[ \t]+{_CAPITAL})?"
_CITED_AUTHORS = (
    rf"{_CITED_NAME}(?:(?:,[ \t]+{_CITED_NAME})*,?[ \t]+(?:and|&)[ \t]+{_CITED_NAME})?(?:[ \t]+et[ \t]+al\.?)?"
)
_YEAR = r"(?:1[5-9]|20)\d\d[a-z]?"
_CITE_LEAD = r"(?:(?:see(?:[ \t]+also)?|e\.g\.,?|cf\.|i\.e\.,?|also)[ \t]+)?(?:for[ \t]+(?:example|instance),?[ \t]+)?"
_CITED = re.compile(
    rf"(?<![\w'’@./\\-])({_CITED_AUTHORS}),?[ \t]+\({_YEAR}(?=[),;:])"
    rf"|(?:\(|;[ \t]*){_CITE_LEAD}({_CITED_AUTHORS}),?[ \t]+{_YEAR}(?=[);,])"
)
_CITED_SPLIT = re.compile(r"[ \t]+et[ \t]+al\.?$|,?[ \t]+(?:and|&)[ \t]+|,[ \t]+")
# Words a year follows that name a time or an event, not an author (`(Christmas 2019)`; months,
# days and seasons are everyday words already).
_DATED = frozenset(
    (
        "christmas",
        "easter",
        "thanksgiving",
        "halloween",
        "ramadan",
        "diwali",
        "hanukkah",
        "passover",
        "eid",
        "lent",
        "advent",
        "pentecost",
        "covid",
        "brexit",
        "olympics",
        "expo",
        "euro",
    )
)

# The justices of a court's opinion, in capitals as the reports print them: `in which KENNEDY,
# SOUTER, and BREYER joined`, `SCALIA filed a dissenting opinion`, `ROBERTS, C. J., delivered
# the opinion of the Court`.
_JUSTICE = r"(?:Mc|Mac|O['’])?[A-Z]{2,}(?:-[A-Z]{2,})?(?:,[ \t]+(?:C\.[ \t]*)?J\.,)?"
_JOINED = re.compile(
    rf"(?<![\w'’-])(?:[Ii]n[ \t]+which|[Jj]oined[ \t]+by)[ \t]+({_JUSTICE}(?:,[ \t]+{_JUSTICE})*,?"
    rf"(?:[ \t]+and[ \t]+{_JUSTICE})?)(?:[ \t]+joined|[ \t]*[.,;])"
    rf"|(?<![\w'’-])({_JUSTICE})[ \t]+(?:filed|delivered|announced|wrote)[ \t]+(?:an?|the)[ \t]+"
    r"(?:opinion|concurring|dissenting|statement|judgment)"
)
_JUSTICE_WORD = re.compile(r"(?:Mc|Mac|O['’])?[A-Z]{2,}(?:-[A-Z]{2,})?")
# People listed with their age (`Cossor Ali, 24, London E17`, as news and police reports list
# them): two to four words cased as names, then the age between commas.
_AGED = re.compile(
    rf"(?:^|(?<=[\n;(])|(?<=[,;:][ \t]))[ \t]*({_CAPITAL}(?:[ \t]+{_CAPITAL}){{1,3}}),[ \t]+\d{{1,2}},[ \t]+(?=[A-Z])",
    re.MULTILINE,
)

# A clinician's name before a degree (`Xiomara Quillfeather, MD`, `Ondine Velarquez, RN`, `Zhang
# Wei, PA-C`), as clinical notes sign and attribute them. `MD` alone is also Maryland
# (`Silver Spring, MD 20910`): `_read_degree` asks more of it.
_DEGREES = (
    r"M\.D\.|MD|D\.O\.|DO|R\.N\.|RN|N\.P\.|NP|PA-C|Ph\.D\.|PhD|MBBS|MBChB|DDS|DMD|FRCP|FRCS|MRCP|FACP|FACS"
    r"|CRNA|LPN|APRN|FNP|FNP-BC|PharmD|LCSW|DNP|MSN|BSN|DPM|OD|PsyD"
)
_DEGREE = re.compile(rf"(?<![\w@./\\-])({_INITIALLED}),[ \t]*({_DEGREES})(?![\w-])(?:,[ \t]*(?:{_DEGREES})(?![\w-]))?")
_ZIP_AFTER = re.compile(r"[ \t]+\d{5}(?!\d)")

# (pattern, rule, anchor, caseless, characters before the anchor's end, after it)
_RULES: tuple[tuple[re.Pattern[str], str, str, bool, int, int], ...] = (
    (_LABELLED, "name-label", _LABEL_ANCHOR, True, 48, 140),
    (_MAIL, "name-mail", r"[<(][^<>()\s@]+@[^<>()\s]+[>)]", False, 100, 4),
    (
        _ROLE,
        "name-role",
        r"(?:[Uu]ser|[Cc]ustomer|[Cc]lient|[Pp]atient|[Mm]ember|[Ee]mployee|[Cc]ontact|[Pp]assenger|[Gg]uest|[Tt]enant"
        r"|[Aa]pplicant)[ \t]+[A-Z]",
        False,
        16,
        100,
    ),
    (
        _GREETING,
        "name-greeting",
        r"(?:Dear|Hi|Hello|Hey|Hallo|Liebe|Sehr geehrte|Bonjour|Cher|Chère|Hola|Estimad|Querid|Ciao|Gentile|Caro|Cara"
        r"|Olá|Ola|Happy[ \t]+birthday|Congrats|Congratulations|Welcome|aboard|back)[a-z]{0,2}[ \t]",
        False,
        24,
        100,
    ),
    (
        _CUE,
        "name-cue",
        r"(?:my[ \t]+name[ \t]+is|my[ \t]+name's|your[ \t]+(?:full[ \t]+|first[ \t]+|last[ \t]+)?name\?"
        r"|maiden[ \t]+name[ \t]+is"
        r"|named[ \t]+(?:him|her)|directed[ \t]+by|i'm|i[ \t]+am|calls?[ \t]+me|ich[ \t]+hei(?:ß|ss)e"
        r"|mein[ \t]+name[ \t]+ist|je[ \t]+m['’]appelle|mon[ \t]+nom[ \t]+est|me[ \t]+llamo|mi[ \t]+nombre[ \t]+es"
        r"|mi[ \t]+chiamo|il[ \t]+mio[ \t]+nome[ \t]+è|meu[ \t]+nome[ \t]+é|mijn[ \t]+naam[ \t]+is"
        r"|nazywam[ \t]+się|jag[ \t]+heter|jmenuji[ \t]+se)[ \t]",
        True,
        60,
        100,
    ),
    (
        _SIGN_OFF,
        "name-signoff",
        r"(?:regards|wishes|thanks|thank you|thx|cheers|sincerely|respectfully|the best|take care|touch|soon|later"
        r"|see you|love|hugs|xoxo)[ \t]*[,!.]?[ \t]*(?:[-–—][ \t]*)?[A-Z]",
        True,
        60,
        100,
    ),
    (
        _HANDOFF,
        "name-handoff",
        r"(?:assigned[ \t]+to|(?:reported|reviewed|approved|requested|submitted|opened|closed|authored|written|off)"
        r"[ \t]+by|(?:escalated|forwarded|over)[ \t]+to|behalf[ \t]+of|(?:spoke|talked|meeting|met|up|check|checked)"
        r"[ \t]+(?:with|to)|out[ \t]+to|zugewiesen[ \t]+an|assignée?[ \t]+à|asignad[oa][ \t]+a|assegnat[oa][ \t]+a"
        r"|atribuíd[oa][ \t]+a|toegewezen[ \t]+aan|przypisan[eya][ \t]+do|tilldelad[ \t]+till)[ \t]+[A-Z]",
        True,
        60,
        100,
    ),
    (_ASKED_DONE, "name-asked", rf"{_ASKED_VERBS}[ \t]+[A-Z]", False, 24, 100),
    (_JOINED, "name-justice", r"(?:[Ii]n[ \t]+which|[Jj]oined[ \t]+by)[ \t]+[A-Z][A-Z]", False, 40, 200),
    (_JOINED, "name-justice", r"(?:[A-Z][A-Z]|J\.,)[ \t]+(?:filed|delivered|announced|wrote)[ \t]", False, 60, 40),
    (_AGED, "name-aged", r"[A-Za-z],[ \t]+[0-9]{1,2},[ \t]+[A-Z]", False, 80, 2),
    (_DEGREE, "name-degree", rf"[A-Za-z],[ \t]*(?:{_DEGREES})", False, 80, 16),
    (_CITED, "name-cited", r"[ \t(](?:1[5-9]|20)[0-9][0-9][a-z]?[);,:]", False, 160, 2),
    (_APPOSITIVE, "name-appositive", rf",[ \t]+{_REPORTING}", False, 140, 16),
    (_KIN_OF, "name-kin", rf"['’]s[ \t]+(?:{_KIN_WORDS}|birthday|wedding|funeral)", True, 64, 16),
    (_KIN_BEFORE, "name-kin", rf"(?:my|our|his|her|their|your)[ \t]+(?:{_OWN_WORDS})[ \t]+[A-Z]", True, 40, 100),
    (
        _FOR_TO,
        "name-for",
        r"for[ \t]+[A-Z][^ \t\n]{0,40}(?:[ \t]+[A-Z][^ \t\n]{0,40})?[ \t]+to[ \t]+[a-z]",
        False,
        100,
        8,
    ),
    (
        _GREETED_LOWER,
        "name-greeting-lower",
        r"(?:[Hh]ey|[Hh]i|[Hh]ello|[Tt]hanks|[Tt]hank[ \t]+you|[Mm]orning|[Cc]heers)[ \t]+[a-z]",
        False,
        16,
        60,
    ),
    (_BIBTEX_PEOPLE, "name-bibtex", r"(?:author|editor)[ \t]*=[ \t]*[{\"]", True, 16, 620),
    (_SHORTLOG, "name-shortlog", r"\n[ \t]*\d+\t[A-Z]", False, 40, 100),
    (
        _PEOPLE_HEADING,
        "name-listed",
        r"(?:authors?|contributors?|maintainers?|credits|people|thanks[ \t]+to)",
        True,
        80,
        80,
    ),
    (
        _CAPTION,
        "name-caption",
        r"\n[ \t]*(?:Plaintiffs?|Defendants?|Petitioners?|Respondents?|Appellants?|Appellees?|Claimants?|Debtors?)",
        False,
        120,
        4,
    ),
    (_KIN_OTHER, "name-kin", rf"(?:{_OWN_OTHER})[ \t]+(?:{_OWN_OTHER_WORDS})[ \t]+[A-Z]", True, 40, 100),
    (
        _QUOTED_BY,
        "name-quoted",
        rf"[\"”»][ \t]*,?[ \t]+(?:{_REPORTING}|{_REPORTING_OTHER})[ \t]+[A-Z]",
        False,
        30,
        100,
    ),
    (_QUOTED_THEN, "name-quoted", r"[,!?][\"”»][ \t]+[A-Z]", False, 4, 80),
    (_WITH_INITIAL, "name-initial", r"[^\W\d_][ \t]+[A-Z]\.?[ \t]+[A-Z]", False, 48, 48),
    (_TITLED, "name-title", rf"(?:{_HONORIFIC}|M|Mme)\.?[ \t]+[A-Z]", False, 14, 100),
    (_TITLED_LOWER, "name-title-lower", r"(?:mr|mrs|ms|mx|dr|prof|dott|sig|sr|sra|srta)\.[ \t]+[A-Z]", False, 14, 100),
    (_TITLED_LOWER_CASE, "name-title-lower-case", r"(?:mr|mrs|ms|mx|dr|prof)\.[ \t]+[a-z]", False, 14, 100),
    (_AT_AUTHOR, "name-tag", r"@(?:author|maintainer)[ \t]+[A-Z]", False, 16, 100),
    (_R_PERSON, "name-r-person", r"person\([ \t]*(?:given[ \t]*=[ \t]*)?[\"'][A-Z]", False, 40, 120),
    (_COPYRIGHT, "name-copyright", r"copyright[ \t]", True, 16, 100),
    (_TODO_OWNER, "name-todo", r"(?:TODO|FIXME|XXX|HACK|NOTE)\([A-Z]", False, 8, 60),
    (
        _PEOPLE_LIST,
        "name-manifest",
        r"(?:authors|maintainers|contributors|developers)[\"']?[ \t]*[:=][ \t]*\[",
        True,
        40,
        4,
    ),
    (
        _SALUTATION,
        "name-salutation",
        r"^[ \t]*[A-Z][a-z]+(?:[ \t]+[A-Z][a-z]+)?[ \t]*,(?:[ \t]*\r?\n[ \t]*|[ \t]+)[A-Z]",
        False,
        60,
        4,
    ),
    (
        _SIGNATURE_ALONE,
        "name-signature-alone",
        r"[.!?)]\n[ \t]*[A-Z][a-z]+(?:[ \t]+(?:[A-Z]\.[ \t]*)?[A-Z][a-z]+)?[ \t]*[.!]?[ \t]*\r?$",
        False,
        60,
        4,
    ),
    (_NOTES_ADDRESS, "name-notes", r"[A-Za-z](?:/[A-Za-z][\w-]*){0,3}@[A-Za-z]", False, 80, 40),
    (_MAIL_INVERTED, "name-mail-inverted", r"\"[ \t]*[<(][^<>()\s@]+@[^<>()\s]+[>)]", False, 100, 4),
    (
        _OFFICE,
        "name-office",
        r"(?:President|Senator|Governor|Judge|Justice|Sen|Rep|Gov|Rev|Sir|Dame|Prof|Professor|Drs|Capt|Sgt|Lt|Col|Gen"
        r"|Adm|Doctor|Coach|Detective|Sergeant|Captain|Lieutenant|Colonel|Admiral|Minister|Mayor|Chancellor"
        r"|Pastor|Rabbi|Imam|Sheikh|Shaikh|Bishop|Cardinal|Ambassador|Nurse|Uncle|Aunt|Auntie|Grandma|Grandpa|Prince"
        r"|Princess|King|Queen|Lord|Lady|Father|Sister|Brother"
        r"|teacher|coach|doctor|lawyer|attorney|professor|cleric|leader|spokesman|spokeswoman|photographer|artist"
        r"|author|writer|singer|actor|actress|director|host|owner|instructor|trainer|therapist|dentist|nurse)\.?[ \t]+"
        r"[A-Z]",
        False,
        24,
        100,
    ),
    (
        _CLOSING,
        "name-signature",
        r"(?:regards|wishes|thanks|thank you|thx|cheers|sincerely|respectfully|yours|truly|faithfully|best"
        r"|take care|touch|soon|later|see you|love|hugs|xoxo|grüßen"
        r"|gruessen|grüße|cordialement|bien à vous|saludos|atentamente|saludo|saluti|atenciosamente|groet|groeten"
        r"|cumprimentos|poważaniem|pozdravem|hälsningar|mvh|--)"
        r"[ \t]*[,!.]?[ \t]*\r?\n",
        True,
        60,
        160,
    ),
)
_ANCHORS = Anchors([Anchor(anchor, caseless) for _p, _r, anchor, caseless, _b, _f in _RULES])


_LISTED_CHUNK = 400  # names an expression: hyperscan bounds the length of one


@functools.cache
def _listed_anchor() -> Anchors:
    """Listed names as whole words, capitalised or in lower case (`patricia`): the free-text
    rule needs one in each name it takes (in expressions of `_LISTED_CHUNK` names each, found in
    one pass; a lower-case given name only where a lower-case word follows it)."""
    names = _raw_names()
    chunks = ["|".join(re.escape(w) for w in names[i : i + _LISTED_CHUNK]) for i in range(0, len(names), _LISTED_CHUNK)]
    lower = sorted(w for w in {n.lower() for n in names} if _may_be_lower(w))
    lower_chunks = [
        "|".join(re.escape(w) for w in lower[i : i + _LISTED_CHUNK]) for i in range(0, len(lower), _LISTED_CHUNK)
    ]
    return Anchors(
        [Anchor(rf"(?:^|[^\w])(?:{alternation})(?:[^\w]|$)") for alternation in chunks]
        + [Anchor(rf"(?:^|[\s\"'(“])(?:{alternation})[ \t]+{_LOWER_LETTER}") for alternation in lower_chunks]
    )


def _listed_ends(text: str) -> tuple[list[int], list[int]]:
    """Where listed names end in `text` (sorted): capitalised ones (the anchors' ends, one
    character on), and lower-case given names followed by a lower-case word (the name's end)."""
    capitalised: list[int] = []
    lower: list[int] = []
    for ends in _listed_anchor().ends(text).values():
        for end in ends:
            if text[end - 1].islower() and text[end - 2] in " \t":
                end -= 1  # (the anchor ends on the next word's first letter)
                while text[end - 1] in " \t":
                    end -= 1
                lower.append(end)
            else:
                capitalised.append(end)
    return sorted(capitalised), sorted(set(lower))


def _spans(text: str) -> Iterator[tuple[int, int, str]]:
    hits = _ANCHORS.ends(text)
    for index, (pattern, rule, _anchor, _caseless, back, forward) in enumerate(_RULES):
        if index not in hits:
            continue
        reader = _READERS.get(rule)
        for match in search(pattern, text, windows(text, hits[index], back, forward)):
            if reader is not None:
                yield from reader(text, match, rule)
                continue
            group = 3 if rule == "name-label" else 1
            value = match.group(group)
            if rule == "name-label" and (tail := _INVERTED_TAIL.match(text, match.end(3))) is not None:
                first = tail.group(1)
                if _shape(value) and _shape(first) and _name_words(f"{value} {first}") is not None:
                    yield match.start(3), match.end(3), "name-inverted"
                    yield tail.start(1), tail.end(1), "name-inverted"
                    continue
            if rule == "name-label" and any(_software_word(w.lower()) for w in _words(value)):
                accepted = False  # `display_name = 'SQLite'`: software's name
            elif rule == "name-label" and match.group(1):
                accepted = _shape(value)
            elif rule == "name-label" and not match.group(2):
                accepted = (
                    _shape(value)
                    and not _generic_not_person(text, match.start(group), match.end(group))
                    and (
                        _listed(value)
                        or (len(_words(value)) >= 2 and _contact_near(text, *match.span(group)))
                        or _in_people_array(text, match.start(group), value)
                    )
                )
            elif rule == "name-initial":
                accepted = _initialled(value)
            elif rule == "name-handoff":
                accepted = _handed(value)
            elif rule == "name-appositive":
                accepted = _handed(value, alone=False)
            elif rule == "name-title-lower":
                # `ms. Quinzia` (a name no list holds, no everyday word), not `took 5 ms. Then`.
                accepted = (
                    _shape(value)
                    and len(_words(value)) <= 4
                    and (
                        _not_everyday(value)
                        or (
                            not _AFTER_NUMBER.search(text, max(0, match.start() - 8), match.start())
                            and _addressed_name(value)
                        )
                    )
                )
            elif rule == "name-asked" and len(value) < 2:
                accepted = False  # `I was told I didn't need it`: the pronoun, no initial
            elif rule in ("name-greeting", "name-signoff", "name-asked"):
                accepted = _shape(value) and len(_words(value)) <= 4 and _addressed_name(value)
            elif rule == "name-role" and _ROLE_NOT_NAME.search(value):
                accepted = False  # `your user ID. Could you`: an abbreviation, then the next sentence
            elif rule in ("name-label", "name-mail", "name-role"):
                accepted = _shape(value) and (_listed(value) or len(_words(value)) >= 2)
            else:
                accepted = _shape(value) and len(_words(value)) <= 4
            if accepted:
                yield (*_trim(text, *match.span(group)), rule)
    listed, lower = _listed_ends(text)
    if lower:
        yield from _lower_case(text, lower)
    if listed:
        for match in search(_CAPITALISED_RUN, text, windows(text, listed, 64, 64)):
            if _free_text(match.group(1)):
                yield (*_without_lead(text, *_trim(text, *_to_possessive(text, *match.span(1)))), "name-text")
        yield from _acting(text, listed)


# After a role word (`user`, `customer`), words that are no name: one in capitals (`user ID`,
# `customer IBAN`) or a word of two letters or more ending a sentence before the next word
# (`…your user ID. Please hold`; an initial, `Ana M. Lima`, has one letter).
_ROLE_NOT_NAME = re.compile(r"^[A-Z]{2,}(?![a-z])|[^\W\d_]{2,}\.[ \t]")


# A quoted value that goes on in lower case after the words a name was read from (`{'name': 'Can
# view report'}`: a permission's name, whose first word is a listed given name).
_QUOTED_ON = re.compile(r"[ \t]+[a-z][^\"'\n]{0,200}[\"']")


def _generic_not_person(text: str, start: int, end: int) -> bool:
    """Whether the value text[start:end] of a generic label (`name`, `owner`, `user`) is no
    person's name: a quoted value that is more than the name read from it (`_QUOTED_ON`), or one
    word that is an everyday word too (`'name': 'Can'`; a listed given name so needs a family
    name after it)."""
    if start and text[start - 1] in "\"'" and _QUOTED_ON.match(text, end):
        return True
    words = _words(text[start:end])
    return len(words) == 1 and names_model.everyday(words[0].lower(), names_model.model()["lexicon"])


# The rules whose match is read by a function of its own (`_spans`): (text, match, rule) -> names.
Reader = Callable[[str, "re.Match[str]", str], Iterator[tuple[int, int, str]]]


def _read_degree(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    value, degree = match.group(1), match.group(2)
    # (Each word cased as a name and listed or no everyday word: not `Tested, OD`, `set DO, RN`.)
    if not _shape(value) or len(_words(value)) > 4 or _name_words(value) is None or value.lower() in _places():
        return
    if degree == "MD" and match.group(0).count(",") == 1:
        # Maryland unless the name reads as a person's: two words or more, the first a listed
        # given name or an initial, no postcode after and no listed place at its end.
        words = _words(value)
        if (
            _ZIP_AFTER.match(text, match.end())
            or len(words) < 2
            or not (words[0].lower() in given_names() or len(words[0]) == 1)
            or _a_place(text, *match.span(1))
        ):
            return
    yield (*_trim(text, *match.span(1)), rule)


def _read_cue(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    group = _cued(match)
    if group:
        yield (*_trim(text, *match.span(group)), rule)


def _read_title(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    if _OUR_LADY.search(text, max(0, match.start() - 10), match.start()):
        return  # `Nossa Senhora Aparecida`, `Nuestra Señora del Pilar`: a saint's title, a place's
    value = match.group(1)
    words = _words(value)
    if len(words) == 1 and _short_everyday(words[0].lower()):
        return  # `Dr Who`, `Dr. Go`: a short everyday word after the title, no listed name
    if _shape(value) and len(words) <= 4:
        yield (*_trim(text, *match.span(1)), rule)


def _short_everyday(low: str) -> bool:
    """Whether a word (lower case) of three letters at most is an everyday word and no listed
    name (`who`, `go`; not `li`, `wu`, `ng`)."""
    return (
        len(low) <= 3
        and low in names_model.model()["lexicon"]
        and low not in given_names()
        and low not in family_names()
    )


def _read_title_lower_case(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    """`mr. elliott flew`: the listed words after the title."""
    if _AFTER_NUMBER.search(text, max(0, match.start() - 8), match.start()):
        return
    given, family = given_names(), family_names()
    start = end = match.start(1)
    for word in re.finditer(r"[^ \t]+", match.group(1)):
        low = word.group()
        if not ((low in given or low in family) and low not in _STOP and low not in _AMBIGUOUS):
            break
        end = start + word.end()
    if end > start:
        yield start, end, rule


def _read_bibtex(text: str, match: re.Match[str], _rule: str) -> Iterator[tuple[int, int, str]]:
    return _bibtex_people(text, *match.span(1))


def _read_people_heading(text: str, match: re.Match[str], _rule: str) -> Iterator[tuple[int, int, str]]:
    return _people_lines(text, match.end())


def _read_full_name(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    """A name of two words or more, each listed or no everyday word (`git shortlog`'s lines)."""
    value = match.group(1)
    if len(_words(value)) >= 2 and _shape(value) and _name_words(value) is not None:
        yield match.start(1), match.end(1), rule


def _read_caption(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    """A party in capitals: its words as a name's, not a firm's."""
    title = " ".join(word.capitalize() for word in _words(match.group(1)))
    if not names_model._FIRM_WORD.search(title) and _name_words(title) is not None:
        yield match.start(1), match.end(1), rule


def _read_addressed(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    """One or two words a person could be addressed by (`wait for Ravindra to`)."""
    value = match.group(1)
    if len(value) > 1 and _shape(value) and _addressed_name(value):
        yield match.start(1), match.end(1), rule


def _read_greeting_lower(text: str, match: re.Match[str], _rule: str) -> Iterator[tuple[int, int, str]]:
    greeted = match.group(1)
    lexicon: frozenset[str] = names_model.model()["lexicon"]
    if greeted in given_names() and greeted not in _AMBIGUOUS | _STOP and greeted not in lexicon:
        yield match.start(1), match.end(1), "name-greeting"


def _read_around(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    """A name the words around it tell (kin, a quotation's speaker): without the everyday words
    and the pronoun that may lead it (`Then Amanda's`, `I'm Amanda's daughter`)."""
    span = _without_lead(text, *match.span(1))
    while (lead := _FIRST_WORD.match(text, *span)) is not None and not _shape(lead.group(1)):
        span = (lead.end(), span[1])
    value = text[span[0] : span[1]]
    if len(value) > 1 and _shape(value) and len(_words(value)) <= 4 and _addressed_name(value):
        yield (*_trim(text, *span), rule)


def _lone_given(value: str) -> bool:
    """A name standing alone on a message's line: its first word a listed given name that is no
    everyday word and no place, all of it as `_addressed_name` takes it."""
    words = _words(value)
    if not words or not _shape(value) or len(words) > 3:
        return False
    first = words[0].lower()
    everyday: frozenset[str] = names_model.model()["lexicon"]
    return (
        first in given_names()
        and first not in _AMBIGUOUS
        and first not in _STOP
        and first not in everyday
        and value.lower() not in _places()
        and _addressed_name(value)
    )


def _read_lone(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    if _lone_given(match.group(1)):
        yield match.start(1), match.end(1), rule


def _read_notes(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    value = match.group(1)
    if len(_words(value)) >= 2 and _shape(value) and _name_words(value) is not None:
        yield match.start(1), match.end(1), rule


def _read_inverted(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    family, _, given = match.group(1).partition(",")
    if _shape(family) and _shape(given.strip()) and _name_words(f"{given.strip()} {family}") is not None:
        yield match.start(1), match.end(1), "name-mail"


def _read_r_person(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    """R's `person("Given", "Family")`: both parts, each a name's shape."""
    if _shape(match.group(1)) and _shape(match.group(2)):
        yield match.start(1), match.end(1), rule
        yield match.start(2), match.end(2), rule


def _read_people_list(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    """The strings of a manifest's list of people (up to its `]`, 600 characters at most) that
    are full names (`_read_full_name`'s test), an address or a homepage after the name allowed."""
    end = text.find("]", match.end(), match.end() + 600)
    for item in _LIST_ITEM.finditer(text, match.end(), end if end >= 0 else match.end() + 600):
        yield from _read_full_name(text, item, rule)


def _read_copyright(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    """A copyright holder that is a full name (`_read_full_name`), not an institution's first
    words (`California Institute of Technology`: a listed place, or `of` after it)."""
    words = [w.lower() for w in _words(match.group(1))]
    if text.startswith((" of ", "\tof "), match.end(1)) or any(
        w in _places() and w not in given_names() and w not in family_names() for w in words
    ):
        return
    yield from _read_full_name(text, match, rule)


def _read_office(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    office = match.group(1).lower().rstrip(".")
    span = _trim(text, *match.span(2))
    if text.startswith(("'s", "’s"), span[1] - 2):
        span = (span[0], span[1] - 2)  # (`Capt. Brannigan's page`)
    value = text[span[0] : span[1]]
    if not _shape(value) or len(_words(value)) > 4:
        return
    words = [w.lower() for w in _words(value)]
    if any(w in names_model.NEVER or w in _STOP for w in words) or value.lower() in _places():
        return
    if words[-1] in _OFFICE_NOT_NAME:
        return
    if office in _OFFICE_LISTED:
        accepted = (words[0] in given_names() or words[0] in family_names()) and words[0] not in _AMBIGUOUS
    elif office in _OFFICE_ANY and len(words) == 1:
        accepted = all(_NAME_CASED.fullmatch(w) for w in _words(value) if not _JOINING.fullmatch(w))
    else:
        accepted = _addressed_name(value)
    if accepted:
        yield (*span, rule)


def _read_justices(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    """Each justice's name of `_JOINED` whose word is no everyday word in capitals (not `THE`)."""
    group = 1 if match.group(1) is not None else 2
    everyday: frozenset[str] = names_model.model()["lexicon"]
    given, family = given_names(), family_names()
    for word in _JUSTICE_WORD.finditer(text, *match.span(group)):
        low = word.group().lower()
        if low in _STOP or low in names_model.NEVER or len(low) < 3:
            continue
        if low in everyday and low not in given and low not in family:
            continue
        yield word.start(), word.end(), rule


def _read_aged(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    """A person listed with an age: words cased as names, each listed or no everyday word, and no
    place (`High Wycombe, 24, …` is not read as a person)."""
    value = match.group(1)
    if _shape(value) and _name_words(value) is not None and value.lower() not in _places():
        yield match.start(1), match.end(1), rule


def _read_cited(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    """Each author of a citation (`_CITED`) whose words are a name's (`_name_words`)."""
    group = 1 if match.group(1) is not None else 2
    start, end = match.span(group)
    authors = text[start:end]
    position = 0
    for separator in [*_CITED_SPLIT.finditer(authors), None]:
        stop = separator.start() if separator is not None else len(authors)
        name = authors[position:stop]
        if (
            name
            and _shape(name)
            and _name_words(name) is not None
            and name.lower() not in _places()
            and name.lower() not in _DATED
            and _INSTITUTION_LAST.search(name) is None  # (`Smithsonian Astrophysical Observatory (2011)`)
        ):
            yield start + position, start + stop, rule
        if separator is None:
            break
        position = separator.end()


_READERS: dict[str, Reader] = {
    "name-cited": _read_cited,
    "name-justice": _read_justices,
    "name-aged": _read_aged,
    "name-degree": _read_degree,
    "name-r-person": _read_r_person,
    "name-copyright": _read_copyright,
    "name-todo": _read_addressed,
    "name-manifest": _read_people_list,
    "name-salutation": _read_lone,
    "name-signature-alone": _read_lone,
    "name-notes": _read_notes,
    "name-mail-inverted": _read_inverted,
    "name-office": _read_office,
    "name-cue": _read_cue,
    "name-title": _read_title,
    "name-title-lower-case": _read_title_lower_case,
    "name-bibtex": _read_bibtex,
    "name-listed": _read_people_heading,
    "name-shortlog": _read_full_name,
    "name-caption": _read_caption,
    "name-for": _read_addressed,
    "name-greeting-lower": _read_greeting_lower,
    "name-kin": _read_around,
    "name-quoted": _read_around,
}


def _acting(text: str, listed: list[int]) -> Iterator[tuple[int, int, str]]:
    """Listed given names doing what people do: the word a listed name's anchor ends at, then
    one of `_DOES`, or after `said` at the end of a clause. Read at each anchor's end only (not
    a pattern over windows: agent forms are dense with listed names)."""
    given = given_names()
    for anchor_end in listed:
        end = anchor_end
        if end > 0 and not text[end - 1].isalnum():
            end -= 1  # the anchor takes the character after the word
        start = end
        while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "'’-"):
            start -= 1
        word = text[start:end]
        if not _capitalised(word) or (start > 0 and text[start - 1] in "@./\\_"):
            continue
        low = word.lower()
        if low not in given or low in _AMBIGUOUS or low in _STOP:
            continue
        if _DOES_AFTER.match(text, end) or (
            _SAID_BEFORE.search(text, max(0, start - 16), start) and _CLAUSE_END.match(text, end)
        ):
            yield start, end, "name-acts"


# A name written in lower case (`follow up with patricia desrosiers`, `olga krylova's`, `benjamin a
# seiler`): a listed given name, an initial, then a word that is no everyday word, at a token's
# start and ending where prose goes on (not `jose.jwt`, `ana_lima`, `emma(`).
_LOWER_REST = re.compile(
    rf"[ \t]+(?:[a-z]\.?[ \t]+)?({_LOWER_LETTER}{{3,}}(?:-{_LOWER_LETTER}{{2,}})?)"
    r"(?=(?:['’]s)?(?:[ \t\r\n,;:!?)\"”]|\.(?!\w)|$))"
)


# Words of code that prose corpora (the lexicon) hold too rarely to know: `from jose import jwt`.
_CODE_WORDS = frozenset(keyword.kwlist) | frozenset(dir(builtins)) | {"const", "func", "var", "let", "null", "void"}


def _may_be_lower(word: str) -> bool:
    """Whether a listed name, in lower case, may be a given name written so: not an everyday word,
    an ambiguous one or a word of code (`elif`, `del` are given names too). Only these are the
    lower-case anchors."""
    return (
        word in given_names()
        and word not in _AMBIGUOUS
        and word not in names_model.model()["lexicon"]
        and word not in _CODE_WORDS
    )


def _lower_case(text: str, ends: list[int]) -> Iterator[tuple[int, int, str]]:
    """Lower-case names after `_listed_ends`' lower-case given names (`_LOWER_REST`)."""
    everyday: frozenset[str] = names_model.model()["lexicon"]
    given = given_names()
    for end in ends:
        start = end
        while start > 0 and text[start - 1].isalpha():
            start -= 1
        rest = _LOWER_REST.match(text, end)
        if rest is None:
            continue
        last = rest.group(1)
        if last in everyday or last in _STOP or last in names_model.NEVER or last in _CODE_WORDS:
            continue
        if _software_word(last):
            continue  # software's or a format's name (`search_dir "jackson xml"`), no family name
        if last in given and last not in family_names():
            continue  # two given names (`anna maria`)
        yield start, rest.end(1), "name-lower"


# A person addressed at the head of a sentence and asked or told something (`Warrane, can I
# speak to your boss?`, `Danial, please call back.`): the comma, then a request's first word.
_ADDRESSED = re.compile(r",[ \t]+(?i:can|could|would|will|please|do|did|are|have|let's|i|we|you)(?![\w'’-])")
_SENTENCE_HEAD = re.compile(r"(?:^|[\n\"“(]|[.!?][ \t]+|[.!?][\"”][ \t]+)[ \t]*$")


# A person addressed at the end of a sentence (`Don't go to town, Brandon!`, `Remember me,
# Chelsea?`, `Thanks, Priya.`): a comma, one capitalised word, the sentence's end.
_ADDRESSED_LAST = re.compile(rf",[ \t]+({_CAPITAL})(?=[!?.][ \t\"”')]*(?:$|\n|[ \t]+[A-Z]))")


def _addressed_last(text: str) -> Iterator[tuple[int, int, str]]:
    """The word of `_ADDRESSED_LAST` when it is a listed given name and no everyday word."""
    if "," not in text:
        return
    everyday: frozenset[str] = names_model.model()["lexicon"]
    given = given_names()
    for match in _ADDRESSED_LAST.finditer(text):
        low = match.group(1).lower()
        if low in given and low not in _AMBIGUOUS and low not in _STOP and low not in everyday:
            yield match.start(1), match.end(1), "name-addressed"


# Interjections and the yes and no of the languages customers write, which open a sentence
# before a comma as a name does (`Hmm, I don't remember`, `Oui, please proceed`): the prose
# lexicon lacks most of them.
_INTERJECTIONS = frozenset(
    re.findall(
        r"\S+",
        "hmm hmmm hm umm uhm uhh ahh aha ahem erm huh meh mhm mmm oops whoa wow yay yeah yep yup nope nah okay"
        " alright oui non merci nein danke bitte gracias claro vale bueno obrigado obrigada grazie prego certo",
    )
)


def _addressed(text: str) -> Iterator[tuple[int, int, str]]:
    """One or two capitalised words opening a sentence, a comma, then a request: a name when
    each word is a listed name (not also an everyday word) or no word of the lexicon at all (an
    everyday word opens sentences: `Also, can we`, `Hello, I`; software is in `NEVER`)."""
    everyday: frozenset[str] = names_model.model()["lexicon"]
    given, family = given_names(), family_names()
    for match in _ADDRESSED.finditer(text):
        end = match.start()
        start = end
        words = 0
        while words < 2:
            word_start = start
            while word_start > 0 and (text[word_start - 1].isalpha() or text[word_start - 1] in "'’-"):
                word_start -= 1
            word = text[word_start:start]
            if len(word) < 3 or not _capitalised(word) or not word[1:].islower():
                break
            low = word.lower()
            if low in _INTERJECTIONS:
                break
            listed = (low in given or low in family) and low not in _AMBIGUOUS and low not in everyday
            if not listed and (names_model.everyday(low, everyday) or low in _STOP or low in names_model.NEVER):
                break
            words += 1
            start = word_start
            if start > 0 and text[start - 1] in " \t" and start > 1 and text[start - 2].isalpha():
                start -= 1  # the space before a first word
                continue
            break
        if words == 0:
            continue
        if text[start] in " \t":
            start += 1
        if start < end and _SENTENCE_HEAD.search(text, max(0, start - 4), start):
            yield start, end, "name-addressed"


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
    """The group of a cue's match (`_CUE`) that holds a name, or 0."""
    cue = re.sub(r"[ \t]+", " ", match.group(1).lower())
    strong = cue.startswith(_STRONG_CUES)
    if match.group(2):
        value = match.group(2)
        words = _words(value)
        if not _shape(value) or (words[0].lower() in _AMBIGUOUS and not strong):
            return 0
        if cue in _NAMING_CUES and len(value) > 1 and _addressed_name(value):
            return 2
        return 2 if strong or _listed(value) or len(words) >= 2 else 0
    if match.group(3) and strong:
        first = _words(match.group(3))[0]
        listed = family_names() if cue.startswith("maiden") else given_names()
        if first in _STOP or first not in listed or first in _AMBIGUOUS:
            return 0
        return 3
    return 0


# Speakers named by their part, not their name: transcripts' and chat logs' roles.
# (Not the roles that name keys of configs and code too: `HOST:`, `USER:`, `AGENT:`.)
_SPEAKER_ROLES = frozenset(
    ["interviewer", "interviewee", "moderator", "q", "a", "judge", "witness", "counsel", "caller", "audience"]
)


def _speakers(text: str) -> Iterator[tuple[int, int, str]]:
    """Speaker labels of a dialogue: two or more consecutive `Name: …` lines of two or more
    speakers, one of them a listed given name; then each speaker that is listed, or a name in
    form and no everyday word (`Question:`, `Date:`), is one."""
    if ":" not in text:
        return
    lined = "\n" + text  # (offsets below are one on)
    blocks: list[list[tuple[str, int, int]]] = []
    line_end = -1
    for match in _SPEAKER.finditer(lined):
        if not blocks or match.start() != line_end:
            blocks.append([])
        blocks[-1].append((match.group(1), match.start(1) - 1, match.end(1) - 1))
        found = lined.find("\n", match.end())
        line_end = len(lined) if found < 0 else found
    given = given_names()
    for block in blocks:
        speakers = {word for word, _s, _e in block}
        # (Cased as a name: `NaN:` and `Inf:` printed by a script are no speakers, though `Nan` is a
        # given name.)
        listed = {
            w for w in speakers if w.lower() in given and w.lower() not in _AMBIGUOUS and _NAME_CASED.fullmatch(w)
        }
        # A role beside them (`INTERVIEWER:`, `Q:`) says the others are people too.
        roles = {w for w in speakers if w.lower() in _SPEAKER_ROLES}
        if len(block) < 2 or len(speakers) < 2 or not (listed or roles):
            continue
        everyday = names_model.model()["lexicon"]
        for word, start, end in block:
            low = word.lower()
            if word in listed or (
                low not in _SPEAKER_ROLES
                and (_NAME_CASED.fullmatch(word) or (roles and word.isupper()))
                and _shape(word, allow_upper=bool(roles))
                and len(word) > 2
                and low not in everyday
                and low not in names_model.NEVER
            ):
                yield start, end, "name-speaker"


# A list of people after a colon (`our 3 founders: Kónya, Becker and Vasquez`, `Attendees: Ana
# Lima, Priya Nair and Tomás`): three items or more, each one to three name-cased words, the last
# joined by `and`, `or` or `&`, or by a comma where the list ends the line (`Attendees: Farida,
# Niamh, Yusuf`).
_ITEM = rf"{_CAPITAL}(?:[ \t]+{_CAPITAL}){{0,2}}"
_ENUMERATION = re.compile(
    rf":[ \t]*({_ITEM}(?:,[ \t]+{_ITEM}){{1,12}}"
    rf"(?:,?[ \t]+(?:and|or|&)[ \t]+{_ITEM}(?![\w'’-])|(?=[ \t]*(?:[.;]?[ \t]*$))))",
    re.MULTILINE,
)
_ITEM_PATTERN = re.compile(_ITEM)
# The same in lower case (`they had 6: silvana, adam, christopher and caleb`): single words.
_LOWER_ITEM = rf"{_LOWER_LETTER}{{2,}}"
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
    words = [w.lower() for w in _words(value) if not _JOINING.fullmatch(w)]
    return len(words) >= 2 and all(
        w not in names_model.NEVER
        and w not in _STOP
        and (w in given or w in family or (w not in everyday and w not in _AMBIGUOUS))
        for w in words
    )


def _enumerated(text: str) -> Iterator[tuple[int, int, str]]:
    """Each item of a list of people (`_ENUMERATION`) when two items or more hold a listed name
    and every item is a name in form (`_shape`, `_name_words`). One item that is not (`Python,
    Go and Ruby`) and the list is no list of people."""
    if ":" not in text:
        return
    for match in _ENUMERATION.finditer(text):
        items = list(_ITEM_PATTERN.finditer(text, *match.span(1)))
        # An item that is an everyday word too is a name among names when listed (`Sherry`), and
        # so is one whose words are each listed or no everyday word, an ambiguous one among them
        # (`Tom Martin`, `Martin Gonzales`: `Martin` is a make of car too).
        counts = [_name_words(item.group()) if _shape(item.group()) else None for item in items]
        counts = [
            0 if count is None and _shape(item.group()) and _among_names(item.group()) else count
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
        sure = sum(1 for w in words if w in given and w not in _AMBIGUOUS and w not in everyday)
        if sure >= 3 and all(
            w in given or not (names_model.everyday(w, everyday) or w in _STOP or w in names_model.NEVER) for w in words
        ):
            for item in items:
                yield item.start(), item.end(), "name-list"


def _headings(text: str) -> Iterator[tuple[int, int, str]]:
    """A name alone on a record's first line, above its contact fields or address."""
    for match in _HEADING.finditer("\n\n" + text):
        value = match.group(1)
        if len(_words(value)) < 2 or not _shape(value):
            continue
        start, end = match.start(1) - 2, match.end(1) - 2
        after = "\n".join(text[end : end + 240].split("\n")[:5])
        if _contact_near(text, start, end) or _RECORD_LINE.search(after) or _country_line(after):
            yield start, end, "name-heading"


@functools.cache
def _country_names() -> frozenset[str]:
    return frozenset(" ".join(country.lower().split()) for country in addresses.countries())


_LINE_BODY = re.compile(rf"[ \t]*{LINE_MARKS}(.*?)[ \t,]*(?:\d{{4,6}})?[ \t]*$")


def _country_line(lines: str) -> bool:
    """Whether one of `lines` (after the heading's) is a country's name alone, a postcode after
    it at most (`Spain`, `New Zealand 34694`): an address label's last line, with a line of the
    place between (right below the heading, the heading is the place: `Chiclana\nSpain`)."""
    names = _country_names()
    for line in lines.split("\n")[2:]:
        body = _LINE_BODY.match(line)
        if body is not None and " ".join(body.group(1).lower().split()) in names:
            return True
    return False


# Greetings and thanks open a message beside a name, never as part of it (`Hi Carlos,`).
_OPENING = re.compile(rf"(?:{_GREETING_WORDS}|Thanks|Thank you|Cheers|Greetings|Welcome)[ \t]+")


def _tidied(text: str, found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The spans without a greeting before the name (`Hi Carlos` is `Carlos`) or a possessive
    ending after it (`Maite Lemmens's` is `Maite Lemmens`: a name's words may hold an apostrophe,
    `O'Connor`, so a candidate carries its `'s` along)."""
    tidy = []
    for start, end, rule in found:
        greeting = _OPENING.match(text, start, end)
        if greeting is not None and greeting.end() < end:
            start = greeting.end()
        if end - start > 3 and text[end - 2 : end] in ("'s", "’s"):
            end -= 2
        tidy.append((start, end, rule))
    return tidy


# A request to do something with a person, opening a sentence (`Ask Dagny to review it.`, `Tell
# Anselm the build is green.`, `Ping Wiremu about it`): the verb, one or two capitalised words,
# then a lower-case word or the clause's end.
_ASKED = re.compile(
    r"(?:Ask|Tell|Ping|Remind|Email|E-mail|Call|Text|Message|Invite|Thank|Notify|Contact|Congratulate|Page)"
    rf"[ \t]+({_CAPITAL}(?:[ \t]+{_CAPITAL})?)(?=[ \t]+[a-z]|[ \t]*(?:[,.!?:;]|\r?$))",
    re.MULTILINE,
)


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
            if value and _shape(value) and _name_words(value) is not None:
                begin = offset + piece.index(value)
                yield begin, begin + len(value), "name-bibtex"
        if joint is not None:
            at = joint.end()


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
            if len(_words(value)) >= 2 and _shape(value) and _name_words(value) is not None:
                yield match.start(1), match.end(1), "name-listed"
        at = stop + 1


def _asked(text: str) -> Iterator[tuple[int, int, str]]:
    """`_ASKED`'s names: at a sentence's head, each word a name a greeting could address
    (`_addressed_name`: not `Ask Redis`, `Tell Jenkins`, `Ping Support`)."""
    for match in _ASKED.finditer(text):
        start = match.start()
        if start and not _SENTENCE_HEAD.search(text, max(0, start - 4), start):
            continue
        value = match.group(1)
        if _shape(value) and _addressed_name(value):
            yield match.start(1), match.end(1), "name-asked"


def _by_rules(text: str) -> list[tuple[int, int, str]]:
    """The rules' names (start, end, rule), overlapping."""
    found = [(f.start, f.end, f.rule) for f in COLUMNS.find(text)]
    found.extend(_spans(text))
    found.extend(_speakers(text))
    found.extend(_headings(text))
    found.extend(_enumerated(text))
    found.extend(_addressed(text))
    found.extend(_addressed_last(text))
    found.extend(_asked(text))
    return found


def find_rules(text: str) -> list[Finding]:
    """Every person's name found in `text` by its context (non-overlapping, earliest first)."""
    return longest_first("PERSON", text, _tidied(text, _no_firms(text, _by_rules(text))))


# The rules that read a name from its words alone, with no cue beside it (a listed name in free
# text, a listed given name acting, the prose model): these take a firm's or a street's name for
# a person's, which `_not_people` drops.
_UNCUED = frozenset({"name-text", "name-acts", "name-model"})
_CAP_WORD = rf"{names_model._UPPER}{names_model._LOWER}+"
# A firm named after its partners (`Hawkins, Richardson and Santana`, `the Jones, Smith and Davis
# Orchestra`): three to five single capitalised words, commas between them, `and` or `&` before
# the last. People listed so follow a colon (`our 3 founders: Kónya, Becker and Vasquez`, read by
# `_enumerated`) or hold a given name (`Tom, Dick and Harry`): those stay names.
_FIRM = re.compile(
    rf"(?<![\w'’-])(?:{_CAP_WORD})(?:,[ \t]+{_CAP_WORD}){{1,3}},?[ \t]+(?:and|&)[ \t]+{_CAP_WORD}(?![\w'’-])"
)
_FIRM_ITEM = re.compile(_CAP_WORD)
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
_INSTITUTION_LAST = re.compile(rf"(?<![\w'’-]){_INSTITUTIONS}$")
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
    words = _words(text[start:end])
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


def _no_firms(text: str, found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The findings without firms' names (`_FIRM_LAST`, `_FIRM_NEXT`)."""
    return [f for f in found if not (_FIRM_LAST.search(text, f[0], f[1]) or _FIRM_NEXT.match(text, f[1]))]


@functools.cache
def _places() -> frozenset[str]:
    """Places, peoples and faiths (data/places.txt, data/countries.txt), lower case, one space
    between words."""
    listed = (
        line.strip().lower()
        for file in ("places.txt", "countries.txt")
        for line in resources.files("router.privacy").joinpath("data", file).read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    )
    return frozenset(" ".join(place.split()) for place in listed)


# Words that say a place follows (`preferably in San Jose`, `a day stop-over in Paris`) or a storm
# (`Hurricane Rita`, named as people are).
_PLACE_BEFORE = re.compile(
    r"(?<![\w'’-])(?i:in|near|around|across|throughout|outside|inside|via|visit|visiting|visited)[ \t]+(?:the[ \t]+)?$"
)
_STORM_BEFORE = re.compile(r"(?<![\w'’-])(?:Hurricane|Typhoon|Cyclone|Storm)[ \t]+$")
# The first word of a place's name (`San Francisco`, `Fort Smith`) before the word found, and a US
# state's code after it (`Lawrence, KS`).
_PLACE_LEAD = re.compile(r"(?<![\w'’-])(?:San|Santa|Santo|São|Los|Las|Fort|Ft\.|Port|Mount|Mt\.|Lake|Cape)[ \t]+$")
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


def _a_place(text: str, start: int, end: int) -> bool:
    """Whether an uncued finding names a place, a people or a storm rather than a person: a
    listed place (`San Diego`, `Palestinians`; one that is also a given name, `Florence`, only
    after a word that says a place follows), a name ending in a listed place that is no one's
    name (`Miramar California`), a place's name's other words beside it (`San Francisco`, `Lawrence,
    KS`), or a storm's name (`Hurricane Katrina`)."""
    if _STORM_BEFORE.search(text, max(0, start - 16), start) or text.startswith(("Hurricane ", "Typhoon "), start):
        return True
    if _PLACE_LEAD.search(text, max(0, start - 8), start):
        return True
    if _STATE_AFTER.match(text, end) and not any(c in " \t" for c in text[start:end]):
        return True  # (one word: a person's name is followed by a degree, `Harry Preuss, MD`)
    if _JOURNEY_FROM.match(text, end) or (
        text.startswith((" (", "\t("), end) and _JOURNEY_TO.search(text, max(0, start - 80), start)
    ):
        return True  # `from Boston (BOS) to Orlando (MCO)`: the cities of a flight
    words = [w.lower() for w in _words(text[start:end])]
    if not words:
        return False
    places, given, family = _places(), given_names(), family_names()
    if " ".join(words) in places:
        people = len(words) == 1 and (words[0] in given or words[0] in family) and words[0] not in _SKY
        return not people or _PLACE_BEFORE.search(text, max(0, start - 24), start) is not None
    last = words[-1]
    return len(words) >= 2 and last in places and last not in given and last not in family


@functools.cache
def software() -> frozenset[str]:
    """Names of software, languages and formats (data/software.txt), lower case."""
    return _names("software.txt")


def _software_word(low: str) -> bool:
    """Whether a word (lower case) is software's name and no listed person's (`gradle`, `kotlin`,
    `macos`; not `jackson`, `julia`, which people bear too): never a name alone. (Not the
    prose model's `NEVER` words: those hold the calendar and words of code, `sat`, `any`.)"""
    return low in software() and low not in given_names() and low not in family_names()


# Words after a name that make it a product's, a library's or an eponym's (`the Jackson library`,
# `Jackson Databind`, `Jackson Core JAR`, `Cohen Algorithm`, `Xavier initialization`, `Pearson
# correlation`, `the Bareiss algorithm`, `Haskell bindings`, `Dvorak keyboards`, `Smith-Normal
# form`): nouns a person's name is not followed by. Not `test`, `code`, `space`, `law` or
# `releases`, which a sentence goes on with after a name (`let Sam test it`, `give Ana space`,
# `Ana's law firm`, `Ana releases it`); nouns that are verbs too (`form`, `filter`, `transform`,
# `function`, `index`) only where the phrase ends or `of` follows (`the Smith-Normal form)`, not
# `let Ana form a team`).
_PRODUCT_WORDS = (
    r"Core|JARs?|XML|JSON|YAML|CSV|Databind|Annotations?|Engine|Plugins?|Algorithms?|APIs?|SDKs?|Library|Libraries"
    r"|Framework|Modules?|Packages?|Bindings|Extensions?|Runtime|Toolkit|Compiler|Parser|Mapper|Serializer"
    r"|Deserializer|Dataformats?|Datatypes?|CLI|Wrapper|Codebase"
)
_EPONYM_WORDS = (
    r"algorithms?|theorem|lemma|conjecture|formula|equations?|inequality|principle|paradox|constant|criterion"
    r"|transformation|distribution|correlation|coefficient|initiali[sz]ation|decomposition|reduction|integral"
    r"|polynomials?|normal[ \t]+form|methods?|distance|matrix|series|notation"
    r"|(?:form|transform|filter|function|index)(?=[ \t]*(?:[^\w \t]|$|of[ \t]))"
)
_PRODUCT_LOWER = (
    r"library|libraries|codebase|classes|project|modules?|packages?|plugins?|framework|bindings|api|sdk|jars?"
    r"|databind|annotations|core|dependency|dependencies|integration|software|wrapper|engine|repository|repo"
    r"|versions?|docs|documentation|installation|functionality|syntax|keyboards?|xml|json|yaml"
)
# (A product word after the name, or an eponym's after the name or its possessive; the product
# word may own something in turn: `the Jackson library's equivalent`.)
_PRODUCT_AFTER = re.compile(
    rf"(?:[ \t]+(?:{_PRODUCT_WORDS})|[ \t]+(?:{_PRODUCT_LOWER}|{_EPONYM_WORDS})|['’]s[ \t]+(?:{_EPONYM_WORDS}))"
    r"(?:['’]s)?(?![\w'’-])"
)
# A version or a section's number after the name (`Cohen 2.4.5`, `Jackson 2.17`): three parts
# after any name, two only after a word of software (`paid Priya 12.50` is an amount).
_VERSION_AFTER = re.compile(r"[ \t]+v?\d+\.\d+(\.\d+)*(?![\w-]|\.\d)")
_PRODUCT_LAST = re.compile(rf"[ \t](?:{_PRODUCT_WORDS})$|-(?:processor|parser|mapper|core|databind)$")
# A list joins words of one kind (`Maven or Gradle`, `Jackson and JUnit`, `Python, R, Julia, and
# Scala`): beside a word of software, a name is software too. The word before and the one after.
_JOINED_AFTER = re.compile(r",?[ \t]+(?:and|or|&|nor)[ \t]+([A-Za-z][\w+#.-]*)|,[ \t]+([A-Za-z][\w+#.-]*)")
_JOINED_BEFORE = re.compile(r"([A-Za-z][\w+#.-]*),?[ \t]+(?:and|or|&|nor)[ \t]+$|([A-Za-z][\w+#.-]*),[ \t]+$")
# A release named after its system (`Debian Jessie`, `macOS Ventura`): a software word right before.
_WORD_BEFORE = re.compile(r"([A-Za-z][\w+#-]*)[ \t]+$")
# A word of a path, a package or an identifier in lower case (`com.fasterxml.jackson.core`,
# `jackson-databind`, `build.gradle`, `matplotlib.axes`): joined to another part by a dot, a
# slash, a hyphen, an underscore or a colon, and no part of an e-mail address (`ana.lima@…` is a
# person's). The text is searched for the word itself (few words are asked about), at most
# `_IDENTIFIER_TRIES` places.
_JOINERS = "./_:\\-"
_IDENTIFIER_TRIES = 64
# At most this many distinct words are searched for in one text (each search reads the text once).
_IDENTIFIER_WORDS = 32
_TOKEN_SPAN = 120  # how far a token is read each side for an `@`


def _in_mail_address(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] is in an e-mail address's local part or domain (not after a path
    that follows one: `git@github.com:FasterXML/jackson-databind.git` is a remote)."""
    low = start
    while low > max(0, start - _TOKEN_SPAN) and not text[low - 1].isspace():
        low -= 1
    high = end
    while high < min(len(text), end + _TOKEN_SPAN) and not text[high].isspace():
        high += 1
    at = text.find("@", low, high)
    if at < 0:
        return False
    if end <= at:
        return True
    between = text[at:start]
    return ":" not in between and "/" not in between


def _in_identifier(text: str, low: str) -> bool:
    """Whether `low` (a lower-case word) is written in `text` as a whole part of a path, a
    package or an identifier (`_JOINERS`), outside e-mail addresses."""
    at = text.find(low)
    tries = 0
    while at >= 0 and tries < _IDENTIFIER_TRIES:
        end = at + len(low)
        before = text[at - 1] if at else " "
        after = text[end] if end < len(text) else " "
        if not before.isalnum() and not after.isalnum():
            joined = (before in _JOINERS and at >= 2 and text[at - 2].isalnum()) or (
                after in _JOINERS and end + 1 < len(text) and text[end + 1].isalnum()
            )
            if joined and not _in_mail_address(text, at, end):
                return True
        at = text.find(low, end)
        tries += 1
    return False


def _joined_software(text: str, start: int, end: int) -> bool:
    """Whether the word before or after text[start:end], in a list or right before it, is
    software's name (`_software_word`)."""
    words = []
    after = _JOINED_AFTER.match(text, end)
    if after is not None:
        words.append(after.group(1) or after.group(2))
    before = _JOINED_BEFORE.search(text, max(0, start - 48), start)
    if before is not None:
        words.append(before.group(1) or before.group(2))
    right_before = _WORD_BEFORE.search(text, max(0, start - 32), start)
    if right_before is not None:
        words.append(right_before.group(1))
    return any(_software_word(word.lower().rstrip(".")) for word in words)


def _software(text: str, found: list[tuple[int, int, str]], rules: frozenset[str]) -> list[tuple[int, int, str]]:
    """The findings without software's, products' and eponyms' names that the rules in `rules`
    (those with no cue, or a weak one) took for people's: a word of software that no name list
    holds (`Gradle`; first in a name of several words, `Macos Ventura`), a product or an eponym's
    word after the name or ending it (`_PRODUCT_AFTER`, `_PRODUCT_LAST`), software listed with
    it or right before it (`_joined_software`), or, for one word of software or one no name list
    holds, the same word in lower case in a path, a package or an identifier of the text
    (`_in_identifier`: `Jackson` beside `com.fasterxml.jackson`)."""
    given, family = given_names(), family_names()
    searched: dict[str, bool] = {}  # word -> `_in_identifier` (each word searched once)
    kept = []
    for start, end, rule in found:
        if rule not in rules:
            kept.append((start, end, rule))
            continue
        words = [w.lower() for w in _words(text[start:end])]
        version = _VERSION_AFTER.match(text, end)
        if (
            # (The first word: a product line, `Jupyter Notebooks`, `Macos Ventura`; not a family
            # name that no list holds and software bears too, `Piotr Helm`.)
            (words and _software_word(words[0]))
            or (version is not None and (version.group(1) is not None or all(w in software() for w in words)))
            or _PRODUCT_AFTER.match(text, end)
            or _PRODUCT_LAST.search(text, start, end)
            or _joined_software(text, start, end)
        ):
            continue
        # (Only a word of software in a longer name: `Extends Jackson` beside `jackson-mapper`,
        # not `Priya Nair` beside `priya-nair`, a person's handle.)
        telling = [w for w in words if w in software() or (len(words) == 1 and w not in given and w not in family)]
        for word in telling:
            if word not in searched and len(searched) < _IDENTIFIER_WORDS:
                searched[word] = _in_identifier(text, word)
        if any(searched.get(w, False) for w in telling):
            continue
        kept.append((start, end, rule))
    return kept


# The rules `_software` reads: no cue (a listed name in free text, a listed given name acting,
# the prose model) or a weak one (`for Jackson to offer`).
_SOFTWARE_READ = frozenset({"name-text", "name-acts", "name-model", "name-for"})


def _not_people(text: str, found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The findings without firms' names (`_no_firms`), and without the uncued ones that lie in
    a firm's name made of surnames, that name a street (`_FIRM`, `_STREET_AFTER`), an institution
    (`_INSTITUTION_LAST`) or a place (`_a_place`)."""
    found = _no_firms(text, found)
    uncued = [(start, end) for start, end, rule in found if rule in _UNCUED]
    if not uncued:
        return found
    firms: list[tuple[int, int]] = []
    given, family = given_names(), family_names()
    for match in _FIRM.finditer(text):
        if text[max(0, match.start() - 8) : match.start()].rstrip(" \t").endswith((":", "(", ";")):
            continue  # people listed after a colon, authors cited (`(Lewis, Simons, & Fennig, 2014)`)
        if _CITED_YEAR.match(text, match.end()):
            continue
        items = [m.group().lower() for m in _FIRM_ITEM.finditer(match.group())]
        if any(item in given and item not in family for item in items):
            continue
        firms.append(match.span())
    dropped = {
        (start, end)
        for start, end in uncued
        if any(s <= start and end <= e for s, e in firms)
        or _STREET_AFTER.match(text, end)
        or _STREET_LAST.search(text, start, end)
        or _INSTITUTION_LAST.search(text, start, end)
        or (" " not in text[start:end] and _INSTITUTION_AFTER.match(text, end))
        or (_INSTITUTION_NEXT.match(text, end) and _last_not_listed(text, start, end))
        or _PLACE_FIELD.search(text, max(0, start - 24), start)
        or _WORK_FIELD.search(text, max(0, start - 24), start)
        or _a_place(text, start, end)
    }
    return [f for f in found if f[2] not in _UNCUED or (f[0], f[1]) not in dropped]


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
        if f.rule not in _UNCUED and " " in f.value and len(f.value) >= 6 and _name_words(f.value) is not None
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
    found = _software(text, _not_people(text, found), _SOFTWARE_READ)
    first = longest_first("PERSON", text, _tidied(text, found))
    places = _again(text, first)
    if not places:
        return first
    return longest_first("PERSON", text, [*((f.start, f.end, f.rule) for f in first), *places])

"""A person's record: labelled fields (`"first_name": "Ana"`, `Name: Maria Gonzalez`,
`customer=…`, `Reviewed by: Ana Lima`), a mail's sender (`From: Ana Lima <ana@…>`, `"Townsend,
George" <…>`, a Lotus Notes address), a role word before a name (`patient Tom Baker`), and a
name alone heading a record's contact fields or address. A generic label (`name`, `owner`,
`user`) takes a value only when it looks like a person's (`read_label`)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from router.privacy import addresses, names_model
from router.privacy.anchors import LINE_MARKS
from router.privacy.names.forms import CAPITAL, FULL, HONORIFIC, INITIALLED
from router.privacy.names.software import software_word
from router.privacy.names.words import any_listed, name_shaped, name_words, trim, words_of

PERSON_KEYS = (
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
LABELLED = re.compile(
    rf"(?i:(?<![A-Za-z])(?:({PERSON_KEYS})|({_ROLE_KEYS})|(?:{_GENERIC_KEYS})))[\"']?[ \t]*(?::|=|=>|->)[ \t]*[\"']?"
    rf"(?:{HONORIFIC}\.?[ \t]+)?({FULL})(?=[\"',;)}}\]\n]|[ \t]*(?:<|$|\n)|[ \t]+\(|[ \t][a-z])",
    re.MULTILINE,
)


# A label's last word and its `:` or `=` (a key without one, `name` in prose or code, is no label).
LABEL_ANCHOR = (
    r"(?:names?|author|assignee|reporter|requester|customer|contact|owner|patient|employee|recipient|passenger"
    r"|guest|member|user|nombre|apellidos?|pr[ée]nom|famille|vorname|nachname|cognome|nome|voornaam|achternaam"
    r"|to|by|ansprechpartner(?:in)?|interlocut(?:eur|rice)|contactpersoon|contacto|referente|kontaktperson"
    r"|kontaktowa|osoba|(?:^|[^A-Za-z])pt"  # (`Pt:`, not `Interrupt:`)
    r"|attending|physician|pcp|surgeon|clinician|provider)"
    r"[\"']?[ \t]*(?::|=|->)"
)


# A contact field beside a value: the record is a person's (`name:` then `phone:` or `email:`).
# (A role mailbox, `support@`, is a team's contact, not a person's.)
_CONTACT = re.compile(
    r"(?i)(?:phone|mobile|tel|address|street)[\"']?[ \t]*[:=]"
    r"|e-?mail[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"(?!(?:support|info|sales|no-?reply|help|admin|ops|team|contact|billing|hello)@)"
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


# A manifest's list of people (`authors = [{ name = … }]`, `maintainers:` then `- name: …`).
_PEOPLE_ARRAY = re.compile(r"(?i)(?<![\w-])(?:authors|maintainers|contributors|developers|uploaders)[\"']?[ \t]*[:=]")


def _in_people_array(text: str, start: int, value: str) -> bool:
    """Whether a generic `name` of two words or more, each listed or no everyday word, is an
    item of a manifest's list of people opened at most a few lines above it."""
    return (
        len(words_of(value)) >= 2
        and name_words(value) is not None
        and _PEOPLE_ARRAY.search(text, max(0, start - 240), start) is not None
    )


# A field written `Last, First` (`Patient: Okafor, Ottilie`, `Pt: Quispe, Noor A.`): after a
# label's value, a comma, the given name, then the field's end.
_INVERTED_TAIL = re.compile(rf",[ \t]+({CAPITAL}(?:[ \t]+[A-Z]\.?)?)(?=[\"',;\n]|[ \t]{{2,}}|[ \t]*$)", re.MULTILINE)


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
    words = words_of(text[start:end])
    return len(words) == 1 and names_model.everyday(words[0].lower(), names_model.model()["lexicon"])


def read_label(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    """A labelled field's value (`LABELLED`): a person key's in a name's form, a role key's when
    listed or of two words or more, a generic key's (`name`, `owner`, `user`) when it looks like a
    person's; a value written `Last, First` is read as both names."""
    value = match.group(3)
    if value.isupper() and len(value) > 3:
        # A form or an export in capitals (`Name: JOHN SMITH`): read as a name is written, and
        # taken only where a word is a listed name (`Status: UNKNOWN`, `Owner: ADMIN` are none;
        # software's names, `NGINX`, are refused below as in any case).
        value = value.title()
        if not any_listed(value):
            return
    if (tail := _INVERTED_TAIL.match(text, match.end(3))) is not None:
        first = tail.group(1)
        if name_shaped(value) and name_shaped(first) and name_words(f"{value} {first}") is not None:
            yield match.start(3), match.end(3), "name-inverted"
            yield tail.start(1), tail.end(1), "name-inverted"
            return
    if any(software_word(w.lower()) for w in words_of(value)):
        accepted = False  # `display_name = 'SQLite'`: software's name
    elif match.group(1):
        accepted = name_shaped(value)
    elif not match.group(2):
        accepted = (
            name_shaped(value)
            and not _generic_not_person(text, match.start(3), match.end(3))
            and (
                any_listed(value)
                or (len(words_of(value)) >= 2 and _contact_near(text, *match.span(3)))
                or _in_people_array(text, match.start(3), value)
            )
        )
    else:
        accepted = name_shaped(value) and (any_listed(value) or len(words_of(value)) >= 2)
    if accepted:
        yield (*trim(text, *match.span(3)), rule)


MAIL = re.compile(rf"(?<![\w@.])\"?({FULL})\"?[ \t]*(?:<[^<>\s@]+@[^<>\s]+>|\([^()\s@]+@[^()\s]+\))")


# A mail's sender written family name first (`"Townsend, George" <gtownsend@…>`).
MAIL_INVERTED = re.compile(
    rf"(?<![\w@.])\"({CAPITAL}(?:[ \t]+{CAPITAL})?,[ \t]+{CAPITAL}(?:[ \t]+[A-Z]\.?)?)\"[ \t]*"
    r"(?:<[^<>\s@]+@[^<>\s]+>|\([^()\s@]+@[^()\s]+\))"
)


def read_inverted(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    family, _, given = match.group(1).partition(",")
    if name_shaped(family) and name_shaped(given.strip()) and name_words(f"{given.strip()} {family}") is not None:
        yield match.start(1), match.end(1), "name-mail"


# A Lotus Notes address (`Traci Warner@ENRON`, `Rudwell Johnson/ENRON@enronXgate`): a person's
# name, then the organisation's units, no domain.
NOTES_ADDRESS = re.compile(
    rf"(?<![\w.@/])({CAPITAL}(?:[ \t]+(?:[A-Z]\.?[ \t]+)?{CAPITAL}){{1,2}})(?:/[A-Za-z][\w-]*){{0,3}}@[A-Za-z][\w-]*"
    r"(?![\w-]*\.[A-Za-z])"
)


# After a word naming a person's role in prose: `user Ana Lima (id=42)`, `patient Tom Baker`.
ROLE = re.compile(
    r"(?<![\w.-])(?i:user|customer|client|patient|member|employee|contact|passenger|guest|tenant|applicant)"
    rf"[ \t]+({FULL})"
    r"(?=[ \t]*(?:[,.;:()\n]|$|[ \t][a-z]))"
)


# After a role word (`user`, `customer`), words that are no name: one in capitals (`user ID`,
# `customer IBAN`) or a word of two letters or more ending a sentence before the next word
# (`…your user ID. Please hold`; an initial, `Ana M. Lima`, has one letter).
ROLE_NOT_NAME = re.compile(r"^[A-Z]{2,}(?![a-z])|[^\W\d_]{2,}\.[ \t]")


# A record's heading line, a name alone above its contact fields or address (a business card, a
# CV, an address label): at the start of the text or after a blank line (its lines may be quoted
# in a reply or bulleted: `> Ana Lima`).
_HEADING = re.compile(rf"\n[ \t]*{LINE_MARKS}\n[ \t]*{LINE_MARKS}({INITIALLED})[ \t]*(?=\r?\n)")
_RECORD_LINE = re.compile(
    rf"\n[ \t]*{LINE_MARKS}"
    r"(?:\d{1,6}[A-Za-z]?,?(?:[ \t]+\d{1,5})?[ \t]+[^\W\d_]|(?:P\.?[ \t]?O\.?[ \t]?Box|PSC|Unit)[ \t]+\d)"
)


def headings(text: str) -> Iterator[tuple[int, int, str]]:
    """A name alone on a record's first line, above its contact fields or address."""
    for match in _HEADING.finditer("\n\n" + text):
        value = match.group(1)
        if len(words_of(value)) < 2 or not name_shaped(value):
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

"""A person spoken to or asked: addressed at a sentence's head or end (`Warrane, can I…`,
`…, Brandon!`), asked, told or thanked (`Ask Dagny to…`, `We asked Wendelin…`), waited for
(`wait for Ravindra to weigh in`)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from router.privacy import names_model
from router.privacy.names.forms import CAPITAL
from router.privacy.names.lists import AMBIGUOUS, STOP, family_names, given_names
from router.privacy.names.words import addressed_name, is_capitalised, name_shaped

# A person addressed at the head of a sentence and asked or told something (`Warrane, can I
# speak to your boss?`, `Danial, please call back.`): the comma, then a request's first word.
_ADDRESSED = re.compile(r",[ \t]+(?i:can|could|would|will|please|do|did|are|have|let's|i|we|you)(?![\w'’-])")
_SENTENCE_HEAD = re.compile(r"(?:^|[\n\"“(]|[.!?][ \t]+|[.!?][\"”][ \t]+)[ \t]*$")


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


def addressed(text: str) -> Iterator[tuple[int, int, str]]:
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
            if len(word) < 3 or not is_capitalised(word) or not word[1:].islower():
                break
            low = word.lower()
            if low in _INTERJECTIONS:
                break
            listed = (low in given or low in family) and low not in AMBIGUOUS and low not in everyday
            if not listed and (names_model.everyday(low, everyday) or low in STOP or low in names_model.NEVER):
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


# A person addressed at the end of a sentence (`Don't go to town, Brandon!`, `Remember me,
# Chelsea?`, `Thanks, Priya.`): a comma, one capitalised word, the sentence's end.
_ADDRESSED_LAST = re.compile(rf",[ \t]+({CAPITAL})(?=[!?.][ \t\"”')]*(?:$|\n|[ \t]+[A-Z]))")


def addressed_last(text: str) -> Iterator[tuple[int, int, str]]:
    """The word of `_ADDRESSED_LAST` when it is a listed given name and no everyday word."""
    if "," not in text:
        return
    everyday: frozenset[str] = names_model.model()["lexicon"]
    given = given_names()
    for match in _ADDRESSED_LAST.finditer(text):
        low = match.group(1).lower()
        if low in given and low not in AMBIGUOUS and low not in STOP and low not in everyday:
            yield match.start(1), match.end(1), "name-addressed"


# A request to do something with a person, opening a sentence (`Ask Dagny to review it.`, `Tell
# Anselm the build is green.`, `Ping Wiremu about it`): the verb, one or two capitalised words,
# then a lower-case word or the clause's end.
_ASKED = re.compile(
    r"(?:Ask|Tell|Ping|Remind|Email|E-mail|Call|Text|Message|Invite|Thank|Notify|Contact|Congratulate|Page)"
    rf"[ \t]+({CAPITAL}(?:[ \t]+{CAPITAL})?)(?=[ \t]+[a-z]|[ \t]*(?:[,.!?:;]|\r?$))",
    re.MULTILINE,
)


def asked(text: str) -> Iterator[tuple[int, int, str]]:
    """`_ASKED`'s names: at a sentence's head, each word a name a greeting could address
    (`addressed_name`: not `Ask Redis`, `Tell Jenkins`, `Ping Support`)."""
    for match in _ASKED.finditer(text):
        start = match.start()
        if start and not _SENTENCE_HEAD.search(text, max(0, start - 4), start):
            continue
        value = match.group(1)
        if name_shaped(value) and addressed_name(value):
            yield match.start(1), match.end(1), "name-asked"


# A person asked, told or thanked, anywhere in a sentence (`We asked Wendelin Thistlewood to
# rerun it`, `pinged Priya about the flaky test`): the verb's object is a person.
ASKED_VERBS = (
    r"(?:[Aa]sked|[Tt]old|[Pp]inged|[Rr]eminded|[Ee]-?mailed|[Tt]exted|[Mm]essaged|[Ii]nvited|[Tt]hanked"
    r"|[Nn]otified|[Cc]ontacted|[Cc]ongratulated|[Pp]aged|[Cc][Cc]['’]?e?d)"
)
ASKED_DONE = re.compile(
    rf"(?<![\w'’-]){ASKED_VERBS}[ \t]+({CAPITAL}(?:[ \t]+{CAPITAL})?)(?=[ \t]+[a-z]|[ \t]*(?:[,.!?:;]|\r?$))",
    re.MULTILINE,
)


# Waiting on a person (`let's wait for Ravindra to weigh in`): `for`, the name, `to` and a verb.
FOR_TO = re.compile(rf"(?<![\w'’-])for[ \t]+({CAPITAL}(?:[ \t]+{CAPITAL})?)[ \t]+to[ \t]+[a-z]")


def read_addressed(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    """One or two words a person could be addressed by (`wait for Ravindra to`)."""
    value = match.group(1)
    if len(value) > 1 and name_shaped(value) and addressed_name(value):
        yield match.start(1), match.end(1), rule

"""A message's names: greetings (`Dear Ms Okafor,`, `hey kofi`), sign-offs and closings
(`Thanks, Oluwaseun`, `Best regards,` above a name), a salutation or a signature alone on its
line (`Renee,`, `Vince`), and a dialogue's speaker labels (`Ana: I'll be there.`)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from router.privacy import names_model
from router.privacy.names.forms import CAPITAL, FULL, HONORIFIC, LOWER_LETTER, NAME_CASED
from router.privacy.names.lists import AMBIGUOUS, STOP, given_names, place_names
from router.privacy.names.words import addressed_name, name_shaped, words_of

_GREETING_WORDS = (
    r"Dear|Hi|Hello|Hey|Hallo|Liebe[rs]?|Sehr geehrte[r]?|Bonjour|Cher|Chère|Hola|Estimad[oa]|Querid[oa]|Ciao"
    r"|Gentile|Caro|Cara|Olá|Ola|Happy[ \t]+birthday|Congrats|Congratulations|Welcome(?:[ \t]+(?:aboard|back))?"
)
GREETING = re.compile(
    rf"(?:^|(?<=[\s>\"']))(?:{_GREETING_WORDS})[ \t]+"
    rf"(?:{HONORIFIC}\.?[ \t]+|(?:Herr|Frau|Madame|Monsieur|Señora?|Senhora?)[ \t]+)?"
    rf"({FULL})[ \t]*(?=[,!:\n])"
)


# A greeting typed in lower case (`hey kofi can you`): listed given names only.
GREETED_LOWER = re.compile(
    rf"(?<![\w'’-])(?:hey|hi|hello|thanks|thank[ \t]+you|morning|cheers)[ \t]+({LOWER_LETTER}{{2,}})(?=[ \t,!.?]|$)"
)


def read_greeting_lower(text: str, match: re.Match[str], _rule: str) -> Iterator[tuple[int, int, str]]:
    greeted = match.group(1)
    lexicon: frozenset[str] = names_model.model()["lexicon"]
    if greeted in given_names() and greeted not in AMBIGUOUS | STOP and greeted not in lexicon:
        yield match.start(1), match.end(1), "name-greeting"


# Greetings and thanks open a message beside a name, never as part of it (`Hi Carlos,`).
OPENING = re.compile(rf"(?:{_GREETING_WORDS}|Thanks|Thank you|Cheers|Greetings|Welcome)[ \t]+")


# English sign-offs, on a line of their own above a name or before it on the same line.
_THANKS = (
    r"best(?: regards| wishes)?|kind regards|kindest regards|regards|warm regards|warmest regards|warm wishes"
    r"|many thanks|with thanks|thanks(?: again)?|thank you|thx|cheers|sincerely|respectfully|all the best"
    r"|take care|keep in touch|talk soon|talk to you (?:soon|later)|see you(?: soon| later)?|love|hugs|xoxo"
)
# A closing opens its line, or follows a sentence on it (`… your time. Warm regards, Bill Gottlieb`).
_CLOSING_START = r"(?:^[ \t>]*|(?<=[.!?][ \t]))"
CLOSING = re.compile(
    rf"(?im){_CLOSING_START}(?:{_THANKS}|sincerely yours|yours(?: truly| sincerely| faithfully)?"
    r"|mit freundlichen grüßen|mit freundlichen gruessen|viele grüße|beste grüße|liebe grüße|cordialement"
    r"|bien à vous|bien cordialement|saludos(?: cordiales)?|atentamente|un saludo|cordiali saluti|distinti saluti"
    r"|atenciosamente|met vriendelijke groet(?:en)?|(?:com os )?(?:melhores )?cumprimentos|z poważaniem"
    r"|s pozdravem|med vänliga hälsningar|vänliga hälsningar|mvh|--)[ \t]*[,!.]?[ \t]*\r?\n(?:[ \t>]*\r?\n)?[ \t>]*"
    rf"({FULL})[ \t]*\r?$"
)
# A sign-off and a name on one line, the line's last words (`Thanks, Oluwaseun`, `Cheers - Ana`).
SIGN_OFF = re.compile(
    rf"(?im){_CLOSING_START}(?:{_THANKS})[ \t]*[,!.]?[ \t]*(?:[-–—][ \t]*)?"
    rf"(?-i:({FULL}))[ \t]*[.!]?[ \t]*\r?$"
)


# A message's first or last line that is a name alone: a salutation (`Renee,` above the text,
# `Jim, Take a look`) or a signature with no closing word (`… a look at it.` then `Vince`). Taken
# when the first word is a listed given name, no everyday word and no place (`_lone_given`).
SALUTATION = re.compile(rf"(?m)^[ \t]*({CAPITAL}(?:[ \t]+{CAPITAL})?)[ \t]*,(?:[ \t]*\r?\n[ \t]*|[ \t]+)(?=[A-Z])")
SIGNATURE_ALONE = re.compile(
    rf"(?m)(?<=[.!?)]\n)[ \t]*({CAPITAL}(?:[ \t]+(?:[A-Z]\.[ \t]*)?{CAPITAL})?)[ \t]*[.!]?[ \t]*\r?$"
)


def _lone_given(value: str) -> bool:
    """A name standing alone on a message's line: its first word a listed given name that is no
    everyday word and no place, all of it as `addressed_name` takes it."""
    words = words_of(value)
    if not words or not name_shaped(value) or len(words) > 3:
        return False
    first = words[0].lower()
    everyday: frozenset[str] = names_model.model()["lexicon"]
    return (
        first in given_names()
        and first not in AMBIGUOUS
        and first not in STOP
        and first not in everyday
        and value.lower() not in place_names()
        and addressed_name(value)
    )


def read_lone(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    if _lone_given(match.group(1)):
        yield match.start(1), match.end(1), rule


# A dialogue's speaker labels: `Ana: I'll be there.`, `Ana:"Who are you?"` on consecutive lines.
_SPEAKER = re.compile(rf"\n[ \t]*({CAPITAL})[ \t]*:(?:[ \t]+(?=[^\W\d_\s]|[\"'“])|(?=[\"“]))")


# Speakers named by their part, not their name: transcripts' and chat logs' roles.
# (Not the roles that name keys of configs and code too: `HOST:`, `USER:`, `AGENT:`.)
_SPEAKER_ROLES = frozenset(
    ["interviewer", "interviewee", "moderator", "q", "a", "judge", "witness", "counsel", "caller", "audience"]
)


def speaker_labels(text: str) -> Iterator[tuple[int, int, str]]:
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
        listed = {w for w in speakers if w.lower() in given and w.lower() not in AMBIGUOUS and NAME_CASED.fullmatch(w)}
        # A role beside them (`INTERVIEWER:`, `Q:`) says the others are people too.
        roles = {w for w in speakers if w.lower() in _SPEAKER_ROLES}
        if len(block) < 2 or len(speakers) < 2 or not (listed or roles):
            continue
        everyday = names_model.model()["lexicon"]
        for word, start, end in block:
            low = word.lower()
            if word in listed or (
                low not in _SPEAKER_ROLES
                and (NAME_CASED.fullmatch(word) or (roles and word.isupper()))
                and name_shaped(word, allow_upper=bool(roles))
                and len(word) > 2
                and low not in everyday
                and low not in names_model.NEVER
            ):
                yield start, end, "name-speaker"

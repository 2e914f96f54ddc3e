"""Listed names with no cue beside them: capitalised words led by a listed given name or
ending in a listed family name (`…called Priya Nair about…`), a listed given name doing what
people do (`Luiza is from Xignite`, `…, said Maria.`), and a name typed in lower case (`follow
up with patricia desrosiers`). The listed names are found first, by hyperscan, as anchors."""

from __future__ import annotations

import builtins
import functools
import keyword
import re
from collections.abc import Iterator

from router.privacy import names_model
from router.privacy.anchors import Anchor, Anchors, search, windows
from router.privacy.names.forms import CAPITAL, LOWER_LETTER, PARTICLE, REPORTING
from router.privacy.names.lists import AMBIGUOUS, STOP, family_names, given_names, raw_names
from router.privacy.names.software import software_word
from router.privacy.names.words import FIRST_WORD, is_capitalised, name_shaped, trim, without_lead, words_of

_LISTED_CHUNK = 400  # names an expression: hyperscan bounds the length of one


@functools.cache
def _listed_anchor() -> Anchors:
    """Listed names as whole words, capitalised or in lower case (`patricia`): the free-text
    rule needs one in each name it takes (in expressions of `_LISTED_CHUNK` names each, found in
    one pass; a lower-case given name only where a lower-case word follows it)."""
    names = raw_names()
    chunks = ["|".join(re.escape(w) for w in names[i : i + _LISTED_CHUNK]) for i in range(0, len(names), _LISTED_CHUNK)]
    lower = sorted(w for w in {n.lower() for n in names} if _may_be_lower(w))
    lower_chunks = [
        "|".join(re.escape(w) for w in lower[i : i + _LISTED_CHUNK]) for i in range(0, len(lower), _LISTED_CHUNK)
    ]
    return Anchors(
        [Anchor(rf"(?:^|[^\w])(?:{alternation})(?:[^\w]|$)") for alternation in chunks]
        + [Anchor(rf"(?:^|[\s\"'(“])(?:{alternation})[ \t]+{LOWER_LETTER}") for alternation in lower_chunks]
    )


# Words of code that prose corpora (the lexicon) hold too rarely to know: `from jose import jwt`.
_CODE_WORDS = frozenset(keyword.kwlist) | frozenset(dir(builtins)) | {"const", "func", "var", "let", "null", "void"}


def _may_be_lower(word: str) -> bool:
    """Whether a listed name, in lower case, may be a given name written so: not an everyday word,
    an ambiguous one or a word of code (`elif`, `del` are given names too). Only these are the
    lower-case anchors."""
    return (
        word in given_names()
        and word not in AMBIGUOUS
        and word not in names_model.model()["lexicon"]
        and word not in _CODE_WORDS
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


_CAPITALISED_RUN = re.compile(
    rf"(?<![\w@./\\-])({CAPITAL}(?:[ \t]+(?:[A-Z]\.[ \t]+|{PARTICLE}[ \t]+)?{CAPITAL}){{1,2}})(?![\w@-])"
)


def _free_text(value: str) -> bool:
    """Capitalised words in prose that make a name: led by a listed given name (an everyday
    word needs a listed family name after it), or two words ending in a listed family name."""
    words = words_of(value)
    if len(words) < 2 or not name_shaped(value):
        return False
    given, family = given_names(), family_names()
    first, last = words[0].lower(), words[-1].lower()
    if first in given and first not in AMBIGUOUS:
        return True
    if last in family and last not in AMBIGUOUS:
        return first in given or (len(words[0]) > 2 and first not in family)
    return first in given and last in family


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
    first = FIRST_WORD.match(text, start, end)
    inner = _POSSESSIVE_WORD.search(text, first.end(), end) if first is not None else None
    return (start, inner.end()) if inner is not None else (start, end)


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


_SAID_BEFORE = re.compile(rf"(?<![\w'’-]){REPORTING}[ \t]+$")
_CLAUSE_END = re.compile(r"[ \t]*(?:[.,;!?\n]|$)")


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
        if not is_capitalised(word) or (start > 0 and text[start - 1] in "@./\\_"):
            continue
        low = word.lower()
        if low not in given or low in AMBIGUOUS or low in STOP:
            continue
        if _DOES_AFTER.match(text, end) or (
            _SAID_BEFORE.search(text, max(0, start - 16), start) and _CLAUSE_END.match(text, end)
        ):
            yield start, end, "name-acts"


# A name written in lower case (`follow up with patricia desrosiers`, `olga krylova's`, `benjamin a
# seiler`): a listed given name, an initial, then a word that is no everyday word, at a token's
# start and ending where prose goes on (not `jose.jwt`, `ana_lima`, `emma(`).
_LOWER_REST = re.compile(
    rf"[ \t]+(?:[a-z]\.?[ \t]+)?({LOWER_LETTER}{{3,}}(?:-{LOWER_LETTER}{{2,}})?)"
    r"(?=(?:['’]s)?(?:[ \t\r\n,;:!?)\"”]|\.(?!\w)|$))"
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
        if last in everyday or last in STOP or last in names_model.NEVER or last in _CODE_WORDS:
            continue
        if software_word(last):
            continue  # software's or a format's name (`search_dir "jackson xml"`), no family name
        if last in given and last not in family_names():
            continue  # two given names (`anna maria`)
        yield start, rest.end(1), "name-lower"


def in_free_text(text: str) -> Iterator[tuple[int, int, str]]:
    """Names with no cue beside them, read at the listed names' anchors (`_listed_ends`): in
    lower case, capitalised runs that `_free_text` takes, and listed given names acting."""
    listed, lower = _listed_ends(text)
    if lower:
        yield from _lower_case(text, lower)
    if listed:
        for match in search(_CAPITALISED_RUN, text, windows(text, listed, 64, 64)):
            if _free_text(match.group(1)):
                yield (*without_lead(text, *trim(text, *_to_possessive(text, *match.span(1)))), "name-text")
        yield from _acting(text, listed)

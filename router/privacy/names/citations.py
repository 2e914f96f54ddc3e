"""Names in papers and court reports: authors cited by name and year (`Spang (1983)`,
`(Lewis, Simons, & Fennig, 2014)`), a court's justices (`in which KENNEDY, SOUTER, and BREYER
joined`) and a filing's parties in capitals above their role."""

from __future__ import annotations

import re
from collections.abc import Iterator

from router.privacy import names_model
from router.privacy.names.forms import CAPITAL
from router.privacy.names.lists import STOP, family_names, given_names, place_names
from router.privacy.names.lookalikes import INSTITUTION_LAST
from router.privacy.names.words import name_shaped, name_words, words_of

# Authors cited by name and year, as papers, reports and documentation cite them: `Spang (1983)
# noted`, `Domínguez Caparrós, (2000)`, `Smith and Jones (2020)`, `Smith et al. (2019)` in the
# text, and `(Quilis 1964)`, `(Lewis, Simons, & Fennig, 2014)`, `(see Milekic 2010; Heidenreich &
# Turano 2011)` in parentheses. Each author is one or two words cased as a name, none an everyday
# word or software's (`name_words`: not `Windows (2000)`, `(March 2020)`, `(Python 2019)`).
_CITED_NAME = rf"{CAPITAL}(?:[ \t]+{CAPITAL})?"
_CITED_AUTHORS = (
    rf"{_CITED_NAME}(?:(?:,[ \t]+{_CITED_NAME})*,?[ \t]+(?:and|&)[ \t]+{_CITED_NAME})?(?:[ \t]+et[ \t]+al\.?)?"
)
_YEAR = r"(?:1[5-9]|20)\d\d[a-z]?"
_CITE_LEAD = r"(?:(?:see(?:[ \t]+also)?|e\.g\.,?|cf\.|i\.e\.,?|also)[ \t]+)?(?:for[ \t]+(?:example|instance),?[ \t]+)?"
CITED = re.compile(
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


def read_cited(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    """Each author of a citation (`CITED`) whose words are a name's (`name_words`)."""
    group = 1 if match.group(1) is not None else 2
    start, end = match.span(group)
    authors = text[start:end]
    position = 0
    for separator in [*_CITED_SPLIT.finditer(authors), None]:
        stop = separator.start() if separator is not None else len(authors)
        name = authors[position:stop]
        if (
            name
            and name_shaped(name)
            and name_words(name) is not None
            and name.lower() not in place_names()
            and name.lower() not in _DATED
            and INSTITUTION_LAST.search(name) is None  # (`Smithsonian Astrophysical Observatory (2011)`)
        ):
            yield start + position, start + stop, rule
        if separator is None:
            break
        position = separator.end()


# The justices of a court's opinion, in capitals as the reports print them: `in which KENNEDY,
# SOUTER, and BREYER joined`, `SCALIA filed a dissenting opinion`, `ROBERTS, C. J., delivered
# the opinion of the Court`.
_JUSTICE = r"(?:Mc|Mac|O['’])?[A-Z]{2,}(?:-[A-Z]{2,})?(?:,[ \t]+(?:C\.[ \t]*)?J\.,)?"
JOINED = re.compile(
    rf"(?<![\w'’-])(?:[Ii]n[ \t]+which|[Jj]oined[ \t]+by)[ \t]+({_JUSTICE}(?:,[ \t]+{_JUSTICE})*,?"
    rf"(?:[ \t]+and[ \t]+{_JUSTICE})?)(?:[ \t]+joined|[ \t]*[.,;])"
    rf"|(?<![\w'’-])({_JUSTICE})[ \t]+(?:filed|delivered|announced|wrote)[ \t]+(?:an?|the)[ \t]+"
    r"(?:opinion|concurring|dissenting|statement|judgment)"
)
_JUSTICE_WORD = re.compile(r"(?:Mc|Mac|O['’])?[A-Z]{2,}(?:-[A-Z]{2,})?")


def read_justices(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    """Each justice's name of `JOINED` whose word is no everyday word in capitals (not `THE`)."""
    group = 1 if match.group(1) is not None else 2
    everyday: frozenset[str] = names_model.model()["lexicon"]
    given, family = given_names(), family_names()
    for word in _JUSTICE_WORD.finditer(text, *match.span(group)):
        low = word.group().lower()
        if low in STOP or low in names_model.NEVER or len(low) < 3:
            continue
        if low in everyday and low not in given and low not in family:
            continue
        yield word.start(), word.end(), rule


# A court filing's caption: a party in capitals, a comma, then its role on the next line.
CAPTION = re.compile(
    r"^[ \t]*([A-Z][A-Z'’-]+(?:[ \t]+[A-Z][A-Z.'’-]*){1,3}),?[ \t]*\r?\n[ \t]*"
    r"(?:Plaintiffs?|Defendants?|Petitioners?|Respondents?|Appellants?|Appellees?|Claimants?|Debtors?)\b",
    re.MULTILINE,
)


def read_caption(text: str, match: re.Match[str], rule: str) -> Iterator[tuple[int, int, str]]:
    """A party in capitals: its words as a name's, not a firm's."""
    title = " ".join(word.capitalize() for word in words_of(match.group(1)))
    if not names_model._FIRM_WORD.search(title) and name_words(title) is not None:
        yield match.start(1), match.end(1), rule

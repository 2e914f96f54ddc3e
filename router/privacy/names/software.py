"""Software, products and eponyms taken for people: a word of software no name list holds
(`Gradle`), a product's or an eponym's word after the name (`the Jackson library`, `Pearson
correlation`), software listed beside it (`Maven or Gradle`), or the same word in a path, a
package or an identifier of the text (`Jackson` beside `com.fasterxml.jackson`). Read for
the rules with no cue or a weak one (`SOFTWARE_READ`)."""

from __future__ import annotations

import re

from router.privacy.names.lists import family_names, given_names, software
from router.privacy.names.words import words_of


def software_word(low: str) -> bool:
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
    software's name (`software_word`)."""
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
    return any(software_word(word.lower().rstrip(".")) for word in words)


def no_software(text: str, found: list[tuple[int, int, str]], rules: frozenset[str]) -> list[tuple[int, int, str]]:
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
        words = [w.lower() for w in words_of(text[start:end])]
        version = _VERSION_AFTER.match(text, end)
        if (
            # (The first word: a product line, `Jupyter Notebooks`, `Macos Ventura`; not a family
            # name that no list holds and software bears too, `Piotr Helm`.)
            (words and software_word(words[0]))
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


# The rules `no_software` reads: no cue (a listed name in free text, a listed given name acting,
# the prose model) or a weak one (`for Jackson to offer`).
SOFTWARE_READ = frozenset({"name-text", "name-acts", "name-model", "name-for"})

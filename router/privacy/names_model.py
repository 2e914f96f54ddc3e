"""Names in running text with no cue (`…spoke to Priya Nair yesterday…`), by a small linear model
over cheap features (opt-in kind PERSON only; the rules of names/ find labelled names).

Candidates are capitalised words standing as words of prose: not in code (`UserManager`,
`os.Path`, `Foo(`, `x=Bar`), not CamelCase, not all capitals, not beside digits or
underscores. Each is scored by a logistic regression over its word, suffixes and shape, whether
it is in the name lists (data/first_names.txt, surnames.txt), whether it is an everyday English
word, the words before and after it, a verb of reporting or a title beside it, whether it starts
a sentence, and what the rest of the text says of the same word (written after a listed given
name or a title, before a listed family name or a verb of reporting: `Cues`, read from all the
candidates before any is scored). Neighbouring words that pass make one name (`John Smith`).
The weights (data/names_model.json) were trained by
`python -m benchmarks.privacy.names_model train` on a public corpus with person annotations
(data/SOURCES.md); no model is downloaded and the scan is linear in the text: one regular
expression pass, then a few dictionary look-ups per candidate. One sense per text: the words of a
name found with confidence (by the model, or by the rules from a cue) are names at their other
places in the same text too (`Priya Nair … Nair said`, `Nair` opening a sentence).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterable, Iterator
from importlib import resources
from typing import Any, NamedTuple

# A capitalised word of prose: a capital then lower-case letters, parts joined by `-` or an
# apostrophe before a capital (`Jean-Luc`, `O'Brien`, `McDonald`), not touching code characters.
# (The first character class comes first, so the scan skips quickly to capitals.)
_LOWER = r"[a-zß-öø-ÿ\u0100-\u017F]"
_UPPER = r"[A-ZÀ-ÖØ-Þ\u0100-\u017F]"
_PART = rf"{_UPPER}(?:{_LOWER}+|'{_UPPER}{_LOWER}+)(?:(?<=Mc){_UPPER}{_LOWER}+|(?<=Mac){_UPPER}{_LOWER}+)?"
CANDIDATE = re.compile(
    rf"{_UPPER}(?<![\w@#$%&*+=/\\<>`|~^.:\[-].)"
    rf"(?:{_LOWER}+|'{_UPPER}{_LOWER}+)(?:(?<=Mc){_UPPER}{_LOWER}+|(?<=Mac){_UPPER}{_LOWER}+)?(?:-{_PART})?"
    r"(?![\w@#$%&*+=/\\<>`|~^(\[\]{-]|[.:][\w/\\]|['’](?![sS]\b)\w)"
)
_SPLIT = re.compile(r"[-'’]")
# Capitalised words that are never names here: the calendar (log lines), words of code, and
# software that agents' text names as a subject (`…while Redis is out`), written from general
# knowledge after reading the model's false alarms on real text (docs/privacy.md says so).
NEVER = frozenset(
    re.findall(
        r"\S+",
        "jan feb mar apr may jun jul aug sep sept oct nov dec january february march april june july august"
        " september october november december mon tue wed thu fri sat sun monday tuesday wednesday thursday"
        " friday saturday sunday none true false self null nil optional callable iterator iterable exception"
        " error traceback warning info debug dict list tuple str int float bool bytes any union literal"
        " redis postgres postgresql mysql mariadb sqlite mongodb kafka rabbitmq nginx apache grafana prometheus"
        " kubernetes docker podman helm terraform ansible jenkins github gitlab bitbucket jira slack linux ubuntu"
        " debian fedora windows macos android ios python java javascript typescript node rust golang ruby perl"
        " django flask fastapi starlette uvicorn gunicorn celery pytest numpy pandas react angular vue webpack"
        " codex claude openai anthropic gemini llama mistral ollama vllm chrome firefox safari azure aws"
        # The machines and groups tickets hand work to (`assigned to Release Bot`, `opened by Dependabot`).
        " bot bots pipeline pipelines admin admins ops infra oncall automation daemon cron ci cd qa sre devops"
        " staging prod webhook sdk cli copilot renovate dependabot snyk sonarqube codecov mergify gpt llm"
        # Software that public agent runs name as a subject (`maybe Sphinx relies on it?`), and
        # what a system log names so (`Wi-Fi will stay on.`).
        " mozilla sphinx wi-fi bluetooth",
    )
)


@functools.cache
def model() -> dict[str, Any]:
    """The shipped model: weights by feature, thresholds, the everyday-word lexicon."""
    text = resources.files("router.privacy").joinpath("data", "names_model.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    loaded["lexicon"] = frozenset(loaded["lexicon"])
    weights: dict[str, float] = loaded["weights"]
    # The most the context features can add to a word's own score: a word whose own score plus
    # this stays below the lower threshold is not scored in context.
    groups: dict[str, float] = {}
    for name, weight in weights.items():
        if name.startswith(_CONTEXT):
            group = name.split("=", 1)[0]
            groups[group] = max(groups.get(group, 0.0), weight)
    loaded["context_max"] = sum(groups.values())
    cut = min(loaded["threshold"], loaded["threshold_run"])
    loaded["floor"] = math.log(cut / (1 - cut)) - loaded["context_max"]
    return loaded


@functools.cache
@functools.cache
def code_words() -> frozenset[str]:
    """Everyday words of the prose that goes with code (`returns`, `invalid`, `okay`:
    data/code_words.txt, tools/code_words.py), which the lexicon of news and fiction lacks."""
    text = resources.files("router.privacy").joinpath("data", "code_words.txt").read_text(encoding="utf-8")
    return frozenset(text.split())


def everyday(low: str, lexicon: frozenset[str]) -> bool:
    """Whether a word in lower case is an everyday one: the lexicon's, prose of code's, or an
    adverb (`alternatively`, `currently`: six letters or more ending in `ly`; names that end so,
    `Emily`, `Beverly`, are in the name lists, which the callers read first)."""
    return low in lexicon or low in code_words() or (len(low) >= 6 and low.endswith("ly"))


def _lists() -> tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]:
    from router.privacy.names import lists  # (the names package imports this module)

    return lists.hand_given_names(), lists.family_names(), lists.ambiguous_words(), lists.stop_words()


def _shape(word: str) -> str:
    if "-" in word:
        return "hyphen"
    if "'" in word or "’" in word:
        return "apostrophe"
    if len(word) <= 2:
        return "short"
    if any(c.isupper() for c in word[1:]):
        return "inner-capital"
    return "plain"


def _word_kind(word: str | None) -> str:
    """A neighbour in one word: capitalised, lower-case, a digit, a mark, none."""
    if word is None:
        return "none"
    if word.isdigit():
        return "digit"
    if not word[0].isalnum():
        return "mark"
    if word[0].isupper():
        return "cap"
    return "lower"


# The features that depend on the words around a candidate (the rest depend on the word alone).
_CONTEXT = (
    "prev=", "next=", "prevkind=", "nextkind=", "initial", "prevcap&", "nextcap&", "listed&capneighbour",
    "unknown&", "possessive", "reported", "titled", "text&",
)  # fmt: skip

# Titles, offices and ranks written before a person's name (`Dr. Amara`, `President Lula`,
# `Judge Amara`).
_TITLES = frozenset(
    re.findall(
        r"\S+",
        "mr mrs ms miss mx dr prof president senator governor judge justice king queen prince princess sir lord"
        " lady saint pope general captain sergeant officer mayor chancellor minister premier secretary ambassador"
        " coach detective uncle aunt father brother sister mother doctor professor colonel lieutenant major"
        " admiral rev reverend",
    )
)


# The titles and offices that are no one's name (`the Colonel thought`, `Dr. Archie`): never a
# name's word. The others are names or everyday words too (`King`, `Major`, `Judge`, `Sir`,
# `Miss`, `Father`): they stay candidates.
_OFFICE_WORDS = _TITLES - frozenset(
    re.findall(
        r"\S+",
        "miss judge justice king queen prince princess sir lord lady saint general coach uncle aunt father"
        " brother sister mother doctor major",
    )
)


class Near(NamedTuple):
    """A candidate's neighbours: the word (or mark) before it and the one before that, whether a
    line break is between it and the first, the word (or mark) after it and the one after that;
    none across a mark (`Dr.`'s word is read across its dot)."""

    prev: str | None
    newline: bool
    prev2: str | None
    next: str | None
    next2: str | None


def near(text: str, start: int, end: int) -> Near:
    """The neighbours of the candidate text[start:end]."""
    prev, newline = _before(text, start)
    nxt = _after(text, end)
    prev2 = None
    if prev is not None and (prev[0].isalnum() or prev == "."):
        prev2 = _before(text, text.rfind(prev, max(0, start - 80), start))[0]
    next2 = _after(text, text.find(nxt, end, end + 80) + len(nxt)) if nxt and nxt[0].isalnum() else None
    return Near(prev, newline, prev2, nxt, next2)


class Cues(NamedTuple):
    """What a whole text says of its capitalised words (one sense per text), read from its
    candidates' neighbours: the words written right after a listed given name (`Priya Nair`
    makes `Nair` a family name wherever it stands), after a title or an office, before a listed
    family name, and beside a verb of reporting (`Nair said`, `Nair Kumar told`, `said Nair`)."""

    after_given: frozenset[str]
    after_title: frozenset[str]
    before_family: frozenset[str]
    reporting: frozenset[str]


NO_CUES = Cues(frozenset(), frozenset(), frozenset(), frozenset())


def cues(text: str, spans: Iterable[tuple[int, int]], nears: Iterable[Near]) -> Cues:
    """The `Cues` of a text from its candidates (`spans`) and their neighbours (`nears`)."""
    given, family, _ambiguous, _stop = _lists()
    us = _given_us()
    after_given: set[str] = set()
    after_title: set[str] = set()
    before_family: set[str] = set()
    reporting: set[str] = set()
    for (start, end), around in zip(spans, nears, strict=True):
        low = text[start:end].lower()
        prev, nxt = around.prev, around.next
        if prev is not None and prev[:1].isupper():
            if prev.lower() in given or prev.lower() in us:
                after_given.add(low)
            if prev.lower() in _TITLES:
                after_title.add(low)
        elif prev == "." and around.prev2 is not None and around.prev2.lower() in _TITLES:
            after_title.add(low)
        if nxt is not None and nxt[:1].isupper() and nxt.lower() in family:
            before_family.add(low)
        if _reports(nxt) or _reports(prev) or (nxt is not None and nxt[:1].isupper() and _reports(around.next2)):
            reporting.add(low)
    return Cues(frozenset(after_given), frozenset(after_title), frozenset(before_family), frozenset(reporting))


@functools.cache
def _reporting_word() -> re.Pattern[str]:
    from router.privacy.names.forms import REPORTING

    return re.compile(REPORTING)


def _reports(word: str | None) -> bool:
    """Whether a word is a verb of reporting (`said`, `told`)."""
    return word is not None and word[:1].islower() and _reporting_word().fullmatch(word) is not None


def text_features(low: str, cued: Cues) -> list[str]:
    """What the text says of a candidate word (in lower case) elsewhere (`Cues`)."""
    out = []
    if low in cued.after_given:
        out.append("text&after_given")
    if low in cued.after_title:
        out.append("text&after_title")
    if low in cued.before_family:
        out.append("text&before_family")
    if low in cued.reporting:
        out.append("text&reported")
    return out


def _given_us() -> frozenset[str]:
    from router.privacy.names.lists import given_names

    return given_names()


@functools.lru_cache(maxsize=4)
def _grams(lexicon: frozenset[str]) -> tuple[dict[str, int], dict[str, int], int, int]:
    """Letter trigrams of the listed names and of the everyday words (the lexicon's, less the
    listed names), with their totals: how much a word is written like a name."""
    given, family, _ambiguous, _stop = _lists()
    people = given | family | _given_us()
    named: dict[str, int] = {}
    plain: dict[str, int] = {}
    for words, table in ((people, named), (lexicon - people, plain)):
        for word in words:
            for gram in _trigrams(word):
                table[gram] = table.get(gram, 0) + 1
    return named, plain, sum(named.values()), sum(plain.values())


def _trigrams(low: str) -> list[str]:
    padded = f"^{low}$"
    return [padded[i : i + 3] for i in range(len(padded) - 2)]


def name_likeness(low: str, lexicon: frozenset[str]) -> float:
    """The mean log-odds of the word's letter trigrams, names against everyday words, each
    counted without the word itself (a listed word is scored as if it were not listed)."""
    named, plain, total_named, total_plain = _grams(lexicon)
    given, family, _ambiguous, _stop = _lists()
    grams = _trigrams(low)
    in_named = low in given or low in family or low in _given_us()
    in_plain = not in_named and low in lexicon
    score = 0.0
    for gram in grams:
        a = named.get(gram, 0) - (grams.count(gram) if in_named else 0)
        b = plain.get(gram, 0) - (grams.count(gram) if in_plain else 0)
        score += math.log((a + 0.5) / (total_named + 1)) - math.log((b + 0.5) / (total_plain + 1))
    return score / max(1, len(grams))


def word_features(word: str, lexicon: frozenset[str]) -> list[str]:
    """The features of a candidate word on its own."""
    given, family, ambiguous, stop = _lists()
    low = word.lower()
    out = ["bias", f"w={low}", f"s4={low[-4:]}", f"s3={low[-3:]}", f"s2={low[-2:]}", f"shape={_shape(word)}"]
    parts = [p.lower() for p in _SPLIT.split(word) if p]
    if any(p in given for p in parts):
        out.append("given")
    if any(p in family for p in parts):
        out.append("family")
    if low in ambiguous:
        out.append("ambiguous")
    if low in stop:
        out.append("stop")
    if low in lexicon:
        out.append("everyday")
    if "given" not in out and any(p in _given_us() for p in parts):
        out.append("given_us")
    # How much the word is written like a name (its letters), in steps of 0.5 from -1.5 to 1.5;
    # apart for the words in no list and no lexicon (`Katrine`, `Jouni`). Not for the names that
    # are also everyday capitalised words (`Jordan`, `Will`): their letters are a name's, the word
    # often is not, so the feature says nothing of them.
    if low in ambiguous:
        return out
    level = max(-3, min(3, math.floor(name_likeness(low, lexicon) / 0.5)))
    out.append(f"ng={level}")
    if "given" not in out and "family" not in out and "given_us" not in out and "everyday" not in out:
        out.append(f"ng&unlisted={level}")
    return out


def _before(text: str, start: int) -> tuple[str | None, bool]:
    """The word (or mark) before `start` on its line or the one before, and whether a line
    break is between."""
    index = start - 1
    newline = False
    while index >= 0 and start - index < 40 and text[index] in " \t\r\n":
        newline = newline or text[index] == "\n"
        index -= 1
    if index < 0 or start - index >= 40:
        return None, newline
    if not text[index].isalnum():
        return text[index], newline
    end = index + 1
    while index >= 0 and end - index < 40 and (text[index].isalnum() or text[index] == "_"):
        index -= 1
    return text[index + 1 : end], newline


def _after(text: str, end: int) -> str | None:
    index = end
    while index < len(text) and index - end < 40 and text[index] in " \t":
        index += 1
    if index >= len(text) or text[index] in "\r\n":
        return None
    if not text[index].isalnum():
        return text[index]
    start = index
    while index < len(text) and index - start < 40 and (text[index].isalnum() or text[index] == "_"):
        index += 1
    return text[start:index]


# The marks after which a word opens a sentence (or an item, a quotation).
_OPENERS = (".", "!", "?", ":", ";", '"', "“", "*", "#", ">", "-")


def context_features(
    text: str, start: int, end: int, own: list[str], lexicon: frozenset[str], around: Near
) -> list[str]:
    """The features of the candidate text[start:end] that depend on the words around it
    (`around`: `near(text, start, end)`)."""
    given, family, _ambiguous, _stop = _lists()
    prev, newline, nxt = around.prev, around.newline, around.next
    prev_low = prev.lower() if prev else ""
    next_low = nxt.lower() if nxt else ""
    listed = "given" in own or "family" in own
    everyday = "everyday" in own
    initial = prev is None or newline or prev in _OPENERS
    out = [f"prev={prev_low}", f"next={next_low}", f"prevkind={_word_kind(prev)}", f"nextkind={_word_kind(nxt)}"]
    if initial:
        out.append("initial")
        out.append(f"initial&everyday={everyday}")
    prev_cap = prev is not None and prev[:1].isupper()
    next_cap = nxt is not None and nxt[:1].isupper()
    if prev_cap:
        out.append(f"prevcap&listed={prev_low in given or prev_low in family}")
        out.append(f"prevcap&everyday={prev_low in lexicon}")
    if next_cap:
        out.append(f"nextcap&listed={next_low in given or next_low in family}")
        out.append(f"nextcap&everyday={next_low in lexicon}")
    if (prev_cap or next_cap) and listed:
        out.append("listed&capneighbour")
    if text[end : end + 2] in ("'s", "’s"):  # a possessive (`Meza's song`)
        out.append("possessive")
        out.append(f"possessive&listed={listed}")
    if not everyday:
        out.append(f"unknown&initial={initial}")
        if (prev_cap and prev_low not in lexicon) or (next_cap and next_low not in lexicon):
            out.append("unknown&unknowncapneighbour")
    prev2, next2 = around.prev2, around.next2
    if _reports(nxt) or (next_cap and _reports(next2)):
        out.append("reported")
    elif _reports(prev):  # `…, said Erle`
        out.append("reported&after")
    if prev_low in _TITLES or (prev == "." and prev2 is not None and prev2.lower() in _TITLES):
        out.append("titled")
    return out


def features(text: str, start: int, end: int, lexicon: frozenset[str] | None = None, cued: Cues = NO_CUES) -> list[str]:
    """The features of the candidate word text[start:end] (`lexicon`: the everyday words, by
    default the shipped model's; `cued`: the text's `cues`)."""
    if lexicon is None:
        lexicon = model()["lexicon"]
    own = word_features(text[start:end], lexicon)
    context = context_features(text, start, end, own, lexicon, near(text, start, end))
    return own + context + text_features(text[start:end].lower(), cued)


def _logit(feats: list[str]) -> float:
    weights: dict[str, float] = model()["weights"]
    return sum(weights.get(f, 0.0) for f in feats)


def score(feats: list[str]) -> float:
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, _logit(feats)))))


# A lower-case word of prose: spaced (the parts of an e-mail address or a path are not).
_LOWER_WORD = re.compile(r"(?:(?<=\s)|^)[a-z]{2,}(?=[\s,.;:!?)]|$)")
# Marks of a line of code or a table, not prose.
# (A diff's line too: its `+` or `-` right before the code, or before its indentation; a hunk's
# header, `@@ -25,7 +25,7 @@ from seaborn._marks.base import Mark`. A Markdown item, `- from`, is
# prose.)
_CODE = re.compile(
    r"\||^(?:[+-](?=\S|[ \t]{2}))?\s*(?:from|import|def|class|return|async|await|let|const|var|function)\b"
    r"|^@@ |\bfrom [\w.]+ import\b| = |==|->|=>|\(\)|;$"
    r"|\b(?:INFO|DEBUG|WARN|WARNING|ERROR|TRACE|FATAL|CRITICAL|NOTICE)\b"
)
# A line that ends as a sentence does: a full stop, a question or an exclamation mark (closing
# quotes or brackets after it), not an ellipsis or a version's last dot (`to 2.0.`).
_SENTENCE_END = re.compile(r"(?<![.\d])[.!?][\"'”’)]*[ \t]*$")
_NEAR = 2048  # characters each side of a candidate searched for the same word in lower case


def _words_of(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"\S+", text))


# Function words of the other languages agents read (German, French, Spanish, Italian,
# Portuguese, Dutch, Polish, Swedish, Czech) that are no English word, and English's own: the
# model learnt English prose, and reads a capitalised noun of German (`Ihre Nachricht`), a
# place or an institution of another language's sentence (`en Valencia`, `Politecnico di
# Milano`) as a name. A line with more of the first than of the second is left to the rules.
_FOREIGN_WORDS = _words_of(
    "der das und ist nicht für mit dem des ein eine einen sie ihr ihre wir ich auf zu von bei wurde sind haben"
    " bitte auch sich le les et est pour avec une du au aux nous vous je ne pas sur dans ce cette qui été el"
    " los las y es para con una del por su sus usted está muy se il lo gli è per della delle di che non sono"
    " alla nel os é com uma do da dos das não em um het een en voor met van niet wij ik zijn naar jest nie"
    " się że dla och är att det inte för på jag ett som je na ne pro jsem de",
)
_ENGLISH_WORDS = _words_of(
    "the and is are was were of to in for with on at by from this that it be have has you we they not but or"
    " will can please",
)


def _other_language(line: str) -> bool:
    """Whether `line` reads as another language's prose rather than English (`_FOREIGN_WORDS`)."""
    # (Split at spaces: a function word rarely carries a mark. Capitalised words are in neither
    # set: a sentence's first word counts for neither.)
    words = line.split()
    if _FOREIGN_WORDS.isdisjoint(words):  # most lines: one set operation
        return False
    return sum(map(_FOREIGN_WORDS.__contains__, words)) > sum(map(_ENGLISH_WORDS.__contains__, words))


def _prose_line(text: str, start: int, last: list[int]) -> bool:
    """Whether the line around `start` reads as English prose: three or more lower-case words, no
    table bars and no marks of code (a CSV row, a signature's title line, a table's cells and code
    are left to the rules), not another language's (`_other_language`). Up to 200 characters each
    side are read; the answer is kept for the candidates after it in the same stretch (`last`:
    its start, end and answer)."""
    if last[0] <= start < last[1]:
        return bool(last[2])
    low = text.rfind("\n", max(0, start - 200), start) + 1 or max(0, start - 200)
    high = text.find("\n", start, start + 200)
    if high < 0:
        high = min(len(text), start + 200)
    line = text[low:high]
    if _CODE.search(line) is not None:
        prose = False
    else:
        words = len(_LOWER_WORD.findall(line))
        # A short sentence (`Call Wiremu back tomorrow.`, `Happy birthday Farida!`) is prose
        # too: a lower-case word and the sentence's end mark, as a heading or a cell has not.
        prose = words >= 3 or (words >= 1 and _SENTENCE_END.search(line) is not None)
        prose = prose and not _other_language(line)
    last[:] = [low, high, int(prose)]
    return prose


def _written_lower(text: str, low: str, start: int) -> bool:
    """Whether the word is also written in lower case or in capitals near `start` (`Redis`
    beside `redis_url`, `Kernel` beside `KERNEL`: a word of the text, not a name), not counting
    the parts of an e-mail address (`ana.lima@…`)."""
    return _written(text, low, start) or _written(text, low.upper(), start)


def _written(text: str, low: str, start: int) -> bool:
    index = text.find(low, max(0, start - _NEAR), start + _NEAR)
    tries = 0
    while index >= 0 and tries < 4:
        before = text[index - 1] if index else " "
        after = text[index + len(low)] if index + len(low) < len(text) else " "
        if not (before.isalnum() or before == "@") and not (after.isalnum() or after in ".@"):
            return True
        index = text.find(low, index + 1, start + _NEAR)
        tries += 1
    return False


def candidates(text: str, lexicon: frozenset[str] | None = None) -> Iterator[tuple[int, int]]:
    """The capitalised words of prose in `text` (start, end) that may be names: on a line of
    prose, not everyday words (unless in the name lists), not words of the calendar or of code,
    not written in lower case nearby."""
    if lexicon is None:
        lexicon = model()["lexicon"]
    given, family, _ambiguous, _stop = _lists()
    last = [0, 0, 0]
    for match in CANDIDATE.finditer(text):
        low = match.group().lower()
        if low in NEVER or low in _OFFICE_WORDS or (everyday(low, lexicon) and low not in given and low not in family):
            continue
        if "-" in low and all(everyday(part, lexicon) and part not in given for part in low.split("-")):
            continue  # everyday words joined (`Set-Cookie`, `Read-Only`), not `Jean-Pierre`
        start = match.start()
        if not _prose_line(text, start, last) or _written_lower(text, low, start):
            continue
        yield match.span()


# Words that join two parts of one name (`Ludwig van Beethoven`).
_JOIN = re.compile(r"[ \t]+(?:(?:van|von|der|den|de|del|della|di|da|du|la|le|bin|ibn|al|dos|das)[ \t]+)?")


def _ambiguous_opening(text: str, start: int, end: int, ambiguous: frozenset[str]) -> bool:
    """Whether text[start:end] is an everyday capitalised word (data/ambiguous_words.txt)
    opening a sentence or a line."""
    if text[start:end].lower() not in ambiguous:
        return False
    prev, newline = _before(text, start)
    return prev is None or newline or prev in _OPENERS


def runs(text: str, scored: list[tuple[int, int, float]], single: float, several: float) -> Iterator[tuple[int, int]]:
    """Names from scored candidates (start, end, probability), earliest first: neighbouring
    candidates (a space or a particle between) make one run; a run of one word is a name when its
    probability reaches `single`, a longer run when its mean reaches `several` (then all of it).
    A word alone opening a sentence that is also an everyday capitalised word (`Jordan here.`,
    `Will it…`: data/ambiguous_words.txt) is none unless found elsewhere as a name (probability
    1): its capital says nothing, and the rules count such words only beside stronger evidence."""
    ambiguous = _lists()[2]
    run: list[tuple[int, int, float]] = []
    for index in range(len(scored) + 1):
        here = scored[index] if index < len(scored) else None
        if here is not None and run and here[0] - run[-1][1] <= 6 and _JOIN.fullmatch(text, run[-1][1], here[0]):
            run.append(here)
            continue
        if run:
            if len(run) > 1 and sum(p for _s, _e, p in run) / len(run) >= several:
                yield run[0][0], run[-1][1]
            else:  # the words that pass on their own
                for start, end, p in run:
                    if p >= single and (p >= 1.0 or not _ambiguous_opening(text, start, end, ambiguous)):
                        yield start, end
        run = [here] if here is not None else []


@functools.lru_cache(maxsize=8192)
def _own(word: str) -> tuple[tuple[str, ...], float]:
    """A word's own features and their weight (cached: the same words recur)."""
    own = word_features(word, model()["lexicon"])
    return tuple(own), _logit(own)


# Words that stand beside names without being one (`Mr. Nair`, `De Jong`): a found name's other
# words are looked for again in the text, these are not.
_NOT_AGAIN = frozenset(
    re.findall(
        r"\S+",
        "mr mrs ms miss mx dr prof sir dame lord lady madam mme mlle herr frau sr sra st rev"
        " van von der den de del della di da du la le bin ibn al dos das",
    )
)
# A word the model found is looked for again when its own probability reaches this (the rules'
# names always are): chosen by cross-validation on the training documents
# (benchmarks/privacy/README.md).
AGAIN_SEED = 0.8


def _seeds(
    text: str, scored: list[tuple[int, int, float]], found: list[tuple[int, int]], known: Iterable[tuple[int, int]]
) -> set[str]:
    """The words (lower case) of the names found with confidence: in `known` spans, or scored at
    AGAIN_SEED or more inside a found name; not titles or particles, not everyday words unless
    listed as names, not names that are also everyday capitalised words (`Victoria`, `Jordan`:
    names/lists.py, `ambiguous_words`)."""
    seeds = {match.group().lower() for start, end in known for match in CANDIDATE.finditer(text, start, end)}
    index = 0
    for start, end, p in scored:
        while index < len(found) and found[index][1] <= start:
            index += 1
        if index < len(found) and found[index][0] <= start and p >= AGAIN_SEED:
            seeds.add(text[start:end].lower())
    lexicon: frozenset[str] = model()["lexicon"]
    given, family, ambiguous, _stop = _lists()
    return {
        w
        for w in seeds
        if w not in _NOT_AGAIN and w not in ambiguous and (w not in lexicon or w in given or w in family)
    }


def find(text: str, known: Iterable[tuple[int, int]] = ()) -> Iterator[tuple[int, int]]:
    """Spans of names the model finds in `text`. The words of these (scored AGAIN_SEED or more)
    and of the `known` names (the rules') are names at their other places as candidates too."""
    loaded = model()
    lexicon: frozenset[str] = loaded["lexicon"]
    weights: dict[str, float] = loaded["weights"]
    floor: float = loaded["floor"]
    spans = list(candidates(text, lexicon))
    # Each candidate's own and local weight first, then what the text says of its word.
    nears = [near(text, start, end) for start, end in spans]
    cued = cues(text, spans, nears)
    scored = []
    for (start, end), around in zip(spans, nears, strict=True):
        own, partial = _own(text[start:end])
        if partial < floor:
            continue
        context = context_features(text, start, end, list(own), lexicon, around)
        context += text_features(text[start:end].lower(), cued)
        total = partial + sum(weights.get(f, 0.0) for f in context)
        scored.append((start, end, 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, total))))))
    known = list(known)
    found = list(runs(text, scored, loaded["threshold"], loaded["threshold_run"]))
    seeds = _seeds(text, scored, found, known)
    again = {start for start, end in spans if text[start:end].lower() in seeds}
    probability = {start: p for start, _end, p in scored}
    # A list is read as people's from its names found with confidence: the rules', and the
    # model's whose words reach AGAIN_SEED on average (a firm the model took for a person, `Reed
    # Elsevier`, does not make its list's other firms people).
    again |= _coordinated(text, spans, _confident(found, spans, probability) + known)
    if not again:
        return iter(found)
    # Found again or listed with a name: certain, so neighbouring candidates join them as in any
    # run (`Priya` opening a sentence, then `Nair`).
    merged = [(start, end, 1.0 if start in again else probability.get(start, 0.0)) for start, end in spans]
    return runs(text, [m for m in merged if m[2] > 0.0], loaded["threshold"], loaded["threshold_run"])


def _confident(
    found: list[tuple[int, int]], spans: list[tuple[int, int]], probability: dict[int, float]
) -> list[tuple[int, int]]:
    """The found names whose candidates' mean probability reaches AGAIN_SEED (both lists in
    the text's order: one pass over each, not one over the candidates a name)."""
    sure = []
    index = 0
    for start, end in found:
        while index < len(spans) and spans[index][0] < start:
            index += 1
        scores = []
        inside = index
        while inside < len(spans) and spans[inside][0] < end:
            if spans[inside][0] in probability:
                scores.append(probability[spans[inside][0]])
            inside += 1
        if scores and sum(scores) / len(scores) >= AGAIN_SEED:
            sure.append((start, end))
    return sure


# Between the members of a list: a comma (an `and` or `or` after it) or `and`, `or`, `&`.
_LIST_JOIN = re.compile(r"[ \t]*,[ \t]*(?:(?:and|or)[ \t]+)?|[ \t]+(?:and|or|&)[ \t]+")
# After a member, what makes the list one of firms or places, not of people: a firm's legal
# form or a word a firm's name ends in (`Hicks and Brown and Abt Associates`), or a number (a
# street's: `Anne-Lotte and Aqqusinersuaq 99`).
_FIRM_WORDS = (
    r"(?:Inc|Ltd|LLC|LLP|Corp|Corporation|Company|Co|Group|Associates|Technologies|Holdings|Partners|GmbH|AG|SA"
    r"|plc|Bank|Labs|Systems|Solutions|Software|Analytics|Foundation|University|Investments|Capital|Consulting"
    r"|Industries|Enterprises|Ventures|Networks|Services|Insurance|Pharmaceuticals|Street|St|Road|Avenue"
    # Trades a shop's or a firm's name ends in (`Carr Futures`, `Malcolm Smith Motorsports`).
    r"|Futures|Motorsports|Motors|Offices|Realty|Properties|Hotels?|Resorts?|Restaurants?|Pizzeria|Bakery|Dental"
    r"|Clinic|Guaranty|Airlines|Airways|Energy|Communications|Productions|Studios|Entertainment|Pharmacy|Motel)\b"
)
_NOT_PEOPLE = re.compile(rf"(?:[ \t]+[^\W\d_]+){{0,2}}[ \t]+\d|[ \t]+{_FIRM_WORDS}")
_FIRM_WORD = re.compile(rf"(?<![\w-]){_FIRM_WORDS}")


def _coordinated(text: str, spans: list[tuple[int, int]], names: list[tuple[int, int]]) -> set[int]:
    """The starts of candidates listed with a name (`Dagny and Kenji`, `Hleb, Sheila and
    Donna`): the members of one list are of one kind, so where a list's members (joined by a
    comma or a conjunction, `_LIST_JOIN`) are candidates and names, its candidates are names too,
    unless a member is marked as a firm or a place (`_NOT_PEOPLE`). Only candidates are taken:
    everyday words and software never were."""
    if not names or len(spans) < 2:
        return set()
    # The members: the names (a found run is one member) and the candidates outside them.
    ordered = sorted(set(names))
    outside = []
    index = 0
    for start, end in spans:  # (in the text's order) the candidates no name covers
        while index < len(ordered) and ordered[index][1] <= start:
            index += 1
        if not (index < len(ordered) and ordered[index][0] <= start < ordered[index][1]):
            outside.append((start, end))
    members = sorted({*ordered, *outside})
    seeds = set(names)
    candidate = {s for s, _e in spans}
    taken: set[int] = set()
    chain: list[tuple[int, int]] = []
    for member in [*members, (-1, -1)]:
        if chain and member[0] >= 0:
            joined = _LIST_JOIN.match(text, chain[-1][1])
            if joined is not None and joined.end() == member[0]:
                chain.append(member)
                continue
        if (
            len(chain) > 1
            and any(m in seeds for m in chain)
            and not any(_NOT_PEOPLE.match(text, e) or _FIRM_WORD.search(text, s, e) for s, e in chain)
        ):
            taken.update(s for s, _e in chain if s in candidate)
        chain = [member]
    return taken

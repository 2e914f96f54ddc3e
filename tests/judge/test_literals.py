"""The one-pass word finder gives what `in` gives, word by word, on any text."""

from __future__ import annotations

import random

from judge.literals import Literals

WORDS = ["Error", "rror: ", "not found", "EXACTLY ONE", "<tool_use_error>", "é suivi", "日本", "x"]


def _by_in(text: str) -> set[int]:
    return {index for index, word in enumerate(WORDS) if word in text}


def test_found_equals_in_on_texts_of_any_letters_with_hyperscan_and_without() -> None:
    scanned = Literals(WORDS)
    fallback = Literals(WORDS)
    fallback._tried = True  # as where hyperscan is not installed: `in`, word by word
    rng = random.Random(7)
    pieces = [*WORDS, "Err", "rror", "not ", "found", "é", "日", "\ud800", "\n", "abc ", "ÉRROR", "error"]
    for _ in range(400):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 400)))
        assert scanned.found(text) == fallback.found(text) == _by_in(text), text
    assert scanned._database is not None  # the scan was what ran (hyperscan is a dependency)


def test_a_word_split_by_the_text_or_cut_at_its_end_is_not_found() -> None:
    finder = Literals(WORDS)
    filler = "." * 1000
    assert finder.found(filler + "EXACTLY\nONE" + filler) == set()
    assert finder.found(filler + "not foun") == set()
    assert finder.found(filler + "日本" + filler + "<tool_use_error>") == {
        WORDS.index("日本"),
        WORDS.index("<tool_use_error>"),
    }
    # A lone surrogate (a client's JSON may carry one) is read, not refused.
    assert finder.found(filler + "\udc80not found") == {WORDS.index("not found")}

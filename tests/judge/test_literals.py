"""The one-pass word finder gives what `in` gives, word by word, on any text."""

from __future__ import annotations

import random

from judge import literals
from judge.literals import Literals

WORDS = ["Error", "rror: ", "not found", "EXACTLY ONE", "<tool_use_error>", "é suivi", "日本", "x"]


def _by_in(text: str) -> set[int]:
    return {index for index, word in enumerate(WORDS) if word in text}


def test_found_equals_in_on_long_texts_of_any_letters() -> None:
    finder = Literals(WORDS)
    rng = random.Random(7)
    pieces = [*WORDS, "Err", "rror", "not ", "found", "é", "日", "\ud800", "\n", "abc ", "ÉRROR", "error"]
    checked_long = 0
    for _ in range(400):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 400)))
        assert finder.found(text) == _by_in(text), text
        checked_long += len(text) >= literals._SCAN_FROM
    assert checked_long > 100  # the scan, not only the short texts' `in`


def test_a_word_split_by_the_text_or_cut_at_its_end_is_not_found() -> None:
    finder = Literals(WORDS)
    filler = "." * 1000
    assert finder.found(filler + "EXACTLY\nONE" + filler) == set()
    assert finder.found(filler + "not foun") == set()
    assert finder.found(filler + "日本" + filler + "<tool_use_error>") == {WORDS.index("日本"), WORDS.index("<tool_use_error>")}
    # A lone surrogate (a client's JSON may carry one) is read, not refused.
    assert finder.found(filler + "\udc80not found") == {WORDS.index("not found")}

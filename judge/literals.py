"""Which of a fixed set of words occur in a text, in one pass (hyperscan; `in` without it).

The harness-status rule (judge/status.py) looks for its harnesses' words in the edges of every
result it reads, and the judge's features read each new turn of a run with it: one `in` per word
is a pass over the text per word, a literal database one pass for all of them. Words are matched
as bytes of the text's UTF-8 (a word's bytes occur in the text's exactly when the word occurs in
the text), so a text with a lone surrogate (a client's JSON may carry one) is matched as well.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any


class Literals:
    """A fixed set of words, compiled once on first use."""

    __slots__ = ("_database", "_per_thread", "_scratch", "_tried", "_words")

    def __init__(self, words: Sequence[str]) -> None:
        self._words = tuple(words)
        self._database: Any = None
        self._scratch: Any = None
        # A scratch space serves one scan at a time: each thread that scans gets its own clone.
        self._per_thread = threading.local()
        self._tried = False

    def _compile(self) -> None:
        self._tried = True
        try:
            import hyperscan
        except ImportError:  # `in`, word by word: the same answer, more slowly
            return
        database = hyperscan.Database()
        database.compile(
            expressions=[_escaped(word) for word in self._words],
            ids=list(range(len(self._words))),
            elements=len(self._words),
            flags=[hyperscan.HS_FLAG_SINGLEMATCH] * len(self._words),
        )
        self._database = database
        self._scratch = hyperscan.Scratch(database)

    def found(self, text: str) -> set[int]:
        """The indexes (in the given order) of the words that occur in `text`."""
        if not self._tried:
            self._compile()
        if self._database is None:
            return {index for index, word in enumerate(self._words) if word in text}
        hits: set[int] = set()

        def on_match(index: int, _start: int, _end: int, _flags: int, _context: object) -> None:
            hits.add(index)

        scratch = getattr(self._per_thread, "scratch", None)
        if scratch is None:
            scratch = self._per_thread.scratch = self._scratch.clone()
        self._database.scan(text.encode("utf-8", "surrogatepass"), match_event_handler=on_match, scratch=scratch)
        return hits


def _escaped(word: str) -> bytes:
    """The word as a hyperscan expression that matches its UTF-8 bytes literally."""
    return b"".join(b"\\x%02x" % byte for byte in word.encode("utf-8"))

"""Whether a label (a word such as "phone" or "SSN") stands in the window before a value.

A caseless label regex tries each of its words at each place of the window (tens of µs a call);
in ASCII text, where caseless is lower case and only the ASCII words can occur, a window holding
none of them is answered by substring tests instead, and the regex runs only where one is there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable


class LabelWindow:
    """The label words of one detector and the caseless regex that finds them as labels."""

    def __init__(self, words: Iterable[str], label: re.Pattern[str]) -> None:
        lowered = {word.lower() for word in words if word.isascii()}
        # A window holds a word only if it holds each word inside it (`tel` in `telephone`, `ph`
        # in `phone`): the test of the shorter one answers for both, so the longer are left out
        # (~45 phone words tested as ~17: each `in` costs ~50 ns, ~3 tests a KB of value-dense
        # text ask it). Ordered by length, then spelling, so the order does not depend on a set's.
        self._ascii = tuple(
            sorted(
                (word for word in lowered if not any(other != word and other in word for other in lowered)),
                key=lambda word: (len(word), word),
            )
        )
        self._label = label

    def before(self, text: str, low: int, start: int) -> bool:
        """A label in `text[low:start]`."""
        window = text[low:start]
        if window.isascii():
            # (`_` read as a space: a key names a label in words joined so, `tax_id`.)
            window = window.lower().replace("_", " ")
            if not any(word in window for word in self._ascii):
                return False
        return bool(self._label.search(text, low, start))

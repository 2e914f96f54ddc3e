"""Kinds a route detects only when it asks for them (`privacy_detect: [person, address]`):
person names and postal addresses. Off by default: they cost more per KB than the default
kinds and are found by context rules whose precision depends on the text (see names/ and
addresses.py); a route handling customer records turns them on.
"""

from __future__ import annotations

from collections.abc import Callable

from router.privacy import addresses
from router.privacy.detector import Finding
from router.privacy.escaped_letters import with_letters
from router.privacy.names import person
from router.privacy.taken import Taken

# Setting's word -> the finder. Addresses first: `12 Martin Luther King Drive` is an address,
# not a person.
FINDERS: dict[str, Callable[[str], list[Finding]]] = {"address": addresses.find, "person": person.find}
KINDS = {"address": "ADDRESS", "person": "PERSON"}


def find(text: str, enabled: frozenset[str]) -> list[Finding]:
    """The opt-in kinds' findings in `text`, non-overlapping (an earlier finder's stand); in JSON
    written ASCII-only, with its escaped letters read as letters (`Fern\\u00e1ndez`)."""
    if "\\u" in text:
        found = with_letters(text, lambda view: _find(view, enabled))
        if found is not None:
            return found
    return _find(text, enabled)


def _find(text: str, enabled: frozenset[str]) -> list[Finding]:
    found: list[Finding] = []
    taken = Taken()
    for word, finder in FINDERS.items():
        if word in enabled:
            found.extend(f for f in finder(text) if taken.take(f.start, f.end))
    return found


# A text that reaches every table the finders build on first use (hyperscan databases of the
# listed names and of the rules' anchors, the prose model): built at the gateway's start for the
# kinds its routes ask for, not in the first request that needs them (a second or two).
_PREPARE_TEXT = "Dear Ms Maria Lopez,\nName: Ana Lima\n12 Main Street\nSpringfield, IL 62704\nMaria said hello."


def prepare(enabled: frozenset[str]) -> None:
    """Build the opt-in finders' tables for these kinds now."""
    find(_PREPARE_TEXT, enabled)

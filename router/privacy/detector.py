"""What a detector is and what it finds: shared by Tandem's detectors, the provider secret
rules and optional backends (see detect.py for how they run)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Finding:
    type: str  # one of kinds.KINDS
    value: str
    start: int
    end: int
    rule: str = ""  # the rule that found it (a provider rule id, `PHONE`, `FR_NIR`, …)


@dataclass(frozen=True, slots=True)
class Detector:
    type: str  # one of kinds.KINDS
    pattern: re.Pattern[str]  # the exact pattern (with its boundary checks), run on candidates only
    core: bytes  # what hyperscan looks for: the pattern without look-arounds (a superset of it)
    validate: Callable[[str], bool] | None = None
    group: int = 0  # the group holding the value (0: the whole match)
    reach: int = 0  # bytes past the core's end the exact match may still extend (private keys)
    lead: int = 0  # bytes before the core's start where the exact match may begin (e-mail local parts)
    rule: str = ""  # defaults to the type
    # Context rules: (text, start, end) of the value -> whether it stands (a label before it, …).
    check: Callable[[str, int, int], bool] | None = None
    # Hyperscan need not track where the core's matches start (costly): they start at most this
    # many bytes before their end (literal labels, provider rules' bounded regexes). 0: track it.
    keyword_core: int = 0
    # The value follows its core (a label such as `SSN:` or `tel`) instead of containing it:
    # matches may begin anywhere up to `reach` past the core.
    follows: bool = False
    # A cheap necessary condition on a candidate's window (text, low, high), tried before the
    # exact pattern runs there (a provider rule's keywords).
    gate: Callable[[str, int, int], bool] | None = None
    # The pattern's beginning, when it is long to search for (a name before a value up to 4 KB
    # long): the head is searched for where a match may begin, and the pattern matched there,
    # instead of searching the whole window for the pattern.
    head: re.Pattern[str] | None = None
    # Where the value is in a match, when no one group holds it (a quoted or a bare argument).
    value_span: Callable[[re.Match[str]], tuple[int, int]] | None = None
    # The strings every match begins with (heads.first_strings), for patterns `re` would try at
    # every position (`\b(sk_live_…`): a window is searched from the first place one occurs.
    skip_to: re.Pattern[str] | None = None
    # Hyperscan expressions to compile instead of `core`: its alternatives apart. Hyperscan runs
    # an alternation of digit shapes, each behind a boundary class, as one costly automaton over
    # every byte; apart, they cost it about half (the phone core: ~2.8 -> ~1.2 µs/KB).
    split_core: tuple[bytes, ...] = ()
    # Candidates found without hyperscan: (UTF-8 bytes) -> the merged spans `core` would give.
    # For a core that is one wide character class repeated (base64 runs), which hyperscan
    # tracks at every byte; a translation and a substring search find it for a fraction.
    native: Callable[[bytes], list[tuple[int, int]]] | None = None
    # Where any match may begin, for detectors that share their core, their windows and a
    # pattern led by the same boundary and a digit (the labelled national ids): found once per
    # window for all of them (windows.starts_of), each detector's pattern matched only there.
    starts: re.Pattern[str] | None = None
    # How far past where a match of `head` (else `skip_to`) may begin it reads (look-aheads
    # included; heads.forward_reach), when that is under windows.HEAD_SPAN: a window's search
    # for the head stops that far past the last place a match may begin, not HEAD_SPAN past it.
    head_span: int | None = None

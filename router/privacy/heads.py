"""Where a match of a regular expression may begin, to try it only there.

Python's `re` tries a pattern at every position of a window when the pattern does not begin
with a literal (`\\b(sk_live_…`, `(?<![\\w-])eyJ…`, `(?i)…`). `first_strings` reads the pattern
and gives the few strings of two or three characters every match begins with; a window is
searched from the first place one occurs (Detector.skip_to), which `re` finds at C speed. Gitleaks'
generic rules begin with up to 50 (or 100) name characters before their keyword, which Python
tries at every position and length (~1 ms per 640-character window); `without_lead` drops that
prefix, which changes no value found (see its docstring).
"""

from __future__ import annotations

import re
from re import _constants as constants  # type: ignore[attr-defined]
from re import _parser as parser  # type: ignore[attr-defined]
from typing import Any

_LEAD = r"[\w.-]{0,50}?"


class _Broad(Exception):
    """The pattern may begin with too many strings (or with anything)."""


_MAX_PREFIXES = 24  # strings a head may list
_PREFIX = 3  # characters of each


def _members(items: list[tuple[Any, Any]]) -> set[str]:
    """A character class's members, when it has a few (case folded: heads ignore case)."""
    chars: set[str] = set()
    for op, value in items:
        if op is constants.LITERAL:
            chars.add(chr(value).lower())
        elif op is constants.RANGE and value[1] - value[0] < 10:
            chars.update(chr(c).lower() for c in range(value[0], value[1] + 1))
        else:  # a negated class, a category, a wide range
            raise _Broad
    return chars


def _extend(prefixes: set[str], items: list[tuple[Any, Any]]) -> tuple[set[str], bool]:
    """Every string a match of the sequence `items` may begin with, each of the given prefixes
    followed by it, up to _PREFIX characters; and whether the sequence was read to its end (else
    the strings stop where it could not be followed: still prefixes of every match)."""
    for op, value in items:
        if all(len(prefix) >= _PREFIX for prefix in prefixes):
            return prefixes, False
        if op in (constants.AT, constants.ASSERT, constants.ASSERT_NOT):
            continue  # zero-width: the strings stay prefixes of the matches
        if op is constants.LITERAL:
            prefixes = {p + chr(value).lower() if len(p) < _PREFIX else p for p in prefixes}
        elif op is constants.IN:
            try:
                members = _members(value)
            except _Broad:  # a wide class: the strings end before it
                return prefixes, False
            prefixes = {p + c if len(p) < _PREFIX else p for p in prefixes for c in members}
        elif op is constants.SUBPATTERN:
            prefixes, whole = _extend(prefixes, list(value[3]))
            if not whole:
                return prefixes, False
        elif op is constants.BRANCH:
            branches = [_extend(prefixes, list(branch)) for branch in value[1]]
            prefixes = set().union(*(strings for strings, _whole in branches))
            if not all(whole for _strings, whole in branches):
                return prefixes, False  # a branch's strings stopped short: the others stop too
        elif op in (constants.MAX_REPEAT, constants.MIN_REPEAT, constants.POSSESSIVE_REPEAT) and value[0] >= 1:
            return _extend(prefixes, list(value[2]))[0], False
        else:  # optional, any character, a group reference: the strings end here
            return prefixes, False
        if len(prefixes) > _MAX_PREFIXES:
            raise _Broad
    return prefixes, True


def first_strings(pattern: str, flags: int = 0) -> re.Pattern[str] | None:
    """An alternation (case ignored) of the strings of two or three characters every match of
    `pattern` begins with, compiled: `re` finds one of them far faster than it tries the pattern
    at every position. None when a match may begin with a shorter string or too many."""
    try:
        prefixes, _whole = _extend({""}, list(parser.parse(pattern, flags)))
    except _Broad:
        return None
    if not prefixes or min(len(prefix) for prefix in prefixes) < 2:
        return None  # one character is found nearly everywhere
    return re.compile("(?i)(?:" + "|".join(re.escape(p) for p in sorted(prefixes, key=lambda p: (-len(p), p))) + ")")


def without_lead(pattern: str) -> str:
    """`pattern` without gitleaks' generic lead (`[\\w.-]{0,50}?` before the keyword, maybe twice).

    The lead is lazy and matches only name characters: a match beginning before the keyword
    holds the same keyword occurrence, the same rest and the same groups as the match beginning
    at the keyword, and the leftmost keyword with a match is the one the leftmost start leads
    to; only where a match begins changes (the value found does not). Patterns with another
    branch beside the lead's (`…|\\b(ATATT3…)`) are left as they are: there the first start
    decides which branch matches."""
    flags = "(?i)" if pattern.startswith("(?i)") else ""
    rest = pattern[len(flags) :]
    if not rest.startswith(_LEAD):
        return pattern
    rest = rest[len(_LEAD) :]
    if rest.startswith("(?i:" + _LEAD):
        rest = "(?i:" + rest[len("(?i:" + _LEAD) :]
    stripped = flags + rest
    return pattern if _top_level_branch(stripped) else stripped


def _top_level_branch(pattern: str) -> bool:
    """Whether `pattern` has a `|` outside every group (the parser inlines plain groups, so
    this reads the text: escapes, character classes and parentheses)."""
    depth, index, size = 0, 0, len(pattern)
    while index < size:
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if char == "[":  # a class: `]` first (maybe after `^`) is a member
            index += 1
            index += pattern[index : index + 1] == "^"
            index += pattern[index : index + 1] == "]"
            while index < size and pattern[index] != "]":
                index += 2 if pattern[index] == "\\" else 1
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            return True
        index += 1
    return False


_UNBOUNDED = 1 << 30


def forward_reach(pattern: str, flags: int = 0) -> int | None:
    """At most how many characters from where a match attempt begins `pattern` reads (what it
    consumes, what its look-aheads read, and one character past each assertion such as `\\b` or
    `$`): an attempt at `p` reads nothing at `p + forward_reach` or after (look-behinds read
    backwards only). None when it is unbounded (a `*`, a `+`, a group reference)."""
    found = _reach(list(parser.parse(pattern, flags)))
    return found if found < _UNBOUNDED else None


def _reach(items: list[tuple[Any, Any]]) -> int:
    """An upper bound of the characters a sequence reads from its start (summed: an assertion's
    reading counted as if it consumed what it reads, which only overstates)."""
    total = 0
    for op, value in items:
        if op in (constants.LITERAL, constants.NOT_LITERAL, constants.IN, constants.ANY, constants.AT):
            total += 1  # (an assertion such as `\b` or `$` reads the character after it)
        elif op in (constants.MAX_REPEAT, constants.MIN_REPEAT, constants.POSSESSIVE_REPEAT):
            high = value[1]
            if high == constants.MAXREPEAT:
                return _UNBOUNDED
            total += high * _reach(list(value[2]))
        elif op is constants.SUBPATTERN:
            total += _reach(list(value[3]))
        elif op is constants.ATOMIC_GROUP:
            total += _reach(list(value))
        elif op is constants.BRANCH:
            total += max(_reach(list(branch)) for branch in value[1])
        elif op in (constants.ASSERT, constants.ASSERT_NOT):
            direction, inner = value
            if direction > 0:  # a look-ahead; a look-behind reads before where it stands
                total += _reach(list(inner))
        else:  # a group reference, a conditional, anything not listed: not bounded here
            return _UNBOUNDED
        if total >= _UNBOUNDED:
            return _UNBOUNDED
    return total

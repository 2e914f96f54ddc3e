"""Error signals in tool results: the cheap text evidence that the agent's last action failed.

EdgeWise found error recovery to be where the cloud matters most, so the gateway notes these
signals for every step and the judge reads them as features.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# Each signal: a name and a pattern. Kept few and specific: a false alarm costs a cloud call.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("traceback", re.compile(r"Traceback \(most recent call last\)")),
    (
        "nonzero_exit",
        re.compile(
            r"(?:exit(?:ed)? (?:code|status)[:= ]*[1-9]\d*|<returncode>\s*[1-9]\d*\s*</returncode>|"
            r"returncode[\"']?\s*[:=]\s*[1-9]\d*)",
            re.IGNORECASE,
        ),
    ),
    ("command_not_found", re.compile(r"command not found|No such file or directory|not recognized as")),
    ("test_failure", re.compile(r"(?:\b\d+ failed\b|\bFAILED\b|AssertionError|\bFAIL:)")),
    ("error", re.compile(r"(?m)^(?:\w+Error|Error|error)(?:\[\w+\])?: ")),
    ("syntax_error", re.compile(r"SyntaxError|IndentationError|unexpected token")),
    ("permission_denied", re.compile(r"Permission denied|EACCES")),
    ("timeout", re.compile(r"timed out|Timeout(?:Error|Expired)")),
)

SIGNALS: tuple[str, ...] = tuple(name for name, _ in _PATTERNS)


def error_signals(text: str) -> list[str]:
    """The names of the signals found in a tool result, in a fixed order."""
    if not text:
        return []
    return [name for name, pattern in _PATTERNS if pattern.search(text)]


# ---- the same signals, fast -----------------------------------------------------------------
# The judge scans tool output on every step, within a budget of microseconds. A pattern that
# opens with `\b`, a class or an alternation makes the regex engine try every position (tens to
# hundreds of µs for 4 KB); one that opens with a literal is found by a fast scan. So each
# pattern above is restated below as literal searches plus explicit boundary checks, giving
# exactly what `error_signals` gives (tests/judge/test_signals.py holds them to that).

_EXIT_LITERAL_LED = (
    re.compile(r"exit(?:ed)? (?:code|status)[:= ]*[1-9]"),
    re.compile(r"<returncode>\s*[1-9]\d*\s*</returncode>"),
    re.compile(r"returncode[\"']?\s*[:=]\s*[1-9]"),
)
_FAILED_COUNT = re.compile(r" failed\b")
_FAILED_WORD = re.compile(r"FAILED\b")
_ERROR_LINE = re.compile(r"rror(?:\[\w+\])?: ")
_WORD = re.compile(r"\w")
_WORDS = re.compile(r"\w*")


def _is_word(char: str) -> bool:
    return _WORD.match(char) is not None


def _after_boundary(text: str, index: int) -> bool:
    """`\\b` before text[index], a word character: the start, or a non-word character before it."""
    return index == 0 or not _is_word(text[index - 1])


def _nonzero_exit(text: str) -> bool:
    lowered = text.lower()  # IGNORECASE, restated: the patterns hold no upper-case letter
    if "exit" not in lowered and "returncode" not in lowered:
        return False
    return any(pattern.search(lowered) for pattern in _EXIT_LITERAL_LED)


def _test_failure(text: str) -> bool:
    if "AssertionError" in text:
        return True
    if " failed" in text:
        for match in _FAILED_COUNT.finditer(text):  # \b\d+ failed\b
            start = match.start()
            while start > 0 and text[start - 1].isdecimal():
                start -= 1
            if start < match.start() and _after_boundary(text, start):
                return True
    if "FAILED" in text and any(_after_boundary(text, m.start()) for m in _FAILED_WORD.finditer(text)):
        return True
    index = text.find("FAIL:")
    while index >= 0:
        if _after_boundary(text, index):
            return True
        index = text.find("FAIL:", index + 1)
    return False


def _error_line(text: str) -> bool:
    """(?m)^(?:\\w+Error|Error|error)(?:\\[\\w+\\])?:"""
    if "rror" not in text:
        return False
    for match in _ERROR_LINE.finditer(text):
        first = match.start() - 1  # the E or e before "rror"
        if first < 0 or text[first] not in "Ee":
            continue
        line_start = text.rfind("\n", 0, first) + 1
        # `\w+Error`: every character from the line's start to the E is a word character (one
        # native match over the range, not one per character).
        if line_start == first or (text[first] == "E" and _WORDS.fullmatch(text, line_start, first) is not None):
            return True
    return False


_QUICK: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("traceback", lambda text: "Traceback (most recent call last)" in text),
    ("nonzero_exit", _nonzero_exit),
    (
        "command_not_found",
        lambda text: "command not found" in text or "No such file or directory" in text or "not recognized as" in text,
    ),
    ("test_failure", _test_failure),
    ("error", _error_line),
    ("syntax_error", lambda text: "SyntaxError" in text or "IndentationError" in text or "unexpected token" in text),
    ("permission_denied", lambda text: "Permission denied" in text or "EACCES" in text),
    ("timeout", lambda text: "timed out" in text or "TimeoutError" in text or "TimeoutExpired" in text),
)


def quick_error_signals(text: str) -> list[str]:
    """What `error_signals` returns, in the same order, at a fraction of the cost."""
    if not text:
        return []
    return [name for name, found in _QUICK if found(text)]

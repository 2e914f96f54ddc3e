"""Error signals in tool results: the cheap text evidence that the agent's last action failed.

EdgeWise found error recovery to be where the cloud matters most, so the gateway notes these
signals for every step and the judge reads them as features.
"""

from __future__ import annotations

import re

# Each signal: a name and a pattern. Kept few and specific: a false alarm costs a cloud call.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("traceback", re.compile(r"Traceback \(most recent call last\)")),
    ("nonzero_exit", re.compile(
        r"(?:exit(?:ed)? (?:code|status)[:= ]*[1-9]\d*|<returncode>\s*[1-9]\d*\s*</returncode>|"
        r"returncode[\"']?\s*[:=]\s*[1-9]\d*)", re.IGNORECASE)),
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

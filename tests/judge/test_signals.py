"""The fast restatement of the error signals gives exactly what the regex patterns give."""

from __future__ import annotations

import random

import pytest

from judge.signals import error_signals, quick_error_signals

FRAGMENTS = [
    "Traceback (most recent call last)",
    "exit code 1",
    "Exit Status: 2",
    "exited code 0",
    "EXIT CODE 3",
    "[Command finished with exit code 0]",
    "<returncode>1</returncode>",
    "<returncode> 0 </returncode>",
    'returncode": 2',
    "returncode=0",
    "command not found",
    "No such file or directory",
    "not recognized as",
    "3 failed",
    "a3 failed",
    "_3 failed",
    "3 failedx",
    " failed",
    "FAILED",
    "xFAILED",
    "FAILEDx",
    "AssertionError",
    "FAIL:",
    "xFAIL:",
    "error: ",
    "Error: ",
    "ValueError: ",
    "ValueError[E1]: ",
    "my error: ",
    "x.Error: ",
    "error[x]: ",
    "errors: ",
    "SyntaxError",
    "IndentationError",
    "unexpected token",
    "Permission denied",
    "EACCES",
    "timed out",
    "TimeoutError",
    "TimeoutExpired",
    "Timeout",
    "\n",
    "\n",
    " ",
    "a",
    "1",
    "_",
    ":",
    "é",
    "٣",
    "-",
    "\r\n",
]


def test_quick_signals_equal_the_patterns_on_a_fuzzed_corpus() -> None:
    rng = random.Random(1234)
    for _ in range(30_000):
        text = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 8)))
        assert quick_error_signals(text) == error_signals(text), repr(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("all good\n3 passed in 0.1s", []),
        ("=== 2 failed, 3 passed ===\nFAILED tests/test_a.py::test_x - AssertionError", ["test_failure"]),
        ("Traceback (most recent call last):\n  File x\nKeyError: 'a'\n", ["traceback", "error"]),
        ("bash: foo: command not found\n[Command finished with exit code 127]", ["nonzero_exit", "command_not_found"]),
        ("error: the old text was not found in a.py", ["error"]),
    ],
)
def test_examples(text: str, expected: list[str]) -> None:
    assert quick_error_signals(text) == expected == error_signals(text)

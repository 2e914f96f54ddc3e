"""Demo tasks that repair something: a failing test, a missing-key crash."""

from __future__ import annotations

from sim.tasks import Check, Task, edit, read, run_tests, search, submit, write

_STATS = '''"""Small statistics helpers used by the nightly reporting job."""

from __future__ import annotations


def mean(values: list[float]) -> float:
    if not values:
        raise ValueError("mean of an empty list")
    return sum(values) / len(values)


def median(values: list[float]) -> float:
    if not values:
        raise ValueError("median of an empty list")
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle]


def spread(values: list[float]) -> float:
    """Largest minus smallest value; 0 for a single value."""
    return max(values) - min(values)
'''

_STATS_TEST = """from src.stats import mean, median


def test_mean() -> None:
    assert mean([1, 2, 3]) == 2


def test_median_odd() -> None:
    assert median([3, 1, 2]) == 2


def test_median_even() -> None:
    assert median([4, 1, 3, 2]) == 2.5
"""

_MEDIAN_FIX = """    if len(ordered) % 2 == 0:
        return (ordered[middle - 1] + ordered[middle]) / 2
    return ordered[middle]
"""

FIX_MEDIAN = Task(
    id="fix-median",
    title="fix a failing test",
    prompt="The test suite fails on median() for even-length lists. Find the bug and fix it.",
    files={"src/stats.py": _STATS, "tests/test_stats.py": _STATS_TEST},
    plan=(
        run_tests(expect_fail=True),
        read("src/stats.py"),
        edit(
            "src/stats.py",
            "    return ordered[middle]\n",
            _MEDIAN_FIX,
            _MEDIAN_FIX.replace("middle - 1", "middle + 1"),
        ),
        run_tests(),
        submit("median() now averages the two middle values of an even-length list."),
    ),
    checks=(
        Check(
            "tests/test_stats.py::test_median_even",
            "src/stats.py",
            "(ordered[middle - 1] + ordered[middle]) / 2",
            failure="AssertionError: assert 3 == 2.5",
        ),
    ),
)


_PAGES = '''"""Pagination of query results; pages are numbered from 1."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def page_count(total: int, size: int) -> int:
    return max(1, -(-total // size))


def paginate(items: Sequence[T], page: int, size: int) -> list[T]:
    if page < 1:
        raise ValueError("pages are numbered from 1")
    start = page * size
    return list(items[start : start + size])
'''

FIX_PAGINATION = Task(
    id="fix-pagination",
    title="recover from a failing test",
    prompt="tests/test_pages.py fails: the first page of results is empty. Fix it.",
    files={"src/pages.py": _PAGES},
    plan=(
        run_tests(expect_fail=True),
        search("def paginate"),
        read("src/pages.py"),
        edit(
            "src/pages.py",
            "    start = page * size\n",
            "    start = (page - 1) * size\n",
            "    start = (page - 1) * size + 1\n",
        ),
        run_tests(),
        submit("paginate() now starts page 1 at the first item."),
    ),
    checks=(
        Check(
            "tests/test_pages.py::test_first_page",
            "src/pages.py",
            "    start = (page - 1) * size\n",
            failure="AssertionError: assert [] == [1, 2, 3]",
        ),
    ),
)


_LOADER = '''"""Reads settings from the environment-specific dict built at start-up."""

from __future__ import annotations


def setting(config: dict[str, str], key: str, default: str | None = None) -> str | None:
    return config[key]
'''

_LOADER_TEST = """from src.loader import setting


def test_missing_key_gives_default() -> None:
    assert setting({}, "region", "eu-west-1") == "eu-west-1"
"""

MISSING_KEY = Task(
    id="missing-key",
    title="handle a missing key",
    prompt="setting() in src/loader.py raises KeyError for a missing key; it should return the "
    "default. Fix it and add a regression test in tests/test_loader.py.",
    files={"src/loader.py": _LOADER},
    plan=(
        read("src/loader.py"),
        edit(
            "src/loader.py",
            "    return config[key]\n",
            "    return config.get(key, default)\n",
            "    return config.get(key)\n",
        ),
        write("tests/test_loader.py", _LOADER_TEST, _LOADER_TEST.replace('== "eu-west-1"', "is None")),
        run_tests(),
        submit("setting() returns the default for a missing key; regression test added."),
    ),
    checks=(
        Check(
            "tests/test_loader.py::test_missing_key_gives_default",
            "src/loader.py",
            "config.get(key, default)",
            failure="KeyError: 'region'",
        ),
        Check("tests/test_loader.py::test_missing_key_gives_default", "tests/test_loader.py", '== "eu-west-1"'),
    ),
)

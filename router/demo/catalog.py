"""The demo's built-in tasks: small repository chores of 5 to 9 steps each, in the order the demo
takes them. Each has a buggy variant of its edits, the kind of slip a small model makes.
"""

from __future__ import annotations

from router.demo.tasks import Check, Task, edit, read, run_tests, search, submit, write

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

_STATS_TEST = '''from src.stats import mean, median


def test_mean() -> None:
    assert mean([1, 2, 3]) == 2


def test_median_odd() -> None:
    assert median([3, 1, 2]) == 2


def test_median_even() -> None:
    assert median([4, 1, 3, 2]) == 2.5
'''

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
        edit("src/stats.py", "    return ordered[middle]\n", _MEDIAN_FIX, _MEDIAN_FIX.replace("middle - 1", "middle + 1")),
        run_tests(),
        submit("median() now averages the two middle values of an even-length list."),
    ),
    checks=(
        Check("tests/test_stats.py::test_median_even", "src/stats.py", "(ordered[middle - 1] + ordered[middle]) / 2",
              failure="AssertionError: assert 3 == 2.5"),
    ),
)

_TEXT = '''"""Text helpers for titles and log lines."""

from __future__ import annotations

import re

_SPACES = re.compile(r"\\s+")


def normalize_whitespace(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 1] + "…"
'''

_SLUGIFY = '''

def slugify(title: str) -> str:
    """Lower-case words joined by single dashes: "Hello, World!" -> "hello-world"."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
'''

_TEXT_TEST = '''from src.text import slugify


def test_slugify() -> None:
    assert slugify("Hello, World!") == "hello-world"
    assert slugify("  many   spaces ") == "many-spaces"
'''

ADD_SLUGIFY = Task(
    id="add-slugify",
    title="add a function and its test",
    prompt="Add slugify(title) to src/text.py (lower-case words joined by single dashes) and a test "
    "for it in tests/test_text.py.",
    files={"src/text.py": _TEXT},
    plan=(
        search("slug"),
        read("src/text.py"),
        edit("src/text.py", '    return text[: limit - 1] + "…"\n', '    return text[: limit - 1] + "…"\n' + _SLUGIFY,
             '    return text[: limit - 1] + "…"\n' + _SLUGIFY.replace('.strip("-")', "")),
        write("tests/test_text.py", _TEXT_TEST, _TEXT_TEST.replace('"many-spaces"', '"-many-spaces-"')),
        run_tests(),
        submit("Added slugify() with a test."),
    ),
    checks=(
        Check("tests/test_text.py::test_slugify", "src/text.py", '.strip("-")'),
        Check("tests/test_text.py::test_slugify", "tests/test_text.py", '== "many-spaces"'),
    ),
)

_SERVICE_YAML = """service: billing
listen: 0.0.0.0:8443
upstream:
  url: https://payments.internal/api
  timeout_s: 30
  retries: 3
log_level: info
"""

_BILLING = '''"""Client of the payments API used by the billing service."""

from __future__ import annotations

import httpx

DEFAULT_TIMEOUT_S = 30.0


def make_client(base_url: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> httpx.Client:
    return httpx.Client(base_url=base_url, timeout=timeout_s)
'''

BUMP_TIMEOUT = Task(
    id="bump-timeout",
    title="update a config and its default",
    prompt="Payments calls time out under load. Raise the upstream timeout of the billing service "
    "from 30 s to 60 s, in config/service.yaml and in the client's default.",
    files={"config/service.yaml": _SERVICE_YAML, "src/billing_client.py": _BILLING},
    plan=(
        read("config/service.yaml"),
        edit("config/service.yaml", "  timeout_s: 30\n", "  timeout_s: 60\n", "  timeout_s: 60s\n"),
        search("DEFAULT_TIMEOUT_S"),
        read("src/billing_client.py"),
        edit("src/billing_client.py", "DEFAULT_TIMEOUT_S = 30.0\n", "DEFAULT_TIMEOUT_S = 60.0\n",
             "DEFAULT_TIMEOUT_S = 6.0\n"),
        run_tests(),
        submit("Timeout raised to 60 s in the config and the client default."),
    ),
    checks=(
        Check("tests/test_config.py::test_timeout", "config/service.yaml", "  timeout_s: 60\n",
              failure="ValueError: timeout_s must be a number of seconds"),
        Check("tests/test_billing.py::test_default_timeout", "src/billing_client.py", "DEFAULT_TIMEOUT_S = 60.0"),
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
        edit("src/pages.py", "    start = page * size\n", "    start = (page - 1) * size\n",
             "    start = (page - 1) * size + 1\n"),
        run_tests(),
        submit("paginate() now starts page 1 at the first item."),
    ),
    checks=(
        Check("tests/test_pages.py::test_first_page", "src/pages.py", "    start = (page - 1) * size\n",
              failure="AssertionError: assert [] == [1, 2, 3]"),
    ),
)

_USERS = '''"""User records, read from the accounts database."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class User:
    id: int
    name: str


def fetch_user(db: dict[int, str], user_id: int) -> User:
    return User(user_id, db[user_id])
'''

_API = '''"""HTTP handlers of the accounts service."""

from src.users import fetch_user


def get_profile(db: dict[int, str], user_id: int) -> dict[str, object]:
    user = fetch_user(db, user_id)
    return {"id": user.id, "name": user.name}
'''

_USERS_TEST = '''from src.users import fetch_user


def test_fetch() -> None:
    assert fetch_user({1: "ada"}, 1).name == "ada"
'''

RENAME = Task(
    id="rename-function",
    title="rename across files",
    prompt="Rename fetch_user to get_user everywhere (module, callers, tests).",
    files={"src/users.py": _USERS, "src/api.py": _API, "tests/test_users.py": _USERS_TEST},
    plan=(
        search("fetch_user"),
        read("src/users.py"),
        edit("src/users.py", "def fetch_user(", "def get_user(", "def get_usr("),
        read("src/api.py"),
        edit("src/api.py", "from src.users import fetch_user\n", "from src.users import get_user\n",
             "from src.users import get_user as fetch_user\n"),
        edit("src/api.py", "    user = fetch_user(db, user_id)\n", "    user = get_user(db, user_id)\n",
             "    user = get_user(user_id, db)\n"),
        write("tests/test_users.py", _USERS_TEST.replace("fetch_user", "get_user"), _USERS_TEST),
        run_tests(),
        submit("Renamed fetch_user to get_user in src/ and tests/."),
    ),
    checks=(
        Check("tests/test_users.py::test_get", "src/users.py", "def get_user(", failure="ImportError"),
        Check("tests/test_api.py::test_profile", "src/api.py", "    user = get_user(db, user_id)\n",
              absent="fetch_user", failure="NameError: name 'fetch_user' is not defined"),
        Check("tests/test_users.py::test_get", "tests/test_users.py", "get_user", absent="fetch_user",
              failure="ImportError: cannot import name 'fetch_user'"),
    ),
)

_LOADER = '''"""Reads settings from the environment-specific dict built at start-up."""

from __future__ import annotations


def setting(config: dict[str, str], key: str, default: str | None = None) -> str | None:
    return config[key]
'''

_LOADER_TEST = '''from src.loader import setting


def test_missing_key_gives_default() -> None:
    assert setting({}, "region", "eu-west-1") == "eu-west-1"
'''

MISSING_KEY = Task(
    id="missing-key",
    title="handle a missing key",
    prompt="setting() in src/loader.py raises KeyError for a missing key; it should return the "
    "default. Fix it and add a regression test in tests/test_loader.py.",
    files={"src/loader.py": _LOADER},
    plan=(
        read("src/loader.py"),
        edit("src/loader.py", "    return config[key]\n", "    return config.get(key, default)\n",
             "    return config.get(key)\n"),
        write("tests/test_loader.py", _LOADER_TEST, _LOADER_TEST.replace("== \"eu-west-1\"", "is None")),
        run_tests(),
        submit("setting() returns the default for a missing key; regression test added."),
    ),
    checks=(
        Check("tests/test_loader.py::test_missing_key_gives_default", "src/loader.py",
              "config.get(key, default)", failure="KeyError: 'region'"),
        Check("tests/test_loader.py::test_missing_key_gives_default", "tests/test_loader.py",
              '== "eu-west-1"'),
    ),
)

CATALOG: tuple[Task, ...] = (FIX_MEDIAN, ADD_SLUGIFY, BUMP_TIMEOUT, FIX_PAGINATION, RENAME, MISSING_KEY)

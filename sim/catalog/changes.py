"""Demo tasks that change working code: a new function, a config value, a rename."""

from __future__ import annotations

from sim.tasks import Check, Task, edit, read, run_tests, search, submit, write

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

_TEXT_TEST = """from src.text import slugify


def test_slugify() -> None:
    assert slugify("Hello, World!") == "hello-world"
    assert slugify("  many   spaces ") == "many-spaces"
"""

ADD_SLUGIFY = Task(
    id="add-slugify",
    title="add a function and its test",
    prompt="Add slugify(title) to src/text.py (lower-case words joined by single dashes) and a test "
    "for it in tests/test_text.py.",
    files={"src/text.py": _TEXT},
    plan=(
        search("slug"),
        read("src/text.py"),
        edit(
            "src/text.py",
            '    return text[: limit - 1] + "…"\n',
            '    return text[: limit - 1] + "…"\n' + _SLUGIFY,
            '    return text[: limit - 1] + "…"\n' + _SLUGIFY.replace('.strip("-")', ""),
        ),
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
        edit(
            "src/billing_client.py",
            "DEFAULT_TIMEOUT_S = 30.0\n",
            "DEFAULT_TIMEOUT_S = 60.0\n",
            "DEFAULT_TIMEOUT_S = 6.0\n",
        ),
        run_tests(),
        submit("Timeout raised to 60 s in the config and the client default."),
    ),
    checks=(
        Check(
            "tests/test_config.py::test_timeout",
            "config/service.yaml",
            "  timeout_s: 60\n",
            failure="ValueError: timeout_s must be a number of seconds",
        ),
        Check("tests/test_billing.py::test_default_timeout", "src/billing_client.py", "DEFAULT_TIMEOUT_S = 60.0"),
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

_USERS_TEST = """from src.users import fetch_user


def test_fetch() -> None:
    assert fetch_user({1: "ada"}, 1).name == "ada"
"""

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
        edit(
            "src/api.py",
            "from src.users import fetch_user\n",
            "from src.users import get_user\n",
            "from src.users import get_user as fetch_user\n",
        ),
        edit(
            "src/api.py",
            "    user = fetch_user(db, user_id)\n",
            "    user = get_user(db, user_id)\n",
            "    user = get_user(user_id, db)\n",
        ),
        write("tests/test_users.py", _USERS_TEST.replace("fetch_user", "get_user"), _USERS_TEST),
        run_tests(),
        submit("Renamed fetch_user to get_user in src/ and tests/."),
    ),
    checks=(
        Check("tests/test_users.py::test_get", "src/users.py", "def get_user(", failure="ImportError"),
        Check(
            "tests/test_api.py::test_profile",
            "src/api.py",
            "    user = get_user(db, user_id)\n",
            absent="fetch_user",
            failure="NameError: name 'fetch_user' is not defined",
        ),
        Check(
            "tests/test_users.py::test_get",
            "tests/test_users.py",
            "get_user",
            absent="fetch_user",
            failure="ImportError: cannot import name 'fetch_user'",
        ),
    ),
)

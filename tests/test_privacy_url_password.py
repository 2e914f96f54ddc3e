"""A password found inside a URL (`redis://:pw@host`) is a value of its own: printed bare
elsewhere in what goes to the cloud (`docker compose config`'s `--requirepass` list item, the
same password in another file), it is replaced there too, and put back in the answer."""

from __future__ import annotations

import orjson
import pytest

from router.privacy.url_parts import url_passwords
from router.result import Answer
from tests.inprocess import engine_settings, in_process

PASSWORD = "Qm7#x9Lp2vZ!"
COMPOSE = (
    "services:\n  cache:\n    environment:\n"
    f"      REDIS_URL: redis://:{PASSWORD}@cache:6379/0\n"
    f"    command:\n    - redis-server\n    - --requirepass\n    - {PASSWORD}\n"
)


@pytest.mark.parametrize(
    ("url", "passwords"),
    [
        (f"redis://:{PASSWORD}@cache:6379", [PASSWORD]),
        ("postgres://app:p%40ss%3Aw0rd@db:5432", ["p%40ss%3Aw0rd", "p@ss:w0rd"]),
        ("mongodb://admin:abc@db", []),  # too short to be replaced wherever it appears
        ("https://user@example.org", []),
        ("not a url", []),
    ],
)
def test_the_password_of_a_url(url: str, passwords: list[str]) -> None:
    assert url_passwords(url) == passwords


async def test_a_urls_password_printed_bare_elsewhere_does_not_reach_the_cloud() -> None:
    settings = engine_settings(routes={"tandem": {"strategy": "cloud", "privacy": "redact"}})
    async with in_process(settings) as env:
        env.cloud.push({"text": "The cache password is [SECRET_ASSIGNMENT_1]."})
        result = await env.run(messages=[{"role": "user", "content": f"Why does this fail?\n{COMPOSE}"}])
        sent = orjson.dumps(env.cloud.received[0].body).decode()
        assert PASSWORD not in sent, sent
        assert isinstance(result, Answer)
        assert result.completion["choices"][0]["message"]["content"] == f"The cache password is {PASSWORD}."

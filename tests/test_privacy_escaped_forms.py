"""Secrets as tools print them inside JSON (quotes escaped), curl's header forms, and the
stand-ins and empty values that are not secrets. Forms from gitleaks' rule examples (MIT); the
values are this file's own."""

from __future__ import annotations

import json
import re

import pytest

from router.privacy.detect import detect
from tools.secret_rules import to_python

SNYK = "3f2a9c1e-7b4d-4e8a-9c2f-5d1e8b7a6c30"
TOKEN = "9c1e7b4d2f8a6c30e5d1b7a4c9f2e8d1a6b3c5f7"
PASSWORD = "Tq8#mZ2 v!Lp0x"  # a space inside: a quoted value may hold one


def _found(text: str) -> set[str]:
    return {f.value for f in detect(text)}


def _json_tool_result(line: str) -> str:
    return json.dumps({"output": line})


@pytest.mark.parametrize(
    ("line", "value"),
    [
        (f'snyk_api_token = "{SNYK}"', SNYK),
        (f'DB_PASSWORD="{PASSWORD}"', PASSWORD),
        (f'curl -H "Authorization: Token {TOKEN}" https://api.example.com/v2/items', TOKEN),
        (f"curl --header 'X-Api-Key: {TOKEN}' https://api.example.com", TOKEN),
    ],
)
def test_a_secret_in_a_json_tool_result_is_found_as_written(line: str, value: str) -> None:
    """The tool result holds JSON whose quotes are escaped: the value is found, without the
    backslash of its closing quote, as on the plain line."""
    assert value in _found(line)
    escaped = _json_tool_result(line)
    assert '\\"' in escaped or "'" in line
    findings = [f for f in detect(escaped) if f.value == value]
    assert findings, detect(escaped)
    assert escaped[findings[0].start : findings[0].end] == value


def test_escaped_lines_keep_their_breaks() -> None:
    """`\\n` between JSON-escaped lines is a line break: the second line's assignment stands."""
    text = _json_tool_result(f'HOST="db.internal"\nDB_PASSWORD="{PASSWORD}"\r\nPORT=5432')
    assert PASSWORD in _found(text)


@pytest.mark.parametrize(
    "header",
    [
        f"curl -H 'Authorization: Token {TOKEN}' https://api.example.com",  # single quotes
        f'curl -H "Authorization: Api-Token {TOKEN}" https://api.example.com',  # a later group
        f'curl -L -H "Authorization: {TOKEN}" https://api.example.com',  # no scheme word
    ],
)
def test_curl_header_forms_are_found(header: str) -> None:
    assert TOKEN in _found(header)


@pytest.mark.parametrize(
    "text",
    [
        "GH_TOKEN=ghp_" + "x" * 36,
        "aws_access_key_id = AKIAXXXXXXXXXXXXXXXX",
        "key=AIza" + "a" * 35,
        "SLACK_TOKEN=xoxb-xxxxxxxxxx-xxxxxxxxxxxx",
        "STRIPE_KEY=sk_live_" + "0" * 24,
        "GITHUB_API_KEY=\nDYNATRACE_API_KEY=\n",  # empty values: not the next line's name
        "snowflake.password=\njdbc.snowflake.url=jdbc:snowflake://acme.snowflakecomputing.com\n",
    ],
)
def test_stand_ins_and_empty_values_are_not_findings(text: str) -> None:
    assert detect(text) == []


def test_a_value_on_the_indented_line_below_its_name_is_found() -> None:
    assert "Xy7abQ92kLmP" in _found("password:\n  Xy7abQ92kLmP\n")


def test_a_documented_key_id_stays_a_finding() -> None:
    """AWS's documented example key id is a finding, as before (a key id, not a stand-in)."""
    assert "AKIAIOSFODNN7EXAMPLE" in _found("aws_access_key_id = AKIAIOSFODNN7EXAMPLE")


def test_a_case_flag_before_alternatives_covers_each_of_them() -> None:
    """Go's `(?i)` runs to the end of its group, across `|`: each alternative gets its own
    scoped flag, and none is made to follow the text before the flag."""
    converted = to_python("""(?:"(?i)key: ([a-z]+)"|'(?i)key: ([a-z]+)')""")
    assert re.fullmatch(converted, "'KEY: abc'") is not None
    assert re.fullmatch(converted, '"Key: abc"') is not None
    assert re.fullmatch(converted, "\"'KEY: abc'") is None


def test_a_token_after_an_escaped_line_break_in_a_json_document_is_found() -> None:
    """`"…\\nfo1_…"`: the `n` of the escaped break is not a letter of the token's word."""
    token = "fo1_" + "Zq8mTp2Lx7Vw4Rk9Bn3Hs6Dj1Fg5Cy0Ae8Ui2Ok7Pl4"
    text = json.dumps({"output": "==== deploy ====\n\n" + token + "\n"})
    assert token in _found("==== deploy ====\n\n" + token + "\n")
    assert token in _found(text)


def test_an_escaped_quote_before_a_space_closes_the_value() -> None:
    """`curl -u \\"user:\\" …` in a JSON tool result: the quote after `:` closes (a space
    follows it), as on the plain line."""
    line = 'curl -u "Tq8mZ2vLp0xW:" https://search.internal:9200'
    assert any("Tq8mZ2vLp0xW" in f.value for f in detect(line))
    assert any("Tq8mZ2vLp0xW" in f.value for f in detect(_json_tool_result(line)))

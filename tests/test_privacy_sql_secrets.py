"""Passwords in databases' statements and shells (router/privacy/sql_secrets.py) and the set of
forms that found them missing (benchmarks/privacy/later_sql.py)."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect

PASSWORD = "Kv7#pQ2mZ9xL"
OTHER = "Tg4!wRn8Lq2Z"


def test_the_sql_forms_written_after_the_detectors() -> None:
    # Scored blind once: 42 of 66 values; rules since.
    from benchmarks.privacy import later_forms, later_sql

    found, missed, misses = later_forms.score(3, later_sql.FORMS)
    assert not missed["sql"], misses
    assert found["sql"] == 66


@pytest.mark.parametrize(
    "text",
    [
        f"SET PASSWORD FOR 'report'@'10.0.%' = '{PASSWORD}';",
        f"SET PASSWORD = PASSWORD('{PASSWORD}');",
        f'CREATE USER reporting IDENTIFIED BY "{PASSWORD}" DEFAULT TABLESPACE users;',
        f"EXEC sp_addlogin 'legacy_app', '{PASSWORD}', 'Sales';",
        f'db.changeUserPassword("reporting", "{PASSWORD}")',
        f"127.0.0.1:6379> ACL SETUSER worker on >{PASSWORD} ~jobs:* +@list",
        f"[admins]\nadmin = {PASSWORD}\n",
    ],
)
def test_statement_passwords_are_found(text: str) -> None:
    assert PASSWORD in [f.value for f in detect(text)]


def test_both_of_neo4js_passwords() -> None:
    text = f"ALTER CURRENT USER SET PASSWORD FROM '{OTHER}' TO '{PASSWORD}';"
    assert {OTHER, PASSWORD} <= {f.value for f in detect(text)}


@pytest.mark.parametrize(
    "text",
    [
        "SET password_encryption = 'scram-sha-256';",
        "SET PASSWORD FROM $old TO $new",  # a keyword in capitals was a named constant's value
        "ACL SETUSER alice on ~* +@all",
        'db.changeUserPassword("u", passwordPrompt())',
        "[couchdb]\nuuid = 7a6ee1\n[admins]\n",
        "[log]\nlevel = info\n",
    ],
)
def test_statement_look_alikes(text: str) -> None:
    assert [f for f in detect(text) if f.type == "SECRET_ASSIGNMENT"] == []

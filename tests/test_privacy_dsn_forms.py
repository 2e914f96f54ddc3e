"""Database connection strings in the syntaxes URLs do not cover (RMAN's connections, DB2's and
Informix's `CONNECT TO … USING`) and the set of forms that found them missing
(benchmarks/privacy/later_dsn.py)."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect

PW = "YngFb51yBMWXaSCrUZ"


def test_the_dsn_forms_written_after_the_detectors() -> None:
    # Scored blind once: 48 of 57 values; rules since.
    from benchmarks.privacy import later_dsn, later_forms

    found, missed, misses = later_forms.score(3, later_dsn.FORMS)
    assert not missed["dsn"], misses
    assert found["dsn"] == 57


@pytest.mark.parametrize(
    "text",
    [
        f"rman target sys/{PW}@prod catalog rman/{PW}2@rcat",
        f"db2 connect to SAMPLE user db2inst1 using {PW}",
        f"CONNECT TO 'stores@ol_informix' USER 'informix' USING '{PW}';",
    ],
)
def test_every_password_of_these_logins_is_found(text: str) -> None:
    values = [f.value for f in detect(text)]
    assert PW in values
    if "catalog" in text:
        assert PW + "2" in values


@pytest.mark.parametrize(
    "text",
    [
        "rman target /",
        "db2 connect to SAMPLE user db2inst1 using $DB2PASS",
        "Please connect to the VPN first, then use the jump host.",
    ],
)
def test_dsn_look_alikes(text: str) -> None:
    assert [f for f in detect(text) if f.type == "SECRET_ASSIGNMENT"] == []

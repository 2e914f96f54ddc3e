"""The default kinds in forms written after the detectors (benchmarks/privacy/later_values.py),
and URL-encoded e-mail addresses, the one form that set found missing."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect
from router.privacy.redact import Redactor


def test_the_value_forms_written_after_the_detectors() -> None:
    # Scored blind once: 78 of 81 (the three misses URL-encoded e-mail addresses), then read.
    from benchmarks.privacy import later_people, later_values

    found, missed, wrong = later_people.score(3, later_values.FORMS, later_values.R, later_values.KINDS)
    assert not missed, wrong
    assert found["false"] == 0, wrong
    assert sum(found.values()) == 84  # 81, and since 2026-12-07 a card's security code labelled too


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("GET /api/users?email=TOM.BERG%40mail.fabrikam.de&page=2", "TOM.BERG%40mail.fabrikam.de"),
        ("to=%3Cana.lima%40acme.io%3E&subject=hi", "ana.lima%40acme.io"),
        ("q=priya%2Bbilling%40northwind.example.com", "priya%2Bbilling%40northwind.example.com"),
    ],
)
def test_url_encoded_email_addresses_are_found(text: str, value: str) -> None:
    assert [(f.type, f.value) for f in detect(text)] == [("EMAIL", value)]


@pytest.mark.parametrize(
    "text",
    [
        "npm i %40babel%2Fcore",  # a scoped package: no local part before the `@`
        "https://registry.npmjs.org/%40types%2Fnode",
        "width=100%40px",  # no domain after it
    ],
)
def test_encoded_at_signs_that_are_no_address(text: str) -> None:
    assert not [f for f in detect(text) if f.type == "EMAIL"]


def test_a_url_encoded_address_is_restored_as_written() -> None:
    text = "curl 'https://crm.example.com/search?email=k-tanaka%40contoso.co.uk&limit=5'"
    [finding] = detect(text)
    redactor = Redactor({finding.value: "[EMAIL_1]"})
    redacted, count = redactor.text(text)
    assert count == 1 and "%40" not in redacted and "[EMAIL_1]" in redacted
    assert redactor.restore_text(redacted) == text


def test_the_id_forms_written_after_the_detectors() -> None:
    # benchmarks/privacy/later_ids.py: 20 forms of national ids in their languages' forms,
    # scored blind once: 60 of 60, nothing changed for them.
    from benchmarks.privacy import later_ids, later_people

    found, missed, wrong = later_people.score(3, later_ids.FORMS, later_ids.R, later_ids.KINDS)
    assert not missed and found["false"] == 0, wrong
    assert found["NATIONAL_ID"] + found["US_SSN"] == 60

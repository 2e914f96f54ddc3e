"""Identity documents' numbers (passports, driving licences) after the words that name them: in
prose, in key/value forms and in other languages; never a software licence, a version or a date."""

from __future__ import annotations

import pytest

from router.privacy import detect as detection
from router.privacy.detect import detect


def _found(text: str) -> list[tuple[str, str]]:
    return [(finding.type, finding.value) for finding in detect(text)]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("My driver's license number is 6940579", "6940579"),
        ("my driver’s license number is 2270-66-1551", "2270-66-1551"),
        ("Driver's License: F162823540116 (CA)", "F162823540116"),
        ("driving licence no. MORGA753116SM9IJ", "MORGA753116SM9IJ"),
        ("Passport: X1234567, expires 2027-05-01", "X1234567"),
        ("passport number 533380006 issued in Ottawa", "533380006"),
        ('{"passportNumber": "C01X00T47", "nationality": "DE"}', "C01X00T47"),
        ("user_passport_no: 533380006", "533380006"),
        ("DL# 123456789", "123456789"),
        ("licence number: D1234-56789-01234", "D1234-56789-01234"),
        ("Führerschein-Nr. B072RRE2I55", "B072RRE2I55"),
        ("numéro de passeport : 18AV45671", "18AV45671"),
    ],
)
def test_a_document_number_after_its_label_is_found(text: str, value: str) -> None:
    assert ("NATIONAL_ID", value) in _found(text)


@pytest.mark.parametrize(
    "text",
    [
        "passport expires 2027-05-01",  # a date
        "passport renewed in 2024",  # a year
        "License: MIT 2020",  # a software licence names no document
        "The license key is ABCD-1234-EFGH-5678",
        "Copyright 2019 Apache License 2.0, see LICENSE-2.0.txt",
        "We use passport.js 0.6.0 with 1234567 users",  # words between the label and the number
        "passport 2.5.0 released 20240101",
        "download passport-2.3.1234.tar.gz",
        "passport scan attached, ticket 12345678",
        "passport: ABCDEFGH",  # no digits
    ],
)
def test_what_is_no_document_number_is_not_found(text: str) -> None:
    assert not [kind for kind, _value in _found(text) if kind == "NATIONAL_ID"]


def test_found_the_same_without_hyperscan() -> None:
    """Hyperscan's core for the labels and the exact patterns over the whole text agree."""
    text = "Passport: X1234567. My driver's license number is 6940579; passport renewed in 2024."
    assert detection._ENGINE is not None
    fast = [(finding.type, finding.value) for finding in detect(text)]
    slow = [(finding.type, finding.value) for finding in detection._detect_all(text)]
    assert fast == slow == [("NATIONAL_ID", "X1234567"), ("NATIONAL_ID", "6940579")]

"""Detectors: every type found in realistic text, look-alikes left alone."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect

POSITIVES = [
    ("EMAIL", "reply to jane.doe+billing@mail.example.co.uk today", "jane.doe+billing@mail.example.co.uk"),
    ("PHONE", "call +44 20 7946 0958 after 5", "+44 20 7946 0958"),
    ("PHONE", "US office: (415) 555-2671", "(415) 555-2671"),
    ("CARD", "card 4111-1111-1111-1111 exp 12/29", "4111-1111-1111-1111"),
    ("CARD", '{"pan": "5555555555554444"}', "5555555555554444"),
    ("IBAN", "IBAN: DE89 3704 0044 0532 0130 00", "DE89 3704 0044 0532 0130 00"),
    ("IBAN", "iban=GB82WEST12345698765432;", "GB82WEST12345698765432"),
    # As people type one into a chat: all in lower case (the same checksum and registry format).
    ("IBAN", "my iban is gb82west12345698765432 thanks", "gb82west12345698765432"),
    ("IBAN", "pay to de89 3704 0044 0532 0130 00 today", "de89 3704 0044 0532 0130 00"),
    ("US_SSN", "SSN 078-05-1120 on file", "078-05-1120"),
    ("NATIONAL_ID", "身份证 11010519491231002X", "11010519491231002X"),
    ("NATIONAL_ID", "DNI 12345678Z", "12345678Z"),
    ("IP_ADDRESS", "ssh root@10.0.12.7 -p 22", "10.0.12.7"),
    ("IP_ADDRESS", "listen [2001:db8:85a3::8a2e:370:7334]:443", "2001:db8:85a3::8a2e:370:7334"),
    ("URL_CREDENTIALS", "DATABASE_URL=postgres://app:hunter2x@db:5432/prod", "postgres://app:hunter2x@db:5432"),
    ("CLOUD_KEY", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("CODE_TOKEN", "GH_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a", "ghp_16C7e42F292c6912E7710c838347Ae178B4a"),
    ("AI_KEY", 'OPENAI_API_KEY="sk-proj-Abc123Def456Ghi789Jkl012Mno345"', "sk-proj-Abc123Def456Ghi789Jkl012Mno345"),
    ("MESSAGING_TOKEN", "token: xoxb-1234567890-abcdefghijklmn", "xoxb-1234567890-abcdefghijklmn"),
    (
        "PAYMENT_KEY",
        "SQUARE_APPLICATION_SECRET=sq0csp-Jq7mZ2vLp0xWt4Rk9Bn3Hs6Dj1Fg5Cy0Ae8Ui2Ok7Pl",
        "sq0csp-Jq7mZ2vLp0xWt4Rk9Bn3Hs6Dj1Fg5Cy0Ae8Ui2Ok7Pl",
    ),
    ("CLOUD_KEY", "key=AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
    (
        "JWT",
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
    ("SECRET_ASSIGNMENT", 'db_password: "Tr0ub4dor&3xK9q"', "Tr0ub4dor&3xK9q"),
]


@pytest.mark.parametrize(("kind", "text", "value"), POSITIVES)
def test_found(kind: str, text: str, value: str) -> None:
    found = [(f.type, f.value) for f in detect(text)]
    assert (kind, value) in found, found


def test_private_key_block() -> None:
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nq9x0\n-----END RSA PRIVATE KEY-----"
    assert [(f.type, f.value) for f in detect(f"key file:\n{block}\n")] == [("PRIVATE_KEY", block)]


LOOKALIKES = [
    "version 1.2.3.4 released on 2024-01-15",
    "order 4111111111111112 (fails Luhn)",
    "commit 4f3a2b1c9d8e7f60a1b2c3d4e5f60718293a4b5c",
    "uuid 123e4567-e89b-12d3-a456-426614174000",
    "at 12:30:45 the job ran; slice a[1:2] and dict {'a': 1}",
    "IBAN-like GB00 WEST 1234 5698 7654 32 (bad checksum)",
    "lower-case look-alikes gb00west12345698765432 (bad checksum) and Gb82West12345698765432 (mixed case)",
    "hex ids de89a70400440532013000 be12345678901234 ad12cd34ef567890ab12cd34",
    "SSN-like 000-12-3456 and 666-12-3456",
    "password: ${DB_PASSWORD} and token = os.environ['TOKEN'] and api_key: changeme",
    "placeholder [EMAIL_1] and [CARD_2] stay",
    "mailto is an @ sign alone, user@localhost",
    "sk-short and ghp_tooShort",
    "python3.11 -m pytest tests/test_x.py::test_a 2>&1 | tail -n 20",
    "Timestamp 1732891234567 and duration 3600000",
]


@pytest.mark.parametrize("text", LOOKALIKES)
def test_lookalikes_are_not_found(text: str) -> None:
    assert detect(text) == []


def test_bad_input_never_crashes() -> None:
    assert detect("") == []
    assert detect("\udcff broken surrogate a@b.example") != []
    huge = ("x" * 1000 + " jane@example.com ") * 1000
    assert len(detect(huge)) == 1000


def test_addresses_that_name_no_host_are_not_exposure() -> None:
    assert detect("listen: 0.0.0.0:8443, health on 127.0.0.1:8080 and [::1]:9000") == []

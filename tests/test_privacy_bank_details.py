"""Bank details and card security codes beside their labels (router/privacy/bank_details.py),
their columns (id_columns.py), and the set of forms that found them missing
(benchmarks/privacy/later_banking.py)."""

from __future__ import annotations

import pytest

from router.privacy.bank_details import routing_number
from router.privacy.detect import detect

ROUTING = "021000021"  # a real bank's published routing number: its check holds
ACCOUNT = "4402197766"


def test_the_banking_forms_written_after_the_detectors() -> None:
    # Scored blind once: 3 of 75 values; rules since.
    from benchmarks.privacy import later_banking, later_forms

    found, missed, misses = later_forms.score(3, later_banking.FORMS)
    assert not missed["banking"], misses
    assert found["banking"] == 75


def test_a_routing_number_is_told_by_its_check_and_prefix() -> None:
    assert routing_number(ROUTING) and routing_number("011000015")
    assert not routing_number("021000022")  # the check digit off
    assert not routing_number("991000011")  # no Federal Reserve district 99


@pytest.mark.parametrize(
    ("text", "value", "kind"),
    [
        (f"Routing number: {ROUTING}\nAccount number: {ACCOUNT}", ROUTING, "IBAN"),
        (f"Routing number: {ROUTING}\nAccount number: {ACCOUNT}", ACCOUNT, "IBAN"),
        (f"ABA/Routing: {ROUTING}", ROUTING, "IBAN"),
        (f"refund it to my checking account {ACCOUNT}, routing {ROUTING}", ACCOUNT, "IBAN"),
        (f'{{"routing_number": "{ROUTING}", "account_number": "{ACCOUNT}"}}', ACCOUNT, "IBAN"),
        (f"Acct #: {ACCOUNT}", ACCOUNT, "IBAN"),
        ("Sort code 20-00-00, Account number 31926819", "20-00-00", "IBAN"),
        ("BSB: 062-000\nAccount: 123456780", "123456780", "IBAN"),
        ("BSB: 062-000\nAccount: 123456780", "062-000", "IBAN"),
        ("Card: 4111 1111 1111 1111\nExp: 09/27\nCVV: 381", "381", "CARD"),
        ('{"number": "5555555555554444", "cvc": "907"}', "907", "CARD"),
        ("the amex ends in 0005, security code 4821, please retry", "4821", "CARD"),
        ("EIN: 12-3456789", "12-3456789", "NATIONAL_ID"),
        ("Our federal tax ID number is 45-2817364.", "45-2817364", "NATIONAL_ID"),
        (f"name,routing_number,account_number\nAna,{ROUTING},{ACCOUNT}", ACCOUNT, "IBAN"),
        (f"INSERT INTO accounts (routing_number, account_number) VALUES ('{ROUTING}', '{ACCOUNT}');", ROUTING, "IBAN"),
    ],
)
def test_bank_details_beside_their_labels_are_found(text: str, value: str, kind: str) -> None:
    assert (kind, value) in [(f.type, f.value) for f in detect(text)], detect(text)


@pytest.mark.parametrize(
    "text",
    [
        "AWS account number 123456789012 (prod)",
        '{"aws_account_number": "123456789012", "region": "us-east-1"}',
        '{"UserId": "AIDAEXAMPLE", "Account": "123456789012", "Arn": "arn:aws:iam::123456789012:user/ci"}',
        "Azure account no. 123456789012",
        "Account: 123456789012 in us-east-1",  # no bank's word before it
        "account 12345678 was locked after 5 failed logins",
        "Routing number: 021000022",  # its check does not hold
        "routing table 10.0.0.0/16 has 123456789 packets",
        "Your security code is 4821; it expires in 10 minutes.",  # a one-time code, no card
        "cid=12345 connected",
        "Das ist ein 12-3456789 Teil",  # German: `ein` is a word, not the label
        "Verification took 1234 ms",
        "user_id,account_number\n1,1234",  # too short for an account
    ],
)
def test_look_alikes_are_not_bank_details(text: str) -> None:
    kinds = {"IBAN", "CARD", "NATIONAL_ID"}
    assert [f for f in detect(text) if f.type in kinds and f.rule != "ID_DOCUMENT"] == [], detect(text)

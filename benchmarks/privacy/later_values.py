"""E-mail addresses, phones, cards, IBANs, SSNs, IP addresses and URL credentials (the default
kinds) in forms written after the detectors, scored blind once.

Values are made here with their checks right (Luhn for cards, ISO 7064 for IBANs, valid ranges
for SSNs, libphonenumber's own example numbers per region for phones, formatted as each
country writes them) and set in the forms agents read and people type: API JSON (Twilio's,
Stripe's, a CRM's), URL-encoded query strings, `mailto:` and `tel:` links, Markdown, a log line,
a stack trace's locals, a form's prose, an e-mail's headers, IPv6 in logs and configs, a
connection string. The values are this module's own, not the detectors' examples.

Scored blind, before anything was changed for them (3 rounds, after two mistakes of the forms
were put right: a Mastercard made with a prefix no network issues, IBANs given another
country's length): 78 of 81 (EMAIL 18 of 21, every other kind whole), no false finding. The
misses were URL-encoded e-mail addresses (`?email=ana.lima%40acme.io`): found since (81 of 81;
over ten rounds 270 of 270).

    python -m benchmarks.privacy.later_values [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from urllib.parse import quote

import phonenumbers

from benchmarks.privacy.later_people import Item, collector, set_main

FORMS: list[Callable[[], Item]] = []
# The kinds scored: a finding of another kind (a secret's) is neither a find nor a false one.
KINDS = frozenset({"EMAIL", "PHONE", "CARD", "IBAN", "US_SSN", "NATIONAL_ID", "IP_ADDRESS", "URL_CREDENTIALS"})
R = random.Random(0)  # reseeded per round (`score`)
PHONE_FORMS = {
    "international": phonenumbers.PhoneNumberFormat.INTERNATIONAL,
    "e164": phonenumbers.PhoneNumberFormat.E164,
    "national": phonenumbers.PhoneNumberFormat.NATIONAL,
}


form = collector(FORMS)


def _luhn(body: str) -> str:
    total = 0
    for index, digit in enumerate(reversed(body)):
        value = int(digit) * (2 if index % 2 == 0 else 1)
        total += value - 9 if value > 9 else value
    return body + str((10 - total % 10) % 10)


def card(prefix: str = "4", length: int = 16) -> str:
    return _luhn(prefix + "".join(str(R.randint(0, 9)) for _ in range(length - len(prefix) - 1)))


def iban(country: str, bban_length: int) -> str:
    bban = "".join(str(R.randint(0, 9)) for _ in range(bban_length))
    moved = bban + country + "00"
    number = int("".join(str(int(c, 36)) for c in moved))
    return f"{country}{98 - number % 97:02d}{bban}"


def grouped(value: str, size: int = 4) -> str:
    return " ".join(value[i : i + size] for i in range(0, len(value), size))


def ssn() -> str:
    return f"{R.choice([R.randint(100, 665), R.randint(667, 899)]):03d}-{R.randint(1, 99):02d}-{R.randint(1, 9999):04d}"


def phone(region: str, style: str = "international") -> str:
    kind = R.choice([phonenumbers.PhoneNumberType.MOBILE, phonenumbers.PhoneNumberType.FIXED_LINE])
    example = phonenumbers.example_number_for_type(region, kind)
    assert example is not None
    # Another valid number of the same kind: the example with its last digit changed, kept if valid.
    national = str(example.national_number)
    for _ in range(10):
        candidate = national[:-1] + str(R.randint(0, 9))
        parsed = phonenumbers.parse(f"+{example.country_code}{candidate}", None)
        if phonenumbers.is_valid_number(parsed):
            example = parsed
            break
    return phonenumbers.format_number(example, PHONE_FORMS[style])


def email() -> str:
    user = R.choice(["j.okafor", "mlindqvist", "priya+billing", "TOM.BERG", "ana_lima77", "k-tanaka"])
    domain = R.choice(["northwind.example.com", "acme-corp.io", "mail.fabrikam.de", "contoso.co.uk"])
    return f"{user}@{domain}"


def ipv6() -> str:
    return "2001:db8:" + ":".join(f"{R.randint(0, 0xFFFF):x}" for _ in range(3)) + "::" + f"{R.randint(1, 0xFFFF):x}"


@form
def twilio_json() -> Item:
    to, sender = phone("US", "e164"), phone("GB", "e164")
    return json.dumps({"to": to, "from": sender, "status": "queued", "body": "Your code is 4410"}), [
        ("PHONE", to),
        ("PHONE", sender),
    ]


@form
def crm_contact_json() -> Item:
    mail, mobile = email(), phone("DE")
    body = {"contact": {"email": mail, "mobile": mobile, "company": "Fabrikam"}}
    return json.dumps(body, indent=2), [("EMAIL", mail), ("PHONE", mobile)]


@form
def url_encoded_email() -> Item:
    mail = email()
    return f"GET /api/users?email={quote(mail)}&page=2 HTTP/1.1", [("EMAIL", quote(mail))]


@form
def mailto_link() -> Item:
    mail = email()
    return f"[Contact us](mailto:{mail}?subject=Refund)", [("EMAIL", mail)]


@form
def tel_link() -> Item:
    number = phone("FR")
    href = number.replace(" ", "")
    return f'<a href="tel:{href}">{number}</a>', [("PHONE", href), ("PHONE", number)]


@form
def phones_as_written() -> Item:
    region = R.choice(["IN", "BR", "JP", "FR", "IT", "ES", "MX", "AU", "NL", "SE"])
    number = phone(region)
    return f"Customer called from {number} about the outage.", [("PHONE", number)]


@form
def national_phone_labelled() -> Item:
    region = R.choice(["GB", "DE", "FR", "US", "JP", "IN"])
    number = phone(region, "national")
    return f"Phone: {number}", [("PHONE", number)]


@form
def phone_extension() -> Item:
    number = phone("US", "national")
    return f"Call me at {number} ext. 214 tomorrow.", [("PHONE", number)]


@form
def card_in_json() -> Item:
    number = card()
    # The security code is card data too: labelled since the bank-details rules (2026-12-07) find
    # it (this set's blind figure was taken with the number alone labelled).
    return json.dumps({"payment_method": {"card": {"number": number, "exp_month": 4, "cvc": "314"}}}), [
        ("CARD", number),
        ("CARD", "314"),
    ]


@form
def card_dashed_prose() -> Item:
    number = card(R.choice(["51", "52", "53", "54", "55"]), 16)
    dashed = "-".join(number[i : i + 4] for i in range(0, 16, 4))
    return f"Please charge {dashed} for the renewal.", [("CARD", dashed)]


@form
def amex_spaced() -> Item:
    number = card("37", 15)
    spaced = f"{number[:4]} {number[4:10]} {number[10:]}"
    return f"amex on file: {spaced}", [("CARD", spaced)]


@form
def iban_prose() -> Item:
    value = grouped(iban("DE", 18))
    return f"Bitte überweisen Sie den Betrag auf {value} bis Freitag.", [("IBAN", value)]


@form
def iban_json() -> Item:
    value = R.choice([iban("FR", 23), iban("DE", 18), iban("AT", 16)])
    return json.dumps({"payout": {"iban": value, "currency": "EUR"}}), [("IBAN", value)]


@form
def ssn_labelled() -> Item:
    value = ssn()
    return f"applicant_ssn={value} status=pending", [("US_SSN", value)]


@form
def ssn_prose() -> Item:
    value = ssn()
    return f"My social is {value}, can you update my file?", [("US_SSN", value)]


@form
def ipv6_log() -> Item:
    address = ipv6()
    return f"2024-03-01T12:00:01Z sshd[411]: Accepted publickey for deploy from {address} port 52214", [
        ("IP_ADDRESS", address)
    ]


@form
def ipv4_port() -> Item:
    address = f"{R.choice([R.randint(11, 126), R.randint(128, 223)])}.{R.randint(0, 255)}.{R.randint(0, 255)}.{R.randint(1, 254)}"
    return f"upstream connect error to {address}:8443", [("IP_ADDRESS", address)]


@form
def connection_string() -> Item:
    password = "".join(R.choice("abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(14))
    url = f"postgresql://svc_orders:{password}@db.internal:5432/orders"
    return f"DATABASE_URL={url}", [("URL_CREDENTIALS", password)]


@form
def mail_headers() -> Item:
    a, b = email(), email()
    return f"From: Billing <{a}>\nTo: {b}\nSubject: Invoice 2291\n", [("EMAIL", a), ("EMAIL", b)]


@form
def traceback_locals() -> Item:
    mail = email()
    number = card()
    return (
        f'Traceback (most recent call last):\n  File "pay.py", line 41, in charge\n'
        f"    customer = {{'email': '{mail}', 'card': '{number}'}}\nValueError: declined",
        [("EMAIL", mail), ("CARD", number)],
    )


@form
def markdown_table() -> Item:
    mail, number = email(), phone("GB")
    return f"| name | email | phone |\n|---|---|---|\n| Support | {mail} | {number} |", [
        ("EMAIL", mail),
        ("PHONE", number),
    ]


@form
def negatives() -> Item:
    return (
        R.choice(
            [
                "Build 2024.03.01.1234 finished in 00:12:44",
                "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
                "Order total 1 234 567,89 EUR",
                "version 10.0.19045.3693",
                "timestamp=1709294401123 offset=+0100",
                "uuid 6f1c2b9e-3d4a-4c1b-9e2f-7a8b9c0d1e2f",
            ]
        ),
        [],
    )


def main(argv: list[str] | None = None) -> None:
    set_main(FORMS, R, __doc__ or "", argv, KINDS)


if __name__ == "__main__":
    main()

"""Values as generated PII corpora write them (benchmarks/privacy/ai4privacy.py): a card number a
sentence names whatever its check digit, accounts a bank names by their kind, and what is not a
street or a person there (an IP's or a wallet's `address:`, a user-agent's platform). The
sentences and values are the project's own, in the corpora's forms."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect
from router.privacy.validators import luhn

OPT_IN = frozenset({"person", "address"})
UNCHECKED = "8914673251949775"  # 16 digits whose Luhn check fails, led by an 8 (no issuer's)


def found(text: str, optional: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    return [(f.type, text[f.start : f.end]) for f in detect(text, optional)]


def test_the_card_number_fails_its_check() -> None:
    assert not luhn(UNCHECKED)


@pytest.mark.parametrize(
    "text",
    [
        f"Payment was taken with card number {UNCHECKED} yesterday.",
        f"My credit card ({UNCHECKED}) keeps getting declined.",
        f"Charges go to the american_express credit card: {UNCHECKED}.",
        f"The fee is billed to {UNCHECKED} issued by jcb.",
        f"Please use {UNCHECKED} with CVV 512 to complete the order.",
        f"It was paid from {UNCHECKED}, security code 044, last week.",
        f"Saved {UNCHECKED} exp. 04/2027 for the renewal.",
        f"Handled by maestro via {UNCHECKED} as agreed.",
        f"Votre numéro de carte de crédit {UNCHECKED} est nécessaire.",
        f"Ihre Kreditkartennummer {UNCHECKED} ist abgelaufen.",
        f"Pagó con la tarjeta {UNCHECKED} ayer.",
        f"Uw creditcardnummer {UNCHECKED} is geblokkeerd.",
    ],
)
def test_a_number_the_sentence_calls_a_card_is_one(text: str) -> None:
    assert ("CARD", UNCHECKED) in found(text)


@pytest.mark.parametrize(
    "text",
    [
        f"For supplies use {UNCHECKED}.",  # no card word: a number that fails the check is no card
        f"trace {UNCHECKED} discover more",  # `discover` alone is a verb
        "card 1700000000000000 expires",  # a round timestamp's zeros
        "card 4444444444444444 declined",  # one digit repeated
        f"session {UNCHECKED} expires in 3600 s",  # an id's expiry, no month and year
    ],
)
def test_numbers_no_sentence_calls_a_card_are_not_taken(text: str) -> None:
    assert not [kind for kind, _value in found(text) if kind == "CARD"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Your Checking Account (93057168) has enough funds.", "93057168"),
        ("Deposit on Home Loan Account (#40627719) is due.", "40627719"),
        ("The Investment Account '58203146' does not match.", "58203146"),
        ("My Money Market Account's 71940263 holds 2,000.", "71940263"),
        ("Please update the account number to 36190452 today.", "36190452"),
        ("Your Savings Account with the number 90417623 needs attention.", "90417623"),
        ("Credit Card Account 52810947 is overdue.", "52810947"),
    ],
)
def test_a_bank_names_its_kinds_of_account(text: str, value: str) -> None:
    assert ("IBAN", value) in found(text)


@pytest.mark.parametrize(
    "text",
    [
        "AWS account number 123456789012 owns the bucket.",  # a cloud's account
        "Processing account 58203146 from the queue.",  # a bare `account`: an id as often as a bank's
    ],
)
def test_other_accounts_are_not_bank_accounts(text: str) -> None:
    assert not [kind for kind, _value in found(text) if kind == "IBAN"]


@pytest.mark.parametrize(
    "text",
    [
        "The login came from IP address: 10.20.30.40. Please check it was you.",
        "Paid to Bitcoin address: 1BoatSLRHtKNngkdXEeobR76b53LETtpyT for the course, thanks Emma.",
        "MAC address: 3c:22:fb:10:9a:01. Please connect it when you start.",
        "Send it to this wallet address = 0x52908400098527886E0F7030069857D2E4169EE7 today.",
        "E-mail address: ask the front desk for it.",
    ],
)
def test_an_address_of_something_else_is_no_street(text: str) -> None:
    assert not [kind for kind, _value in found(text, OPT_IN) if kind == "ADDRESS"]


@pytest.mark.parametrize(
    "text",
    [
        "Return address: 12 Harbour Street, Portsmouth",
        "Physical address: 4 Elm Road, Leeds",
        "Billing address: 77 Oak Avenue, Springfield",
    ],
)
def test_a_postal_address_label_still_takes_its_street(text: str) -> None:
    assert [kind for kind, _value in found(text, OPT_IN) if kind == "ADDRESS"]


@pytest.mark.parametrize(
    "text",
    [
        "Devices seen with Opera/12.63 (Macintosh; Intel Mac OS X 10.5.3 U; AF Presto/2.9.178 Version/10.00).",
        "Sign-in from Mozilla/5.0 (Macintosh; U; Intel Mac OS X 10_7_6 rv:4.0; ko-KR) AppleWebKit/533.4.",
    ],
)
def test_a_user_agent_names_no_person(text: str) -> None:
    assert not [value for kind, value in found(text, OPT_IN) if kind == "PERSON"]


def test_a_person_beside_a_user_agent_is_still_found() -> None:
    text = "Dear Hannelore Vasquez, a sign-in from Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) was seen."
    assert ("PERSON", "Hannelore Vasquez") in found(text, OPT_IN)


@pytest.mark.parametrize(
    ("text", "value", "kind"),
    [
        ("AHV-Nr.: 756.1234.5678.97", "756.1234.5678.97", "NATIONAL_ID"),  # EAN-13 check holds
        ("Versichertennummer 756.9217.0769.85 laut Ausweis", "756.9217.0769.85", "NATIONAL_ID"),
        ("AVS 7569217076985", "7569217076985", "NATIONAL_ID"),
        ("SSN: 980-10-8849", "980-10-8849", "US_SSN"),  # an area stdnum refuses, named an SSN
        ("her social security number is 912 00 4512?", None, None),  # a group of zeros: a filler
    ],
)
def test_social_security_numbers_as_written(text: str, value: str | None, kind: str | None) -> None:
    ids = [(k, v) for k, v in found(text) if k in ("US_SSN", "NATIONAL_ID")]
    assert ids == ([(kind, value)] if value else [])


@pytest.mark.parametrize(
    "text",
    [
        "ref 756.1234.5678.98 in the ledger",  # its check digit off
        "tax id 980-10-8849",  # only `SSN` or `social security` vouches for a number stdnum refuses
        "build 7569217076985 finished",  # a plain 13-digit run with no label
    ],
)
def test_numbers_that_are_no_social_security_number(text: str) -> None:
    assert not [k for k, _v in found(text) if k in ("US_SSN", "NATIONAL_ID")]


@pytest.mark.parametrize(
    "text",
    [
        "The audit was done by Kemmer - Becker last spring.",  # a firm: two surnames, a spaced dash
        "Paucek, Rath and O'Hara offers discounts on tutoring.",  # a firm of three, an O' among them
        "Regards, Feil, McCullough and Jacobs Finance Services.",
        "We saw odd sign-ins on our Herzog and Sons account.",
        "The fee is 755,082.02 in Swiss Franc, due Friday.",  # currencies
        "A transfer of Malagasy Ariary 834.9k was made.",
        "We will pay you Rand 270.68k for the event.",
        "Reports came in from West Lenore and East Allison.",  # places named by a compass point
        "Hello Designer, please look into the bug.",  # a job's title
        "Contact our Customer Metrics Architect for access.",
        "Hi Cisgender, your results are ready.",  # a gender
    ],
)
def test_firms_currencies_places_and_titles_are_no_people(text: str) -> None:
    assert not [value for kind, value in found(text, OPT_IN) if kind == "PERSON"]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("The endocrinology conference, attendee - Brooke Haldane, paid in full.", "Brooke Haldane"),
        ("Dear Sofia Trans, your order shipped.", "Sofia Trans"),
        ("I had lunch with Rand yesterday and he agreed.", "Rand"),
        ("Mr. Gislason-Tillman will join the call.", "Gislason-Tillman"),
        ("I met Jose Colon yesterday and he agreed.", "Jose Colon"),  # a surname that is a currency's unit
        ("Kim Won signed the form.", "Kim Won"),
    ],
)
def test_people_beside_those_words_are_still_found(text: str, name: str) -> None:
    assert ("PERSON", name) in found(text, OPT_IN)


@pytest.mark.parametrize(
    ("text", "street"),
    [
        ("Please be at 842 Nolan Expressway, East Jermey, by noon.", "842 Nolan Expressway"),
        ("The lien is on 5120 Harlow Dale, Tulsa.", "5120 Harlow Dale"),
        ("Ship it to 77 Kerluke Throughway next week.", "77 Kerluke Throughway"),
        ("Our office moved to 301 Birch Hollow.", "301 Birch Hollow"),
    ],
)
def test_streets_by_the_postal_services_other_suffixes(text: str, street: str) -> None:
    spans = [value for kind, value in found(text, OPT_IN) if kind == "ADDRESS"]
    assert any(street in value for value in spans), spans


@pytest.mark.parametrize("text", ["we run 3 Paper Mills and 2 Silver Springs", "4 Oil Wells were capped"])
def test_counted_things_are_no_streets(text: str) -> None:
    assert not [kind for kind, _value in found(text, OPT_IN) if kind == "ADDRESS"]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Hello J\u200bed Bartlett, your order shipped.", "J\u200bed Bartlett"),  # a zero-width space
        ("Dear Mar\u00adgarita Fernández, thanks for writing.", "Mar\u00adgarita Fernández"),  # a soft hyphen
    ],
)
def test_a_name_with_an_invisible_character_inside_is_found_whole(text: str, name: str) -> None:
    assert ("PERSON", name) in found(text, OPT_IN)


def test_a_street_with_an_invisible_character_inside_is_found() -> None:
    text = "Ship it to 12 Oak La\u200bne, Springfield, IL 62704 today."
    assert [value for kind, value in found(text, OPT_IN) if kind == "ADDRESS"] == [
        "12 Oak La\u200bne, Springfield, IL 62704"
    ]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Name: JOHN SMITH", "JOHN SMITH"),  # a form or an export in capitals
        ("customer_name: MARIA GARCIA\nphone: 555-0100", "MARIA GARCIA"),
        ("Reviewed by: ANA LIMA", "ANA LIMA"),
    ],
)
def test_a_labelled_name_in_capitals_is_found(text: str, name: str) -> None:
    assert ("PERSON", name) in found(text, OPT_IN)


@pytest.mark.parametrize("text", ["Owner: ADMIN", "name: UNKNOWN", "user: ROOT", "name: NGINX", "Name: N/A"])
def test_a_labelled_word_in_capitals_is_no_name(text: str) -> None:
    assert not [kind for kind, _value in found(text, OPT_IN) if kind == "PERSON"]

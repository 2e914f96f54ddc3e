"""The phone pre-check (`router.privacy.phone_lengths`) never rejects what libphonenumber accepts.

It skips `parse` + `is_valid_number` only where they would say no: every valid number of every
region, written in each format and with dialling prefixes, and random digit strings in the
shapes the phone detector meets, are checked by both; each must be valid only when the
pre-check lets it through, and the pre-check must still reject most invalid national numbers
(else it buys nothing)."""

from __future__ import annotations

import random

import phonenumbers

from router.privacy import phones
from router.privacy.phone_lengths import may_be_valid

_FORMATS = (
    phonenumbers.PhoneNumberFormat.E164,
    phonenumbers.PhoneNumberFormat.INTERNATIONAL,
    phonenumbers.PhoneNumberFormat.NATIONAL,
)
_TYPES = (
    phonenumbers.PhoneNumberType.FIXED_LINE,
    phonenumbers.PhoneNumberType.MOBILE,
    phonenumbers.PhoneNumberType.TOLL_FREE,
)


def _valid(number: str, region: str | None) -> bool:
    try:
        return bool(phonenumbers.is_valid_number(phonenumbers.parse(number, region)))
    except phonenumbers.NumberParseException:
        return False


def _cases() -> list[tuple[str, str | None]]:
    cases: list[tuple[str, str | None]] = []
    regions = (None, *phones.LABELLED_REGIONS)
    for home in sorted(phonenumbers.SUPPORTED_REGIONS):
        for kind in _TYPES:
            example = phonenumbers.example_number_for_type(home, kind)
            if example is None:
                continue
            for shape in _FORMATS:
                written = phonenumbers.format_number(example, shape)
                cases += [(written, region) for region in (*regions, home)]
            code, national = str(example.country_code), phonenumbers.national_significant_number(example)
            for written in ("00" + code + national, "011" + code + national, code + national, "0" + national):
                cases += [(written, region) for region in (*phones.LABELLED_REGIONS, home)]
    rng = random.Random(7)
    for _ in range(20000):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(6, 16)))
        if rng.random() < 0.3:
            digits = rng.choice(("0", "00", "011", "1", "44", "49", "91", "86", "+", "+1", "+44")) + digits
        written = ""
        for char in digits:
            written += char
            if rng.random() < 0.2:
                written += rng.choice((" ", "-", ".", "/", "(", ")"))
        cases.append((written, None if written.startswith("+") else rng.choice(regions)))
    return cases


def test_the_pre_check_never_rejects_a_valid_number_and_rejects_most_invalid_ones() -> None:
    rejected_valid = []
    invalid = rejected = 0
    for number, region in _cases():
        allowed, valid = may_be_valid(number, region), _valid(number, region)
        if valid and not allowed:
            rejected_valid.append((number, region))
        if not valid:
            invalid += 1
            rejected += not allowed
    assert rejected_valid == []
    assert rejected > invalid // 2, (rejected, invalid)


def test_what_is_left_to_libphonenumber() -> None:
    # Letters (an extension), a `+` with a region and an international dialling prefix are the
    # parser's to read: the pre-check lets them through even where they are invalid.
    assert may_be_valid("555-0100 ext. 12", "US")
    assert may_be_valid("+1 555 0100", "US")
    assert may_be_valid("011 99 12", "US")
    # Nine digits are never a US number; a valid one passes.
    assert not may_be_valid("797 105 675", "US")
    assert may_be_valid("(415) 555-2671", "US")
    assert not may_be_valid("+1 797 105 675", None)

"""The phone checks told from libphonenumber's metadata (`router.privacy.phone_lengths`) give
libphonenumber's own answers.

`decide` answers for plain candidates without `parse` + `is_valid_number`, `may_be_valid`
skips them where they would say no: every valid number of every region, written in each format
and with dialling prefixes, and random digit strings in the shapes the phone detector meets, are
checked by both ways; each answer `decide` gives must be libphonenumber's, `may_be_valid` must
never reject a valid number, and both must settle most candidates (else they buy nothing)."""

from __future__ import annotations

import random

import phonenumbers

from router.privacy import phones
from router.privacy.phone_lengths import decide, may_be_valid

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
    # Extensions written with `x` (read as the number without them) and the calling codes and
    # regions whose national prefix rule transforms what it matches (decided where it does not).
    transforming = ("BR", "AR", "JP", "AU", "AG", "GG", "JE", "SM")
    prefixes = ("+1", "+55", "+54", "+61", "+44", "+81", "+378", "55", "54", "1", "0", "00", "90")
    rng = random.Random(11)
    for _ in range(5000):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(2, 13)))
        if rng.random() < 0.5:
            digits = rng.choice(prefixes) + digits
        written = "".join(c + (rng.choice((" ", "-", ".", "(", ")")) if rng.random() < 0.2 else "") for c in digits)
        if rng.random() < 0.6:
            extension = str(rng.randint(0, 10 ** rng.randint(1, 7)))
            written += rng.choice((" x", "x", " x ", "x ", "x.", " ext ")) + extension
        cases.append((written, None if written.startswith("+") else rng.choice((*regions, *transforming))))
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
    # Letters (an extension), a `+` with a region and a 0 after an international dialling
    # prefix are the parser's to read: the pre-check lets them through even where they are invalid.
    assert may_be_valid("555-0100 ext. 12", "US")
    assert may_be_valid("+1 555 0100", "US")
    assert may_be_valid("011 0 99 12", "US")
    # After a dialling prefix the number is read as after a `+`: no calling code begins `99 12`.
    assert not may_be_valid("011 99 12", "US")
    # Nine digits are never a US number; a valid one passes.
    assert not may_be_valid("797 105 675", "US")
    assert may_be_valid("(415) 555-2671", "US")
    assert not may_be_valid("+1 797 105 675", None)


def test_decide_gives_libphonenumbers_answer_wherever_it_answers() -> None:
    wrong = []
    answered = total = 0
    for number, region in _cases():
        total += 1
        answer = decide(number, region)
        if answer is None:
            continue
        answered += 1
        if answer != _valid(number, region):
            wrong.append((number, region, answer))
    assert wrong == []
    assert answered > total // 2, (answered, total)
    # Left to the parser: letters, a 0 after a dialling prefix, the region's own calling code
    # in front. A dialling prefix then a calling code reads as a `+`.
    assert decide("555-0100 ext. 12", "US") is None
    assert decide("(415) 555-2671 x204", "US") is True
    assert decide("(415) 555-2671 x2041234", "US") is None  # more digits than the shape reads
    assert decide("00 0 44 20 7946 0958", "DE") is None
    assert decide("00 44 20 7946 0958", "DE") is True
    assert decide("011 44 20 7946 0958", "US") is True
    assert decide("(415) 555-2671", "US") is True
    assert decide("030 901820", "DE") is True

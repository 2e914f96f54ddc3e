"""The IBAN check (`validators.iban`) gives python-stdnum's answer: `iban.validate(value,
check_country=False)` succeeds exactly when it says valid, on documented example IBANs of many
countries, every one-character change of them, case and separator variants, and random strings
shaped like IBANs (known and unknown country codes)."""

from __future__ import annotations

import random

from stdnum import iban as stdnum_iban

from router.privacy import validators

# Example IBANs as the registry and banks publish them (public examples, not accounts of anyone).
_EXAMPLES = (
    "GB82WEST12345698765432",
    "DE89370400440532013000",
    "FR1420041010050500013M02606",
    "NL91ABNA0417164300",
    "ES9121000418450200051332",
    "IT60X0542811101000000123456",
    "BE68539007547034",
    "CH9300762011623852957",
    "AT611904300234573201",
    "SE4550000000058398257466",
    "PL61109010140000071219812874",
    "NO9386011117947",
    "MT84MALT011000012345MTLCAST001S",
    "SA0380000000608010167519",
)
_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _stdnum(value: str) -> bool:
    try:
        stdnum_iban.validate(value, check_country=False)
    except Exception:
        return False
    return True


def _values() -> list[str]:
    rng = random.Random(11)
    values: list[str] = []
    for example in _EXAMPLES:
        values += [example, example.lower(), " ".join(example[i : i + 4] for i in range(0, len(example), 4))]
        values += [example[:-1], example + "0", example.replace(example[:2], "XX", 1)]
        for index in range(len(example)):
            for char in ("0", "7", "A", "Z", " ", "-"):
                values.append(example[:index] + char + example[index + 1 :])
    for country in ("GB", "DE", "FR", "NL", "XX", "QZ", "12"):
        for _ in range(300):
            body = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(8, 30)))
            values.append(country + f"{rng.randint(0, 99):02d}" + body)
    return [*values, "", "G", "GB", "GB82", "GB82 ", "ÄB82WEST12345698765432"]


def test_the_iban_check_gives_python_stdnums_answers() -> None:
    values = _values()
    wrong = [value for value in values if validators.iban.__wrapped__(value) != _stdnum(value)]
    assert wrong == []
    valid = sum(_stdnum(value) for value in values)
    assert len(_EXAMPLES) <= valid < len(values) // 2  # both answers are exercised

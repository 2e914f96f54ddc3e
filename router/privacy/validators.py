"""Validators that keep look-alikes out: check digits, checksums, ranges and entropy.

Each takes the candidate value as the detector matched it and says whether it is real.
"""

from __future__ import annotations

import math
import re


def luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        number = ord(char) - 48
        if index % 2:
            number *= 2
            if number > 9:
                number -= 9
        total += number
    return total % 10 == 0


_CARD_PREFIX = re.compile(r"^(?:4|5[1-5]|2[2-7]|3[47]|6(?:011|5|4[4-9]|22)|35|3(?:0[0-5]|[68]))")


def card(value: str) -> bool:
    digits = re.sub(r"[ -]", "", value)
    return 13 <= len(digits) <= 19 and bool(_CARD_PREFIX.match(digits)) and luhn(digits)


_IBAN_LENGTHS = {
    "AD": 24,
    "AE": 23,
    "AT": 20,
    "BA": 20,
    "BE": 16,
    "BG": 22,
    "BH": 22,
    "BR": 29,
    "CH": 21,
    "CY": 28,
    "CZ": 24,
    "DE": 22,
    "DK": 18,
    "EE": 20,
    "ES": 24,
    "FI": 18,
    "FO": 18,
    "FR": 27,
    "GB": 22,
    "GE": 22,
    "GI": 23,
    "GL": 18,
    "GR": 27,
    "HR": 21,
    "HU": 28,
    "IE": 22,
    "IL": 23,
    "IS": 26,
    "IT": 27,
    "JO": 30,
    "KW": 30,
    "KZ": 20,
    "LB": 28,
    "LI": 21,
    "LT": 20,
    "LU": 20,
    "LV": 21,
    "MC": 27,
    "ME": 22,
    "MK": 19,
    "MT": 31,
    "MU": 30,
    "NL": 18,
    "NO": 15,
    "PK": 24,
    "PL": 28,
    "PS": 29,
    "PT": 25,
    "QA": 29,
    "RO": 24,
    "RS": 22,
    "SA": 24,
    "SE": 24,
    "SI": 19,
    "SK": 24,
    "SM": 27,
    "TN": 24,
    "TR": 26,
    "UA": 29,
    "VG": 24,
}


def iban(value: str) -> bool:
    compact = value.replace(" ", "").upper()
    if _IBAN_LENGTHS.get(compact[:2]) != len(compact):
        return False
    rearranged = compact[4:] + compact[:4]
    number = "".join(str(int(char, 36)) for char in rearranged)
    return int(number) % 97 == 1


def ipv4(value: str) -> bool:
    parts = value.split(".")
    if not (len(parts) == 4 and all(p.isdigit() and int(p) <= 255 and (p == "0" or p[0] != "0") for p in parts)):
        return False
    # The unspecified, loopback and broadcast addresses name no host of anyone's.
    return value != "0.0.0.0" and parts[0] != "127" and value != "255.255.255.255"


def ipv6(value: str) -> bool:
    if value.count("::") > 1 or value in ("::", "::1"):
        return False
    groups = [g for g in value.split(":") if g]
    full = "::" not in value
    if full and len(groups) != 8:
        return False
    # Compressed forms need enough structure not to be a time (12:30) or a Python slice.
    return 2 <= len(groups) <= 8 and (full or len(groups) >= 3 or value.startswith("fe80") or value == "::1")


def ssn(value: str) -> bool:
    area, group, serial = value[0:3], value[4:6], value[7:11]
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


_CN_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)


def cn_id(value: str) -> bool:
    total = sum(int(d) * w for d, w in zip(value[:17], _CN_WEIGHTS, strict=True))
    return "10X98765432"[total % 11] == value[17].upper()


def es_dni(value: str) -> bool:
    return "TRWAGMYFPDXBNJZSQVHLCKE"[int(value[:8]) % 23] == value[8].upper()


def entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    return -sum(c / len(value) * math.log2(c / len(value)) for c in counts.values())


def secret_value(value: str) -> bool:
    # An assigned secret: long enough, mixed, high entropy; not a placeholder or a variable.
    if value.lower() in ("true", "false", "null", "none", "changeme", "password", "<redacted>"):
        return False
    if value.startswith(("$", "{{", "${", "<", "os.environ", "env.")) or (
        value.startswith("[") and value.endswith("]")
    ):
        return False
    return len(value) >= 8 and entropy(value) >= 3.0 and not value.isalpha()


def phone(value: str) -> bool:
    digits = re.sub(r"\D", "", value)
    return 8 <= len(digits) <= 15 if value.startswith("+") else len(digits) == 10

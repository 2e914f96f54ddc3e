"""Phone numbers, national ids and secrets in named columns (on by default): a CSV export's
`phone`, `mobile`, `ssn`, `steuer_id`, `bsn`, `password` or `api_key` column, or an SQL INSERT's,
names its cells, so a value with no label beside it (`4155552671`, `65929970489`, `Xk9#mQ2v`) is
taken when it is valid for that column: libphonenumber for phones, python-stdnum's check for ids,
a password's or a key's look for secrets (see tables.py for the parsing).
"""

from __future__ import annotations

import re

from router.privacy import bank_details, national_ids, phones, validators
from router.privacy.credentials import password_value
from router.privacy.tables import Columns

_PHONE_WORDS = (
    "phone",
    "tel",
    "telephone",
    "mobile",
    "cell",
    "cellphone",
    "fax",
    "msisdn",
    "whatsapp",
    "telefon",
    "telefono",
    "handy",
    "mobil",
)
# Header word -> the stdnum modules its values may be valid for (the first that accepts wins).
_ID_WORDS: dict[str, tuple[str, ...]] = {
    "ssn": ("us.ssn",),
    "social_security": ("us.ssn",),
    "sin": ("ca.sin",),
    "nin": ("gb_nino",),
    "nino": ("gb_nino",),
    "national_insurance": ("gb_nino",),
    "nhs": ("gb.nhs",),
    "bsn": ("nl.bsn",),
    "steuer_id": ("de.idnr",),
    "steuerid": ("de.idnr",),
    "idnr": ("de.idnr",),
    "steueridentifikationsnummer": ("de.idnr",),
    "pesel": ("pl.pesel",),
    "cpf": ("br.cpf",),
    "nir": ("fr.nir",),
    "insee": ("fr.nir",),
    "dni": ("es.dni",),
    "nie": ("es.nie",),
    "nif": ("es.nif",),
    "codice_fiscale": ("it.codicefiscale",),
    "personnummer": ("se.personnummer",),
    "hetu": ("fi.hetu",),
    "cpr": ("dk.cpr",),
    "aadhaar": ("in_.aadhaar",),
    "tfn": ("au.tfn",),
    "curp": ("mx.curp",),
    "cnp": ("ro.cnp",),
    "rrn": ("kr.rrn",),
    "national_id": (
        "us.ssn",
        "gb_nino",
        "de.idnr",
        "nl.bsn",
        "fr.nir",
        "es.dni",
        "es.nie",
        "it.codicefiscale",
        "pl.pesel",
        "br.cpf",
        "ca.sin",
        "se.personnummer",
    ),
}
_ID_WORDS["tax_id"] = _ID_WORDS["national_id"]
_ID_WORDS["tin"] = ("us.ssn", "de.idnr", "it.codicefiscale", "es.nif")
_VALIDATORS = {
    module: national_ids.validator(module) for modules in _ID_WORDS.values() for module in modules if "." in module
}


# A column of passwords or keys (a credentials sheet, seed data): `password`, `db_pass`,
# `api_key`, `client_secret`, `token`; not one that holds something about them (`password_hash`,
# `token_count`, `secret_name`).
_SECRET_PARTS = frozenset({"password", "passwd", "pwd", "pass", "passphrase", "secret", "token", "apikey"})
_SECRET_HEADERS = frozenset({"api_key", "access_key", "secret_key", "client_secret", "private_key", "auth_token"})
_NOT_SECRET_PARTS = frozenset(
    [
        "hash",
        "hashed",
        "digest",
        "salt",
        "hint",
        "reset",
        "expires",
        "expiry",
        "expiration",
        "count",
        "type",
        "id",
        "length",
        "len",
        "policy",
        "changed",
        "updated",
        "last",
        "created",
        "name",
        "names",
        "url",
        "uri",
        "required",
        "set",
        "age",
        "ttl",
        "limit",
        "max",
        "min",
        "used",
        "usage",
        "file",
        "path",
        "enabled",
        "label",
        "prompt",
        "format",
        "version",
        "prefix",
    ]
)
_PASSWORD_PARTS = frozenset({"password", "passwd", "pwd", "pass", "passphrase"})
_KEY_CELL = re.compile(r"[A-Za-z0-9_\-+/=.~]{16,4096}")


# Bank details' and card codes' columns (bank_details.py): header -> kind and what its cells are.
_BANK_HEADERS: dict[str, tuple[str, str]] = {
    **dict.fromkeys(("routing", "routing_number", "routing_no", "aba", "aba_number", "rtn"), ("IBAN", "routing")),
    **dict.fromkeys(
        (
            "account_number",
            "account_no",
            "acct_number",
            "acct_no",
            "bank_account",
            "bank_account_number",
            "checking_account",
            "savings_account",
        ),
        ("IBAN", "account"),
    ),
    **dict.fromkeys(("cvv", "cvc", "cvv2", "cvc2", "card_cvv", "card_cvc"), ("CARD", "cvv")),
    **dict.fromkeys(("ein", "fein", "employer_id_number"), ("NATIONAL_ID", "ein")),
}
_DIGITS = re.compile(r"\d+")
_BANK_CELLS = {
    "routing": lambda value: len(value) == 9 and bank_details.routing_number(value),
    "account": lambda value: 6 <= len(value) <= 17 and bank_details.account_number(value),
    "cvv": lambda value: 3 <= len(value) <= 4,
}


def _classify(header: str) -> tuple[str, str] | None:
    bank = _BANK_HEADERS.get(header)
    if bank is not None:
        return bank[0], "BANK_COLUMN:" + bank[1]
    parts = header.split("_")
    if header in _SECRET_HEADERS or (
        parts[-1] in _SECRET_PARTS and len(parts) <= 3 and not any(p in _NOT_SECRET_PARTS for p in parts)
    ):
        return "SECRET_ASSIGNMENT", "SECRET_COLUMN:" + ("password" if _PASSWORD_PARTS & set(parts) else "key")
    if any(p in _PHONE_WORDS for p in parts) or header in ("phone_number", "phonenumber"):
        return "PHONE", "PHONE_COLUMN"
    for word in _ID_WORDS:
        if header == word or f"_{word}_" in f"_{header}_":
            return ("US_SSN" if word in ("ssn", "social_security") else "NATIONAL_ID"), f"ID_COLUMN:{word}"
    return None


def _accept(kind: str, rule: str, value: str) -> bool:
    if rule.startswith("BANK_COLUMN:"):
        cell = rule.partition(":")[2]
        if cell == "ein":
            return bank_details.employer_id(value)
        return _DIGITS.fullmatch(value) is not None and _BANK_CELLS[cell](value)
    if kind == "PHONE":
        return phones.valid_in_column(value)
    if kind == "SECRET_ASSIGNMENT":
        # A password may read as words and digits; a key or a token must look generated. A cell
        # with a space is a sentence (prose read as a table: `…, the token, …`).
        if any(c.isspace() or c in "()[]{}<>" for c in value):
            return False
        if rule.endswith(":password"):
            # (A cell may open with `!` or `-`, which after a name in a config would be a YAML
            # tag or a flag: under a password column it is the password's first character.)
            return password_value(value) or (value[:1] in "!-" and password_value("x" + value[1:]))
        return _KEY_CELL.fullmatch(value) is not None and validators.secret_value(value)
    for module in _ID_WORDS[rule.partition(":")[2]]:
        if module == "gb_nino":
            if national_ids.nino(value):
                return True
        elif _VALIDATORS[module](value):
            return True
    return False


# The header words the column pass looks for (not `token` or `secret` alone: everywhere in code
# and logs, each a header line to test; a table of tokens is found by a word beside them).
_SECRET_WORDS = (
    "password",
    "passwd",
    "pwd",
    "passphrase",
    "apikey",
    "api_key",
    "access_key",
    "secret_key",
    "client_secret",
    "private_key",
)
# Bank columns are told by their distinctive words; `account`, `bank`, `routing` and `checking`
# alone are everywhere in code and logs (each a line to test: +7% of a typical text's scan), so
# those columns are told by their compound names, and an EIN's beside another column named here.
_BANK_WORDS = ("aba", "rtn", "cvv", "cvc", "fein")
_BANK_NAMES = (
    r"routing[_ ]?(?:number|num|no)\b",
    r"(?:account|acct)[_ ]?(?:number|num|no)\b",
    r"(?:bank|checking|savings)[_ ]account",
)
COLUMNS = Columns(
    (*_PHONE_WORDS, *(w.split("_")[0] for w in _ID_WORDS), *_SECRET_WORDS, *_BANK_WORDS),
    _classify,
    _accept,
    headers=_BANK_NAMES,
)

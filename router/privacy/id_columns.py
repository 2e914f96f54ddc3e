"""Phone numbers and national ids in named columns (on by default): a CSV export's `phone`,
`mobile`, `ssn`, `steuer_id`, `bsn` column, or an SQL INSERT's, names its cells, so a number
with no label beside it (`4155552671`, `65929970489`) is taken when it is valid for that column:
libphonenumber for phones, python-stdnum's check for ids (see tables.py for the parsing).
"""

from __future__ import annotations

from router.privacy import national_ids, phones
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


def _classify(header: str) -> tuple[str, str] | None:
    parts = header.split("_")
    if any(p in _PHONE_WORDS for p in parts) or header in ("phone_number", "phonenumber"):
        return "PHONE", "PHONE_COLUMN"
    for word in _ID_WORDS:
        if header == word or f"_{word}_" in f"_{header}_":
            return ("US_SSN" if word in ("ssn", "social_security") else "NATIONAL_ID"), f"ID_COLUMN:{word}"
    return None


def _accept(kind: str, rule: str, value: str) -> bool:
    if kind == "PHONE":
        return phones.valid_in_column(value)
    for module in _ID_WORDS[rule.partition(":")[2]]:
        if module == "gb_nino":
            if national_ids.nino(value):
                return True
        elif _VALIDATORS[module](value):
            return True
    return False


COLUMNS = Columns((*_PHONE_WORDS, *(w.split("_")[0] for w in _ID_WORDS)), _classify, _accept)

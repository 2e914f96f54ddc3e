"""A table's person columns (`first_name`, `last_name`, `customer`; tables.py reads CSV,
Markdown and SQL INSERTs): which headers name people, and which cells are names."""

from __future__ import annotations

import re

from router.privacy.names.labels import PERSON_KEYS
from router.privacy.names.words import any_listed, name_shaped, words_of
from router.privacy.tables import Columns


def _column_kind(header: str) -> tuple[str, str] | None:
    if re.fullmatch(rf"(?:{PERSON_KEYS})", header.replace("_", " "), re.IGNORECASE) or re.fullmatch(
        rf"(?:{PERSON_KEYS})", header, re.IGNORECASE
    ):
        return "PERSON", "name-column"
    if header in ("name", "customer", "contact", "author", "owner", "patient", "employee", "recipient", "person"):
        return "PERSON", "name-column-generic"
    return None


def _column_value(_kind: str, rule: str, value: str) -> bool:
    if rule == "name-column":
        return name_shaped(value, allow_upper=True)
    if rule == "name-column-contact":
        return name_shaped(value, allow_upper=True) and (any_listed(value) or len(words_of(value)) >= 2)
    return name_shaped(value, allow_upper=True) and any_listed(value)


_CONTACT_COLUMN = re.compile(r"(?:^|_)(?:e_?mail|phone|mobile|tel|telephone|address|street|city|zip|postcode)(?:_|$)")


# `first` and `last` (and `middle`) name a person's names only as a pair of columns: alone, a
# `first` column holds anything (a date, a count, a flag). Beside a contact column they are a
# person's; without one their cells are taken as a generic `name` column's (a listed name).
_PAIRED = frozenset(("first", "last", "middle"))


def _refine(headers: list[str], kinds: list[tuple[str, str] | None]) -> list[tuple[str, str] | None]:
    """A generic `name` column of a table that also has contact columns holds people; so do
    `first` and `last` columns in one table."""
    contact = any(_CONTACT_COLUMN.search(h) for h in headers)
    if "first" in headers and "last" in headers:
        paired = ("PERSON", "name-column" if contact else "name-column-generic")
        kinds = [paired if h in _PAIRED else k for h, k in zip(headers, kinds, strict=True)]
    if not contact:
        return kinds
    return [("PERSON", "name-column-contact") if k == ("PERSON", "name-column-generic") else k for k in kinds]


# A header line naming `first` and `last` side by side, either way round (`first,last,email`,
# `| Last | First |`), maybe with `middle` between: what makes the table's header found.
_CELL_GAP = r"[ \t\"'`]*[,;\t|][ \t\"'`]*"
_FIRST_LAST = (
    rf"(?:^|[^a-z_])(?:first{_CELL_GAP}(?:middle{_CELL_GAP})?last"
    rf"|last{_CELL_GAP}(?:middle{_CELL_GAP})?first)(?:[^a-z_]|$)"
)


COLUMNS = Columns(
    (
        "name",
        "surname",
        "firstname",
        "lastname",
        "fullname",
        "customer",
        "contact",
        "author",
        "owner",
        "patient",
        "employee",
        "recipient",
        "person",
        "nombre",
        "vorname",
        "nachname",
        "prenom",
        "prénom",
        "cognome",
        "apellido",
        "fname",
        "lname",
        "mname",
    ),
    _column_kind,
    _column_value,
    _refine,
    headers=(_FIRST_LAST,),
)

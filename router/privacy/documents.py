"""Identity documents' numbers after the words that name them: a passport's, a driving licence's.

Their shapes differ by country and state (7 digits, a letter and 12 digits, `C01X00T47`, digit
groups joined by hyphens) and none carries a check a library validates, so what says that a value
is one is its label: a value is taken only a few words after `passport`, `driver's license`,
`licence number`, `Führerschein`, … (caseless), with only filler between them (`number`, `no.`,
`#`, `is`, punctuation), and only when it looks like a document number: 6 to 24 letters, digits
and hyphens, at least four of them digits, not a date. A software licence (`License: MIT`,
`license key`) is not a label: `license` alone names none.
"""

from __future__ import annotations

import re

from router.privacy.detector import Detector
from router.privacy.label_window import LabelWindow

# The label's own words (caseless), for the window test before the exact regex.
LABEL_WORDS = (
    "passport",
    "license",
    "licence",
    "dl",
    "reisepass",
    "führerschein",
    "fuehrerschein",
    "permis de conduire",
    "passeport",
    "pasaporte",
    "passaporto",
    "paspoort",
    "rijbewijs",
    "carnet de conducir",
    "licencia de conducir",
    "patente di guida",
    "fahrerlaubnis",
    "pass-nr",
    "pass nr",
    "passnr",
    "passnummer",
)
_LABELS = (
    r"passport|driv(?:er|ing)(?:['’]?s)?[ \t_-]?licen[cs]e|licen[cs]e[ \t_-]?(?:number|num|no\b|nr\b|#)"
    r"|dl[ \t_-]?(?:#|no\b|nr\b|number)|reisepass|f(?:ü|ue)hrerschein|permis de conduire|passeport|pasaporte"
    r"|passaporto|paspoort|rijbewijs|carnet de conducir|licencia de conducir|patente di guida|fahrerlaubnis"
    r"|pass[ \t_-]?(?:nr\b|nummer)"
)
# Between the label and the value: only words that say "its number is" and punctuation.
_FILLER = (
    r"(?:[ \t:#=\"'’.,()\[\]_-]|(?:number|num|no|nr|id|is|was|reads|of|nummer|numéro|número|numero"
    r"|es|est|ist|è)\b)"
)
_AFTER = 40
# A key's label may be a word of a longer name (`user_passport_no`, `passportNumber`).
_LABEL = re.compile(rf"(?i)(?<![A-Za-z0-9])(?:{_LABELS}){_FILLER}{{1,12}}$")
_CORE = (
    rb"(?i)(?:passport|\bdriv(?:er|ing)(?:'|\xe2\x80\x99)?s?[ \t_-]?licen[cs]e"
    rb"|\blicen[cs]e[ \t_-]?(?:number|num|no\b|nr\b|#)"
    rb"|\bdl[ \t_-]?(?:#|no\b|nr\b|number)|reisepass|f(?:\xc3\xbc|ue)hrerschein|permis de conduire|passeport"
    rb"|pasaporte|passaporto|paspoort|rijbewijs|carnet de conducir|licencia de conducir|patente di guida"
    rb"|fahrerlaubnis|\bpass[ \t_-]?(?:nr\b|nummer))"
)
_CORE_SPAN = 24  # the longest label's bytes
# 6-24 letters, digits and hyphens, beginning and ending with a letter or digit, 4+ digits.
_VALUE = re.compile(r"(?<![\w.@/-])(?=(?:[A-Za-z-]*\d){4})[A-Za-z0-9][A-Za-z0-9-]{4,22}[A-Za-z0-9](?![\w@/]|[.-]\w)")
_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}-\d{1,2}-\d{4}|(?:19|20)\d{2}")
_LABEL_WINDOW = LabelWindow(LABEL_WORDS, _LABEL)


def _labelled(text: str, start: int, _end: int) -> bool:
    return _LABEL_WINDOW.before(text, max(0, start - _AFTER), start)


def _document_number(value: str) -> bool:
    """Not a date or a year, which share the shape and follow `passport expires`."""
    return _DATE.fullmatch(value) is None


DETECTORS: tuple[Detector, ...] = (
    Detector(
        "NATIONAL_ID",
        _VALUE,
        _CORE,
        validate=_document_number,
        rule="ID_DOCUMENT",
        check=_labelled,
        reach=_AFTER + 24,
        keyword_core=_CORE_SPAN,
        follows=True,
    ),
)

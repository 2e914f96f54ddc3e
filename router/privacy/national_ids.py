"""National ids, tax and insurance numbers, validated by python-stdnum.

Each entry: a shape (regex), the stdnum module that validates it, and whether it must stand
beside a label. Numbers whose check is weak for their length (a mod-10 or mod-11 digit on 9–12
plain digits) or that have no check at all are taken only beside a label naming them (`SIN`,
`BSN`, `Aadhaar`, `マイナンバー`, …): plain digit runs of those lengths are mostly order
numbers, timestamps and ids. Distinctive shapes (letters and digits in fixed places, dates with
a check) stand on their own.
"""

from __future__ import annotations

import datetime
import importlib
import re
from collections.abc import Callable, Iterable
from typing import Any

from router.privacy.detector import Detector
from router.privacy.label_window import LabelWindow
from router.privacy.scripts import WORD

# Not inside a longer token, nor a group of a longer run of digit groups (a card, an account);
# Chinese, Japanese, Korean or Thai text right against the number is no part of it (scripts.py:
# `身份证号11010519491231002X`). Every shape begins with a digit or a capital, looked at first.
_D = rf"(?=[0-9A-Z])(?<!{WORD})(?<![.+/-])(?<!\d[ -])"
_E = rf"(?!{WORD}|[@/]|[.-]\w|[ -]\d)"

# Words that name a national id, in the languages of the countries covered; a label-only
# detector's core is these words (hyperscan, caseless), its value follows within `_AFTER`.
LABEL_WORDS: tuple[str, ...] = (
    "ssn",
    "social security",
    "ahv",
    "avs",
    "ahv-nr",
    "ahv-nummer",
    "sozialversicherungsnummer",
    "sin",
    "social insurance",
    "nas",
    "bsn",
    "burgerservicenummer",
    "sofi",
    "pesel",
    "cpf",
    "cnpj",
    "curp",
    "rut",
    "cuit",
    "cuil",
    "dni",
    "nie",
    "nif",
    "nir",
    "insee",
    "sécurité sociale",
    "securite sociale",
    "codice fiscale",
    "personnummer",
    "hetu",
    "henkilötunnus",
    "cpr",
    "fødselsnummer",
    "fodselsnummer",
    "personal number",
    "national id",
    "national insurance",
    "national insurance number",
    "national number",
    "national identity",
    "nhs",
    "steuer-id",
    "steuerid",
    "steuer id",
    "idnr",
    "identifikationsnummer",
    "steueridentifikationsnummer",
    "steuerliche identifikationsnummer",
    "rijksregisternummer",
    "numéro national",
    "aadhaar",
    "aadhar",
    "uid",
    "my number",
    "mynumber",
    "individual number",
    "rrn",
    "resident registration",
    "tfn",
    "tax file",
    "tax id",
    "nino",
    "ni number",
    "ni no",
    "insurance number",
    "taxid",
    "tin",
    "id card",
    "id number",
    "id no",
    "identity card",
    "identity number",
    "cnp",
    "egn",
    "isikukood",
    "asmens kodas",
    "amka",
    "kimlik",
    "tckn",
    "turkish id",
    "thai id",
    "tnin",
    "เลขประจำตัวประชาชน",
    "เลขบัตรประชาชน",
    "マイナンバー",
    "個人番号",
    "주민등록번호",
    "身份证",
    "身份證",
)
_AFTER = 48


def _words(words: Iterable[str]) -> str:
    """The words as alternatives, a space in them also written `_`, as a key or a column names
    them (`ni_number`, `national_insurance_number`, `tax_id`)."""
    return "|".join(re.escape(w).replace("\\ ", "[ _]") for w in words)


_LABEL = re.compile("(?i)(?<![A-Za-z])(?:" + _words(LABEL_WORDS) + ")(?![A-Za-z])[^\n\\d]{0,24}$")
_LABEL_CORE = (
    b"(?i)(?:\\b(?:"
    + _words(w for w in LABEL_WORDS if w.isascii()).encode()
    + b")\\b|"
    + b"|".join(re.escape(w).encode() for w in LABEL_WORDS if not w.isascii())
    + b")"
)  # ASCII words whole: `sin` is not in `using`
_LABEL_SPAN = max(len(w.encode()) for w in LABEL_WORDS)


# Every labelled shape below is a run of 8 or more digits that may hold spaces, dots or hyphens,
# beginning and ending with a digit: no match begins before the first such run of a window, and
# a window with none holds none. Each labelled detector searches its window from the next run
# (`Detector.skip_to`) rather than trying its pattern, led by look-behinds, at every character of
# the label's window, and stops at once where there is none (docs, code, a list of the labels).
_NUMBER_RUN = re.compile(r"\d[\d .-]{6,}\d")
# Where a labelled shape's match may begin: each begins with a digit behind `_D`. Found once per
# label window for all of them (Detector.starts), rather than each searching the window.
_STARTS = re.compile(_D + r"\d")


_LABEL_WINDOW = LabelWindow(LABEL_WORDS, _LABEL)


def _labelled(text: str, start: int, _end: int) -> bool:
    return _LABEL_WINDOW.before(text, max(0, start - _AFTER), start)


def validator(module: str) -> Callable[[str], bool]:
    """Whether a value is valid for the stdnum module (`de.idnr`, `us.ssn`, …)."""
    return _validator(module)


# UK National Insurance numbers (no stdnum module): two letters of the allowed ranges, six
# digits, a suffix A-D; prefixes never issued are refused.
NINO = re.compile(r"(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]")


def nino(value: str) -> bool:
    return NINO.fullmatch(value.upper()) is not None


def _itin(value: str) -> bool:
    """A US ITIN (stdnum's ranges), not a filler such as `999-99-9999` or `9xx-xx-0000`."""
    digits = value.replace("-", "")
    return len(set(digits)) > 2 and not digits.endswith("0000") and _ITIN(value)


def _validator(module: str) -> Callable[[str], bool]:
    validator: Any = importlib.import_module(f"stdnum.{module}")

    def valid(value: str) -> bool:
        try:
            return bool(validator.is_valid(value))
        except Exception:  # a library gap (an unknown region code) is not a valid number
            return False

    return valid


# (rule, stdnum module, shape, core for hyperscan, needs a label)
_TABLE: tuple[tuple[str, str, str, bytes, bool], ...] = (
    (
        "CN_RIC",
        "cn.ric",
        r"[1-9]\d{5}(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx]",
        rb"[1-9]\d{5}(?:19|20)\d{2}[01]\d[0-3]\d{4}[\dXx]",
        False,
    ),
    ("ES_DNI", "es.dni", r"\d{8}-?[A-HJ-NP-TV-Z]", rb"\d{8}-?[A-HJ-NP-TV-Z]", False),
    ("ES_NIE", "es.nie", r"[XYZ]-?\d{7}-?[A-HJ-NP-TV-Z]", rb"[XYZ]-?\d{7}-?[A-Z]", False),
    (
        "IT_CODICE_FISCALE",
        "it.codicefiscale",
        r"[A-Z]{6}\d{2}[A-EHLMPRST]\d{2}[A-Z]\d{3}[A-Z]",
        rb"[A-Z]{6}\d\d[A-Z]\d\d[A-Z]\d{3}[A-Z]",
        False,
    ),
    (
        "FR_NIR",
        "fr.nir",
        r"[12] ?\d{2} ?(?:0[1-9]|1[0-2]|[2-9]\d) ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}",
        rb"[12] ?\d\d ?\d\d ?[0-9AB]{2} ?\d{3} ?\d{3} ?\d\d",
        False,
    ),
    ("BE_NN", "be.nn", r"\d{2}\.\d{2}\.\d{2}-\d{3}\.\d{2}", rb"\d\d\.\d\d\.\d\d-\d{3}\.\d\d", False),
    # With or without the century (`19910924-2397`, as systems write it); 12 plain digits only
    # beside a label (below).
    ("SE_PERSONNUMMER", "se.personnummer", r"(?:19|20)?\d{6}[-+]\d{4}", rb"(?:\d\d)?\d{6}[-+]\d{4}", False),
    ("FI_HETU", "fi.hetu", r"\d{6}[-+ABCDEFYXWVU]\d{3}[0-9A-FHJ-NPR-Y]", rb"\d{6}[-+A-FU-Y]\d{3}[0-9A-Y]", False),
    ("KR_RRN", "kr.rrn", r"\d{6}-[1-8]\d{6}", rb"\d{6}-\d{7}", False),
    ("BR_CPF", "br.cpf", r"\d{3}\.\d{3}\.\d{3}-\d{2}", rb"\d{3}\.\d{3}\.\d{3}-\d\d", False),
    ("BR_CNPJ", "br.cnpj", r"\d{2}\.\d{3}\.\d{3}/\d{4}-\d{2}", rb"\d\d\.\d{3}\.\d{3}/\d{4}-\d\d", False),
    ("MX_CURP", "mx.curp", r"[A-Z]{4}\d{6}[HMX][A-Z]{5}[0-9A-Z]\d", rb"[A-Z]{4}\d{6}[HMX][A-Z]{5}[0-9A-Z]\d", False),
    ("CL_RUT", "cl.rut", r"\d{1,2}\.\d{3}\.\d{3}-[\dkK]", rb"\d\.\d{3}\.\d{3}-[\dkK]", False),
    ("AR_CUIT", "ar.cuit", r"\d{2}-\d{8}-\d", rb"\d\d-\d{8}-\d", False),
    ("IN_AADHAAR", "in_.aadhaar", r"[2-9]\d{3} \d{4} \d{4}", rb"\d{4} \d{4} \d{4}", False),
    ("US_ITIN", "us.itin", r"9\d{2}-\d{2}-\d{4}", rb"9\d\d-\d\d-\d{4}", False),
    # Switzerland's AHV/AVS number (its social security number): 756, then nine digits and an
    # EAN-13 check digit; printed with its dots it stands alone, plain beside its label.
    ("CH_SSN", "ch.ssn", r"756\.\d{4}\.\d{4}\.\d{2}", rb"756\.\d{4}\.\d{4}\.\d\d", False),
    ("IN_PAN", "in_.pan", r"[A-Z]{3}[ABCFGHLJPT][A-Z]\d{4}[A-Z]", rb"[A-Z]{3}[ABCFGHLJPT][A-Z]\d{4}[A-Z]", False),
    ("GB_NHS", "gb.nhs", r"\d{3}[ -]?\d{3}[ -]?\d{4}", rb"\d{3}[ -]?\d{3}[ -]?\d{4}", True),
    ("CA_SIN", "ca.sin", r"\d{3}[ -]?\d{3}[ -]?\d{3}", rb"\d{3}[ -]?\d{3}[ -]?\d{3}", True),
    ("NL_BSN", "nl.bsn", r"\d{4}\.?\d{2}\.?\d{3}|\d{9}", rb"\d{4}\.?\d\d\.?\d{3}", True),
    ("DE_IDNR", "de.idnr", r"\d{2} ?\d{3} ?\d{3} ?\d{3}", rb"\d\d ?\d{3} ?\d{3} ?\d{3}", True),
    ("PL_PESEL", "pl.pesel", r"\d{11}", rb"\d{11}", True),
    ("DK_CPR", "dk.cpr", r"\d{6}-?\d{4}", rb"\d{6}-?\d{4}", True),
    ("NO_FODSELSNUMMER", "no.fodselsnummer", r"\d{6} ?\d{5}", rb"\d{6} ?\d{5}", True),
    ("RO_CNP", "ro.cnp", r"[1-9]\d{12}", rb"\d{13}", True),
    ("BR_CPF_PLAIN", "br.cpf", r"\d{11}", rb"\d{11}", True),
    ("IN_AADHAAR_PLAIN", "in_.aadhaar", r"[2-9]\d{11}", rb"\d{12}", True),
    ("JP_MY_NUMBER", "jp.in_", r"\d{4} ?\d{4} ?\d{4}", rb"\d{4} ?\d{4} ?\d{4}", True),
    ("AU_TFN", "au.tfn", r"\d{3} ?\d{3} ?\d{2,3}", rb"\d{3} ?\d{3} ?\d\d", True),
    # Beside its label an SSN may be written with spaces or dots (`SSN: 109 99 6000`, `social
    # security number is 109.99.6000`), one separator throughout; hyphens are the unlabelled rule's.
    ("US_SSN_PLAIN", "us.ssn", r"\d{3}([ .]?)\d{2}\1\d{4}", rb"\d{3}[ .]?\d\d[ .]?\d{4}", True),
    # A number a sentence calls an SSN (`SSN: 980-10-8849`) is one whatever its area and group
    # (stdnum refuses the 9xx areas and numbers never issued): only beside `SSN` or `social
    # security`, not the other labels (`_ssn_said`).
    ("US_SSN_SAID", "us.ssn.said", r"\d{3}([ .-]?)\d{2}\1\d{4}", rb"\d{3}[ .-]?\d\d[ .-]?\d{4}", True),
    ("CH_SSN_PLAIN", "ch.ssn", r"756\d{10}", rb"756\d{10}", True),
    ("SE_PERSONNUMMER_PLAIN", "se.personnummer", r"(?:19|20)\d{10}", rb"\d{12}", True),
    ("TR_TCKIMLIK", "tr.tckimlik", r"[1-9]\d{10}", rb"\d{11}", True),
    ("TH_PIN", "th.pin", r"[1-8]\d{12}", rb"\d{13}", True),
)
_ITIN = _validator("us.itin")
_RRN = _validator("kr.rrn")
_RRN_CENTURY = {"1": 1900, "2": 1900, "5": 1900, "6": 1900, "3": 2000, "4": 2000, "7": 2000, "8": 2000}


def _rrn_date(value: str) -> bool:
    """A Korean resident registration number's birth date and sex digit (`YYMMDD-SNNNNNN`).
    Numbers issued since October 2020 carry no check digit, so the check is what `_rrn_said`
    asks for a value without a label."""
    digits = value.replace("-", "")
    try:
        datetime.date(_RRN_CENTURY[digits[6]] + int(digits[:2]), int(digits[2:4]), int(digits[4:6]))
    except (KeyError, ValueError):
        return False
    return len(set(digits[7:])) > 1


def _rrn_said(text: str, start: int, end: int) -> bool:
    """Its check digit right (every number issued before October 2020), or a label before it."""
    return _RRN(text[start:end]) or _labelled(text, start, end)


_SSN = _validator("us.ssn")


def _ssn_separated(value: str) -> bool:
    """A labelled SSN, with its spaces or dots taken out (stdnum's takes hyphens only)."""
    return _SSN(value.replace(" ", "").replace(".", ""))


_SSN_LABEL = re.compile(r"(?i)(?<![A-Za-z])(?:ssn|social[ _-]security)(?![A-Za-z])[^\n\d]{0,24}$")


def _ssn_given(value: str) -> bool:
    """Nine digits that are no valid SSN (the valid ones are the other rules'), none of their
    three groups all zeros, not one or two digits repeated."""
    digits = value.replace(" ", "").replace(".", "").replace("-", "")
    if digits[:3] == "000" or digits[3:5] == "00" or digits[5:] == "0000" or len(set(digits)) <= 2:
        return False
    return not _SSN(digits)


def _ssn_said(text: str, start: int, _end: int) -> bool:
    return _SSN_LABEL.search(text, max(0, start - _AFTER), start) is not None


_OWN_VALIDATORS = {"us.itin": _itin, "kr.rrn": _rrn_date, "us.ssn": _ssn_separated, "us.ssn.said": _ssn_given}
_OWN_CHECKS = {"KR_RRN": _rrn_said, "US_SSN_SAID": _ssn_said}


def detectors() -> tuple[Detector, ...]:
    out = []
    for rule, module, shape, core, needs_label in _TABLE:
        kind = "US_SSN" if module.startswith("us.ssn") else "NATIONAL_ID"
        pattern = re.compile(_D + "(?:" + shape + ")" + _E)
        validate = _OWN_VALIDATORS.get(module) or _validator(module)
        if needs_label:
            # Plain digit runs are everywhere: look for the label, then the number after it.
            detector = Detector(
                kind,
                pattern,
                _LABEL_CORE,
                validate=validate,
                rule=rule,
                check=_OWN_CHECKS.get(rule, _labelled),
                reach=_AFTER + 24,
                keyword_core=_LABEL_SPAN,
                follows=True,
                skip_to=_NUMBER_RUN,
                starts=_STARTS,
            )
        else:
            detector = Detector(
                kind,
                pattern,
                rb"(?:^|[^\w.+/-])(?:" + core + rb")",  # from a token's start: see detect.py
                validate=validate,
                rule=rule,
                check=_OWN_CHECKS.get(rule),
            )
        out.append(detector)
    # A UK National Insurance number beside its label (`NI number: AB 12 34 56 C`): letters lead
    # it, so its window is searched from a head, not from a run of digits.
    out.append(
        Detector(
            "NATIONAL_ID",
            re.compile(_D + "(?:" + NINO.pattern + ")" + _E),
            _LABEL_CORE,
            validate=nino,
            rule="GB_NINO",
            check=_labelled,
            reach=_AFTER + 24,
            keyword_core=_LABEL_SPAN,
            follows=True,
            head=re.compile(r"[A-Z][A-Z] ?\d"),
        )
    )
    return tuple(out)

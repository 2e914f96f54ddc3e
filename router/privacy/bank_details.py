"""Bank details and card security codes beside their labels (default kinds).

A US bank account travels with its routing number (ABA: nine digits whose check holds), a UK
one with its sort code, an Australian one with its BSB; a card's security code (CVV, CVC, CID)
beside its card; a US employer identification number (EIN) under its name. None has a shape of
its own (a run of digits), so each is read only after a label naming it: `Routing number:`,
`ABA/Routing`, `checking account`, `Account #`, `Sort code`, `BSB`, `CVV`, `EIN`, in prose, a
form, a JSON record (`"routing_number": "…"`); a bare `Account:` only with a bank's word before it
(`routing`, `sort code`, `BSB`, `bank`), and a bare `security code` or `CID` only with a card's.
A cloud's account (`AWS account number 123456789012`) is none. Bank accounts, routing numbers,
sort codes and BSBs are reported as `IBAN` (the kind of a bank account), security codes as
`CARD`, EINs as `NATIONAL_ID`. Columns named for them are read by the column pass
(`id_columns.py`).
"""

from __future__ import annotations

import re

from stdnum.us import ein as _ein
from stdnum.us import rtn as _rtn

from router.privacy.detector import Detector

# Between a label and its value: a closing quote, a colon, `=`, `#` or `is`, an opening quote.
_SEP = r"[\"']?[ \t]*(?:[:=#]|\bis\b)?[ \t]*[\"']?"
_NUMBER = r"(?:[ \t_-]*(?:number|num|no\b\.?|nr\b|#))?"
# A bank's kinds of account, as statements and banking apps name them (`Checking Account
# (93766956)`, `Money Market Account's 54065365`, `Home Loan Account (#53901976)`).
_ACCOUNT_TYPES = (
    r"bank|checking|chequing|savings|deposit|money[ \t]+market|investment|brokerage|(?:home|auto|car|personal"
    r"|student)[ \t]+loan|loan|mortgage|credit[ \t]+card|retirement|escrow|trust"
)
# After a named account also a possessive, a bracket, `to` or `with the number` (`update the
# account number to …`).
_TYPED_SEP = (
    r"(?:['’]s\b|[ \t]+to\b|[ \t]+with(?:[ \t]+the)?[ \t]+number\b)?"
    r"[\"']?[ \t]*(?:[:=#]|\bis\b)?[ \t]*(?:\(#?|[\"'#])?"
)
_BANK_CONTEXT = re.compile(r"(?i)\b(?:routing|aba|sort[ \t_-]?code|bsb|bank|iban|swift|wire|deposit|transit)\b")
_CARD_CONTEXT = re.compile(r"(?i)\b(?:card|visa|mastercard|amex|american express|discover|exp(?:iry|iration)?)\b")
# The cores hold the value's first digits: the labels' words alone (`account`, `routing`,
# `verification`) are everywhere in code and logs, each a window to search.
_ACCOUNT_CORE = rb"(?i)(?:account|acct)[^\n\d]{0,24}\d{6}"
_CLOUD_BEFORE = re.compile(r"(?i)\b(?:aws|amazon|azure|gcp|google|cloud|project|billing)\W{0,3}$")


def routing_number(value: str) -> bool:
    """An ABA routing number: its check digit and a Federal Reserve prefix (00-12, 21-32, 61-72, 80)."""
    prefix = int(value[:2])
    return _rtn.is_valid(value) and (prefix <= 12 or 21 <= prefix <= 32 or 61 <= prefix <= 72 or prefix == 80)


def account_number(value: str) -> bool:
    """6 to 17 digits, not one digit repeated or a count up (`123456789`)."""
    return len(set(value)) > 2 and value not in "01234567890123456789"


def employer_id(value: str) -> bool:
    return bool(_ein.is_valid(value))


def _bank_before(text: str, start: int, _end: int) -> bool:
    return _BANK_CONTEXT.search(text, max(0, start - 240), start) is not None


def _card_before(text: str, start: int, _end: int) -> bool:
    return _CARD_CONTEXT.search(text, max(0, start - 240), start) is not None


def _not_a_cloud_account(text: str, start: int, _end: int) -> bool:
    """The label's line before it does not name a cloud (`AWS account number …`)."""
    line = text.rfind("\n", 0, start) + 1
    label = text[line:start]
    at = label.lower().rfind("acc")
    return _CLOUD_BEFORE.search(label[: max(0, at)]) is None


DETECTORS: tuple[Detector, ...] = (
    Detector(
        "IBAN",
        re.compile(
            r"(?i:\b(?:aba(?:[ \t]*/[ \t]*routing)?|routing(?:[ \t]*/[ \t]*transit)?|rtn)" + _NUMBER + ")"
            rf"{_SEP}(\d{{9}})(?![\d-])"
        ),
        rb"(?i)(?:routing|\baba\b|\brtn\b)[^\n\d]{0,24}\d{9}",
        validate=routing_number,
        group=1,
        reach=40,
        follows=True,
        rule="routing-number",
        keyword_core=40,
    ),
    Detector(
        "IBAN",
        re.compile(
            rf"(?i:(?:\b(?:{_ACCOUNT_TYPES})[ \t_-]+(?:account|acct)" + _NUMBER + ")"
            r"|\b(?:account|acct)(?:[ \t_-]*(?:number|num|no\b\.?|nr\b|#)))"
            rf"{_TYPED_SEP}(\d{{6,17}})(?![\d-])"
        ),
        _ACCOUNT_CORE,
        validate=account_number,
        check=_not_a_cloud_account,
        group=1,
        reach=40,
        follows=True,
        rule="bank-account",
        keyword_core=37,
    ),
    Detector(
        "IBAN",
        # A bare `Account:` in bank details (after a routing number, a sort code, a BSB).
        re.compile(rf"(?i:\b(?:account|acct))(?:[ \t]*[:=]|[ \t]+){_SEP}(\d{{6,17}})(?![\d-])"),
        _ACCOUNT_CORE,
        validate=account_number,
        check=_bank_before,
        group=1,
        reach=40,
        follows=True,
        rule="bank-account",
        keyword_core=37,
    ),
    Detector(
        "IBAN",
        re.compile(rf"(?i:\bsort[ \t_-]?code){_SEP}(\d{{2}}[- ]?\d{{2}}[- ]?\d{{2}})(?![\d-])"),
        rb"(?i)sort[ _-]?code",
        group=1,
        reach=40,
        follows=True,
        rule="sort-code",
        keyword_core=9,
    ),
    Detector(
        "IBAN",
        re.compile(rf"\b(?:BSB|bsb)(?i:{_NUMBER}){_SEP}(\d{{3}}[- ]?\d{{3}})(?![\d-])"),
        rb"(?:BSB|bsb)",
        group=1,
        reach=40,
        follows=True,
        rule="bsb",
        keyword_core=3,
    ),
    Detector(
        "CARD",
        re.compile(
            r"(?i:\b(?:cvv2?|cvc2?|cvn|card[ \t]+security[ \t]+code|card[ \t]+verification[ \t]+(?:code|value|number)))"
            rf"{_SEP}(\d{{3,4}})(?![\d-])"
        ),
        rb"(?i)(?:cvv|cvc|cvn|security code|verification)[^\n\d]{0,24}\d{3}",
        group=1,
        reach=40,
        follows=True,
        rule="card-security-code",
        keyword_core=40,
    ),
    Detector(
        "CARD",
        re.compile(rf"(?i:\b(?:security[ \t]+code|cid|csc)){_SEP}(\d{{3,4}})(?![\d-])"),
        rb"(?i)(?:security code|\bcid\b|\bcsc\b)[^\n\d]{0,24}\d{3}",
        check=_card_before,
        group=1,
        reach=40,
        follows=True,
        rule="card-security-code",
        keyword_core=40,
    ),
    Detector(
        "NATIONAL_ID",
        re.compile(
            # `EIN` in capitals (German's `ein` is a word) or as a JSON key; the rest in any case.
            r"(?:\bF?EIN\b|\"f?ein\"|(?i:\b(?:employer[ \t]+identification[ \t]+number"
            r"|(?:federal[ \t]+)?(?:tax|employer)[ \t]+id(?:entification)?" + _NUMBER + ")))"
            rf"{_SEP}(\d{{2}}-\d{{7}})(?![\d-])"
        ),
        rb"(?:\bF?EIN\b|\"f?ein\"|[Ii]dentification [Nn]umber|(?:[Tt]ax|TAX) [Ii][Dd]|[Ee]mployer [Ii][Dd])"
        rb"[^\n\d]{0,24}\d\d-\d{7}",
        validate=employer_id,
        group=1,
        reach=40,
        follows=True,
        rule="us-ein",
        keyword_core=55,
    ),
)

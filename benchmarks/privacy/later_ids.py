"""National ids, tax numbers and documents' numbers in the forms agents read, written after the
detectors and scored blind once.

HR and KYC exports (CSV, JSON), tax forms, onboarding chats and tickets in the ids' own
languages, with the labels each country's forms print (`Steuer-ID`, `NINO`, `codice fiscale`,
`CPF`, `numer PESEL`, `DNI`, `numéro de sécurité sociale`, `Aadhaar`, `PAN`, `CURP`, `주민등록번호`,
`身份证号`, `マイナンバー`, `personnummer`, `CPR-nr.`, `henkilötunnus`, `fødselsnummer`, `TFN`,
`SIN`), passports and driving licences under their labels. Each value is drawn at random in its
id's shape until python-stdnum's own validator accepts it (the check digits right), so the set
tests where and how the values are written, not the checks.

Scored blind, before anything was changed (3 rounds): 60 of 60, no false finding (200 of 200
over ten rounds). Nothing was changed for it: a regression check from the start.

    python -m benchmarks.privacy.later_ids [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import importlib
import json
import random
from collections.abc import Callable

from benchmarks.privacy.later_people import Item, collector, set_main

FORMS: list[Callable[[], Item]] = []
R = random.Random(0)  # reseeded per round (`score`)
KINDS = frozenset({"NATIONAL_ID", "US_SSN"})


form = collector(FORMS)


def valid(module: str, shape: Callable[[], str]) -> str:
    """A value of `shape` that stdnum's `module` accepts."""
    checker = importlib.import_module(f"stdnum.{module}")
    for _ in range(100_000):
        value = shape()
        if checker.is_valid(value):
            return value
    raise AssertionError(f"no valid {module} drawn")


def digits(n: int) -> str:
    return "".join(str(R.randint(0, 9)) for _ in range(n))


def date6() -> str:
    return f"{R.randint(50, 99):02d}{R.randint(1, 12):02d}{R.randint(1, 28):02d}"


def letters(n: int) -> str:
    return "".join(R.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(n))


def _one(text: str, value: str, kind: str = "NATIONAL_ID") -> Item:
    return text, [(kind, value)]


@form
def hr_csv_sin() -> Item:
    sin = valid("ca.sin", lambda: f"{R.randint(1, 7)}{digits(2)} {digits(3)} {digits(3)}")
    return _one(f"employee_id,name,sin,start\n1042,J. Tremblay,{sin},2023-04-01", sin)


@form
def kyc_json_cpf() -> Item:
    cpf = valid("br.cpf", lambda: f"{digits(3)}.{digits(3)}.{digits(3)}-{digits(2)}")
    return _one(json.dumps({"customer": {"document_type": "CPF", "document": cpf}}), cpf)


@form
def steuer_id() -> Item:
    idnr = valid("de.idnr", lambda: f"{R.randint(1, 9)}{digits(1)} {digits(3)} {digits(3)} {digits(3)}")
    return _one(f"Ihre Steuer-ID: {idnr}\nBitte bewahren Sie dieses Schreiben auf.", idnr)


@form
def codice_fiscale() -> Item:
    value = valid(
        "it.codicefiscale",
        lambda: (
            f"{letters(6)}{R.randint(50, 99)}{R.choice('ABCDEHLMPRST')}{R.randint(1, 28):02d}"
            f"{R.choice('FGHL')}{R.randint(100, 999)}{letters(1)}"
        ),
    )
    return _one(f"Codice fiscale: {value}", value)


@form
def pesel_prose() -> Item:
    value = valid("pl.pesel", lambda: date6() + digits(5))
    return _one(f"Proszę podać numer PESEL {value} w formularzu.", value)


@form
def dni_prose() -> Item:
    value = valid("es.dni", lambda: digits(8) + R.choice("TRWAGMYFPDXBNJZSQVHLCKE"))
    return _one(f"Mi DNI es {value}, ¿pueden actualizar la reserva?", value)


@form
def nir_french() -> Item:
    value = valid(
        "fr.nir",
        lambda: (
            f"{R.randint(1, 2)}{R.randint(50, 99)}{R.randint(1, 12):02d}{R.randint(1, 95):02d}{digits(6)}{digits(2)}"
        ),
    )
    spaced = f"{value[0]} {value[1:3]} {value[3:5]} {value[5:7]} {value[7:10]} {value[10:13]} {value[13:]}"
    return _one(f"N° de sécurité sociale : {spaced}", spaced)


@form
def aadhaar_form() -> Item:
    value = valid("in_.aadhaar", lambda: f"{R.randint(2, 9)}{digits(3)} {digits(4)} {digits(4)}")
    return _one(f"Aadhaar No.: {value}\nName as per Aadhaar: R. Iyer", value)


@form
def pan_ticket() -> Item:
    value = valid("in_.pan", lambda: f"{letters(3)}P{letters(1)}{digits(4)}{letters(1)}")
    return _one(f"Customer updated PAN to {value} for the TDS certificate.", value)


@form
def curp_json() -> Item:
    value = valid(
        "mx.curp",
        lambda: (
            f"{letters(4)}{date6()}{R.choice('HM')}{R.choice(['DF', 'JC', 'NL', 'MC'])}{letters(3)}{R.choice('0A')}{digits(1)}"
        ),
    )
    return _one(json.dumps({"curp": value, "estado": "activo"}), value)


@form
def korean_rrn() -> Item:
    value = valid("kr.rrn", lambda: f"{date6()}-{R.randint(1, 4)}{digits(6)}")
    return _one(f"주민등록번호: {value}", value)


@form
def chinese_ric() -> Item:
    value = valid(
        "cn.ric",
        lambda: (
            f"110101{R.randint(1960, 2000)}{R.randint(1, 12):02d}{R.randint(1, 28):02d}{digits(3)}{R.choice('0123456789X')}"
        ),
    )
    return _one(f"身份证号：{value}", value)


@form
def my_number() -> Item:
    value = valid("jp.in_", lambda: digits(12))
    grouped = f"{value[:4]} {value[4:8]} {value[8:]}"
    return _one(f"マイナンバー（個人番号）: {grouped}", grouped)


@form
def personnummer() -> Item:
    value = valid("se.personnummer", lambda: f"{date6()}-{digits(4)}")
    return _one(f"Personnummer: {value}", value)


@form
def cpr() -> Item:
    value = valid("dk.cpr", lambda: f"{R.randint(1, 28):02d}{R.randint(1, 12):02d}{R.randint(50, 99)}-{digits(4)}")
    return _one(f"CPR-nr.: {value}", value)


@form
def hetu() -> Item:
    value = valid(
        "fi.hetu",
        lambda: (
            f"{R.randint(1, 28):02d}{R.randint(1, 12):02d}{R.randint(50, 99)}-{R.randint(2, 899):03d}{R.choice('0123456789ABCDEFHJKLMNPRSTUVWXY')}"
        ),
    )
    return _one(f"Henkilötunnus {value}", value)


@form
def fodselsnummer() -> Item:
    value = valid(
        "no.fodselsnummer", lambda: f"{R.randint(1, 28):02d}{R.randint(1, 12):02d}{R.randint(50, 99)}{digits(5)}"
    )
    return _one(f"fødselsnummer: {value}", value)


@form
def tfn() -> Item:
    value = valid("au.tfn", lambda: f"{digits(3)} {digits(3)} {digits(3)}")
    return _one(f"Please quote your TFN ({value}) on the form.", value)


@form
def bsn_csv() -> Item:
    value = valid("nl.bsn", lambda: digits(9))
    return _one(f"klantnummer;naam;bsn\n8812;De Vries;{value}", value)


@form
def ssn_json() -> Item:
    value = valid("us.ssn", lambda: f"{R.randint(100, 665)}-{R.randint(10, 99)}-{R.randint(1000, 9999)}")
    return _one(json.dumps({"applicant": {"ssn": value, "dob": "1985-02-14"}}), value, "US_SSN")


@form
def negatives() -> Item:
    return (
        R.choice(
            [
                "Order 4417-2291-0045 shipped",
                "build id 20240301-1205",
                "invoice no. 2024/000123",
                "tracking 1Z999AA10123456784",
                "ISBN 978-3-16-148410-0",
            ]
        ),
        [],
    )


def main(argv: list[str] | None = None) -> None:
    set_main(FORMS, R, __doc__ or "", argv, KINDS)


if __name__ == "__main__":
    main()

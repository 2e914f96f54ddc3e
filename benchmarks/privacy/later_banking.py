"""Bank details and card security codes in the forms an agent reads them, written after the
detectors and scored blind once (a thirty-fifth set; default kinds).

What support tickets, payment records, payroll files and wire instructions hold beside a card
or an IBAN: a US bank account with its routing number (ABA, check digit valid) under their
labels, in prose, in a JSON record, a CSV export and an SQL INSERT, in wire and direct-deposit
instructions; a UK sort code with its account number, an Australian BSB with its account; a
card's security code (CVV, CVC, CID) beside its card, in a JSON payment record and in a chat; a
US employer identification number (EIN) under its labels. Values are random (a routing number's
and an EIN's prefix and check as real ones have them).

    python -m benchmarks.privacy.later_banking [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import json
from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, R, registrar, set_main

FORMS: list[tuple[str, Callable[[], Form]]] = []
form = registrar("banking", FORMS)

_ROUTING_PREFIXES = [f"{n:02d}" for n in (*range(1, 13), *range(21, 33))]
_EIN_PREFIXES = ["12", "20", "27", "35", "45", "46", "52", "61", "74", "84", "91", "94"]


def digits(n: int) -> str:
    return str(R.randrange(1, 10)) + "".join(str(R.randrange(10)) for _ in range(n - 1))


def routing() -> str:
    """Nine digits whose ABA check holds (3, 7, 1 weights, a multiple of 10)."""
    body = R.choice(_ROUTING_PREFIXES) + "".join(str(R.randrange(10)) for _ in range(6))
    weights = (3, 7, 1, 3, 7, 1, 3, 7)
    check = (10 - sum(int(d) * w for d, w in zip(body, weights, strict=True)) % 10) % 10
    return body + str(check)


def account() -> str:
    return digits(R.choice([8, 10, 12]))


def cvv(amex: bool = False) -> str:
    return "".join(str(R.randrange(10)) for _ in range(4 if amex else 3))


def ein() -> str:
    return f"{R.choice(_EIN_PREFIXES)}-{digits(7)}"


@form
def labelled_pair() -> Form:
    r, a = routing(), account()
    return f"Routing number: {r}\nAccount number: {a}\n", [r, a]


@form
def wire_instructions() -> Form:
    r, a = routing(), account()
    text = (
        "Wire instructions\nBeneficiary: Acme Supplies LLC\nBank: First National Bank\n"
        f"ABA/Routing: {r}\nAccount #: {a}\nSWIFT: FNBKUS44\nReference: INV-2291"
    )
    return text, [r, a]


@form
def direct_deposit() -> Form:
    r, a = routing(), account()
    return f"Direct deposit form\nBank routing no. {r}\nChecking acct no. {a}\nAmount: 100% of net pay", [r, a]


@form
def chat_checking() -> Form:
    r, a = routing(), account()
    return f"hey can you refund it to my checking account {a}, routing {r}? thanks", [a, r]


@form
def json_record() -> Form:
    r, a = routing(), account()
    record = {"customer_id": 88213, "bank_name": "Chase", "routing_number": r, "account_number": a, "type": "checking"}
    return json.dumps(record, indent=2), [r, a]


@form
def csv_export() -> Form:
    rows = [(routing(), account()) for _ in range(2)]
    lines = ["employee_id,name,routing_number,account_number,split"]
    lines += [f"{1040 + i},Employee {i},{r},{a},100" for i, (r, a) in enumerate(rows)]
    return "\n".join(lines), [value for row in rows for value in row]


@form
def sql_insert() -> Form:
    r, a = routing(), account()
    text = (
        "INSERT INTO bank_accounts (user_id, routing_number, account_number, account_type) "
        f"VALUES (42, '{r}', '{a}', 'savings');"
    )
    return text, [r, a]


@form
def uk_sort_code() -> Form:
    sort = f"{R.randrange(10, 99)}-{R.randrange(10, 99)}-{R.randrange(10, 99)}"
    a = digits(8)
    return f"Please pay into: Sort code {sort}, Account number {a} (J Smith)", [sort, a]


@form
def au_bsb() -> Form:
    bsb = f"{R.randrange(100, 999)}-{R.randrange(100, 999)}"
    a = digits(9)
    return f"Bank transfer details:\nBSB: {bsb}\nAccount: {a}\nAccount name: K Nguyen", [bsb, a]


@form
def card_with_cvv() -> Form:
    code = cvv()
    return f"Card: 4111 1111 1111 1111\nExp: 09/27\nCVV: {code}\nName on card: Dana Reyes", [code]


@form
def json_payment() -> Form:
    code = cvv()
    payment = {"card": {"number": "5555555555554444", "exp_month": 9, "exp_year": 2027, "cvc": code}}
    return json.dumps(payment), [code]


@form
def amex_chat() -> Form:
    code = cvv(amex=True)
    return f"the amex ends in 0005, security code {code}, can you try the charge again", [code]


@form
def ein_labelled() -> Form:
    value = ein()
    return f"W-9 on file\nBusiness name: Acme Supplies LLC\nEIN: {value}\nEntity: LLC", [value]


@form
def ein_prose() -> Form:
    value = ein()
    return f"Our federal tax ID number is {value}; please update the vendor record.", [value]


def main(argv: list[str] | None = None) -> None:
    set_main("banking", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()

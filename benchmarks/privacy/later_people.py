"""Names and postal addresses in agent forms written after the detectors, scored blind once.

`people_forms.py`'s forms (CSV, SQL, tickets, e-mails, JSON, YAML, logs, prose) and the name and
address finders were written together. These 21 forms were written later, from what agents read
in tool output (git log and blame, `Co-authored-by`, GitHub's and Slack's JSON, a Jira issue, an
ICS invite, a vCard, a Stripe customer, Markdown and HTML tables, package.json, LDIF, a European
CSV, a support chat, key=value logs, psql's and the Mongo shell's output, an e-mail signature, a
Django fixture, and look-alikes), and scored by `detect` with `person` and `address` on before
anything was changed for them: PERSON 66 of 78 values (all 12 misses in psql's output, whose
rule line ended the table), ADDRESS 27 of 27; then psql's rule line was read as a rule. Names
and streets are this module's own (not the name lists' or the generator's of `people_forms`).

    python -m benchmarks.privacy.later_people [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter
from collections.abc import Callable

from router.privacy.detect import detect

Item = tuple[str, list[tuple[str, str]]]  # (text, the (kind, value) pairs in it)
FORMS: list[Callable[[], Item]] = []
R = random.Random(0)  # reseeded per round (`score`)
PEOPLE = frozenset({"person", "address"})

FIRST = [
    "Maria",
    "Tomasz",
    "Aiko",
    "Oluwaseun",
    "Priya",
    "Mateo",
    "Ingrid",
    "Kwame",
    "Sofia",
    "Dmitri",
    "Leila",
    "Hannah",
    "Rafael",
    "Mei",
    "Gustavo",
    "Annika",
    "Tariq",
    "Chloe",
    "Bartholomew",
    "Nkechi",
    "Esther",
    "Joaquín",
    "Saoirse",
    "Henrik",
]
LAST = [
    "Garcia",
    "Kowalczyk",
    "Tanaka",
    "Adeyemi",
    "Raman",
    "Fernández",
    "Lindqvist",
    "Mensah",
    "Rossi",
    "Volkov",
    "Haddad",
    "Becker",
    "Oliveira",
    "Zhang",
    "Pereira",
    "Virtanen",
    "Qureshi",
    "Dubois",
    "Whitcombe",
    "Okafor",
    "Goldberg",
    "Iturbe",
    "Ní Bhriain",
    "Solberg",
]
STREETS = [
    "Elm Street",
    "Maple Avenue",
    "Oak Lane",
    "Harbor Road",
    "Kingsley Drive",
    "Birchwood Court",
    "Mill Road",
    "Station Road",
]
CITIES = [
    ("Springfield", "IL", "62701"),
    ("Portland", "OR", "97205"),
    ("Austin", "TX", "78701"),
    ("Madison", "WI", "53703"),
]
EU = [
    ("Hauptstraße {n}", "10115 Berlin"),
    ("{n} rue de la Paix", "75002 Paris"),
    ("Calle Mayor {n}", "28013 Madrid"),
    ("Via Roma {n}", "00184 Roma"),
    ("{n} High Street", "Oxford OX1 4AP"),
]


def _json(value: object, indent: int | None = None) -> str:
    # UTF-8 as APIs write it (GitHub's, Stripe's); Python's escaped `\u00e1` is a limit apart.
    return json.dumps(value, ensure_ascii=False, indent=indent)


def form(make: Callable[[], Item]) -> Callable[[], Item]:
    FORMS.append(make)
    return make


def person() -> tuple[str, str]:
    return R.choice(FIRST), R.choice(LAST)


def us_addr() -> tuple[str, str]:
    c = R.choice(CITIES)
    n = R.randint(10, 9999)
    return f"{n} {R.choice(STREETS)}", f"{c[0]}, {c[1]} {c[2]}"


@form
def git_log() -> Item:
    f, s = person()
    return (
        f"commit 3f2a9c1e4b5d6a7f8e9d0c1b2a3f4e5d6c7b8a9f\nAuthor: {f} {s} <{f.lower()}.{s.lower()}@acme.io>\nDate:   Tue Mar 5 14:02:11 2024 +0100\n\n    Fix retry loop\n",
        [("PERSON", f"{f} {s}")],
    )


@form
def git_blame() -> Item:
    f, s = person()
    return (
        f"3f2a9c1e (John Smith 2024-03-05 14:02:11 +0100 41)     retries = 3\n9d0c1b2a ({f} {s} 2024-02-11 09:15:42 +0100 42)     backoff = 0.5",
        [("PERSON", "John Smith"), ("PERSON", f"{f} {s}")],
    )


@form
def co_authored() -> Item:
    f, s = person()
    return (
        f"Merge pull request #412\n\nCo-authored-by: {f} {s} <{f.lower()}@users.noreply.github.com>",
        [("PERSON", f"{f} {s}")],
    )


@form
def gh_user_json() -> Item:
    f, s = person()
    return (
        _json(
            {"login": f.lower() + "dev", "id": 1234567, "name": f"{f} {s}", "company": "Acme", "location": "Berlin"},
            indent=2,
        ),
        [("PERSON", f"{f} {s}")],
    )


@form
def jira() -> Item:
    f, s = person()
    f2, l2 = person()
    return (
        f"PROJ-1432  Checkout fails for EU cards\nStatus: In Progress\nAssignee: {f} {s}\nReporter: {f2} {l2}\nPriority: High",
        [("PERSON", f"{f} {s}"), ("PERSON", f"{f2} {l2}")],
    )


@form
def slack_export() -> Item:
    f, s = person()
    return (
        _json(
            {
                "user": "U04ABC123",
                "user_profile": {"real_name": f"{f} {s}", "display_name": f.lower()},
                "text": "deploy is done",
                "ts": "1709643731.000200",
            }
        ),
        [("PERSON", f"{f} {s}")],
    )


@form
def ics() -> Item:
    f, s = person()
    return (
        f"BEGIN:VEVENT\nSUMMARY:Incident review\nORGANIZER;CN={f} {s}:mailto:{f.lower()}@acme.io\nDTSTART:20240305T140000Z\nEND:VEVENT",
        [("PERSON", f"{f} {s}")],
    )


@form
def vcard() -> Item:
    f, s = person()
    st, city = us_addr()
    return (
        f"BEGIN:VCARD\nVERSION:3.0\nFN:{f} {s}\nN:{s};{f};;;\nADR;TYPE=home:;;{st};{city.split(',')[0]};{city.split(' ')[-2]};{city.split(' ')[-1]};USA\nEND:VCARD",
        [("PERSON", f"{f} {s}"), ("ADDRESS", st)],
    )


@form
def stripe_customer() -> Item:
    f, s = person()
    st, city = us_addr()
    c, rest = city.split(", ")
    state, z = rest.split(" ")
    return (
        _json(
            {
                "id": "cus_PqR8sT",
                "object": "customer",
                "name": f"{f} {s}",
                "address": {"line1": st, "city": c, "state": state, "postal_code": z, "country": "US"},
            },
            indent=2,
        ),
        [("PERSON", f"{f} {s}"), ("ADDRESS", st)],
    )


@form
def md_table() -> Item:
    f, s = person()
    st, city = us_addr()
    return (
        f"| Customer | Street | City |\n|---|---|---|\n| {f} {s} | {st} | {city} |",
        [("PERSON", f"{f} {s}"), ("ADDRESS", st)],
    )


@form
def html_table() -> Item:
    f, s = person()
    st, city = us_addr()
    return (f"<tr><td>{f} {s}</td><td>{st}</td><td>{city}</td></tr>", [("PERSON", f"{f} {s}"), ("ADDRESS", st)])


@form
def package_json() -> Item:
    f, s = person()
    return (
        _json(
            {"name": "acme-ui", "version": "2.1.0", "author": f"{f} {s} <{f.lower()}@acme.io>", "license": "MIT"},
            indent=2,
        ),
        [("PERSON", f"{f} {s}")],
    )


@form
def ldif() -> Item:
    f, s = person()
    st, city = us_addr()
    return (
        f"dn: uid={f.lower()},ou=people,dc=acme,dc=io\ncn: {f} {s}\nsn: {s}\ngivenName: {f}\nstreet: {st}\nl: {city.split(',')[0]}\nmail: {f.lower()}@acme.io",
        [("PERSON", f"{f} {s}"), ("PERSON", f), ("PERSON", s), ("ADDRESS", st)],
    )


@form
def eu_csv() -> Item:
    f, s = person()
    st, city = R.choice(EU)
    st = st.format(n=R.randint(1, 99))
    return (f"customer_id,full_name,street,city\n4821,{f} {s},{st},{city}", [("PERSON", f"{f} {s}"), ("ADDRESS", st)])


@form
def chat_transcript() -> Item:
    f, s = person()
    st, city = us_addr()
    return (
        f"[10:02] Customer: Hi, my name is {f} {s} and my order never arrived.\n[10:03] Agent: Sorry to hear that! Can you confirm the shipping address?\n[10:04] Customer: {st}, {city}",
        [("PERSON", f"{f} {s}"), ("ADDRESS", st)],
    )


@form
def kv_log() -> Item:
    f, s = person()
    return (
        f'2024-03-05T14:02:11Z level=info msg="login ok" user_id=8812 name="{f} {s}" ip=10.0.3.17',
        [("PERSON", f"{f} {s}")],
    )


@form
def psql_rows() -> Item:
    f, s = person()
    f2, l2 = person()
    return (
        f" id | first_name | last_name |     email\n----+------------+-----------+---------------\n  1 | {f}      | {s}     | {f.lower()}@acme.io\n  2 | {f2}      | {l2}     | {f2.lower()}@acme.io\n(2 rows)",
        [("PERSON", f), ("PERSON", s), ("PERSON", f2), ("PERSON", l2)],
    )


@form
def mongo_out() -> Item:
    f, s = person()
    st, city = us_addr()
    return (
        f"{{ _id: ObjectId('65e7a1f2c3d4e5f6a7b8c9d0'), name: '{f} {s}', address: {{ street: '{st}', city: '{city.split(',')[0]}' }} }}",
        [("PERSON", f"{f} {s}"), ("ADDRESS", st)],
    )


@form
def email_sig() -> Item:
    f, s = person()
    st, city = us_addr()
    return (
        f"Thanks for the quick fix!\n\nBest regards,\n{f} {s}\nSenior Buyer, Northwind Traders\n{st}\n{city}\n+1 217 555 0143",
        [("PERSON", f"{f} {s}"), ("ADDRESS", st)],
    )


@form
def py_fixture() -> Item:
    f, s = person()
    return (
        f'User.objects.create(username="{f.lower()}", first_name="{f}", last_name="{s}", email="{f.lower()}@acme.io")',
        [("PERSON", f), ("PERSON", s)],
    )


@form
def negatives() -> Item:
    return (
        R.choice(
            [
                "Processed 42 items in 3.2s\nRetrying in 5 seconds",
                "Victoria Falls Lodge booking API v2",
                "from django.contrib.auth.models import User",
                "Jenkins Pipeline finished: SUCCESS",
                "See the Apache License 2.0 and the Python Software Foundation",
            ]
        ),
        [],
    )


def score(
    seeds: int,
    forms: list[Callable[[], Item]] | None = None,
    rng: random.Random | None = None,
    kinds: frozenset[str] | None = None,
) -> tuple[Counter[str], Counter[str], list[tuple[str, str, str]]]:
    """Per kind, values found and missed over `seeds` rounds, and the false findings; the
    misses and false findings as (form, kind, value). `forms` (default this module's) draw
    their values from `rng` (default `R`), reseeded each round. `kinds`: the default kinds'
    findings are scored instead of PERSON's and ADDRESS's (a route with no opt-in kind)."""
    found: Counter[str] = Counter()
    missed: Counter[str] = Counter()
    wrong: list[tuple[str, str, str]] = []
    for seed in range(seeds):
        (rng or R).seed(seed)
        for make in forms or FORMS:
            text, labels = make()
            if kinds is None:
                findings = [f for f in detect(text, PEOPLE) if f.type in ("PERSON", "ADDRESS")]
            else:
                findings = [f for f in detect(text) if f.type in kinds]
            spans = []
            for kind, value in labels:
                # Every place the value is written is a place of it (LDIF's `cn`, `sn` and
                # `givenName` write one person three times); one found is enough.
                places = [(m.start(), m.end()) for m in re.finditer(re.escape(value), text)]
                spans.extend(places)
                if any(
                    f.type == kind and f.start <= at + 1 and end - 1 <= f.end for at, end in places for f in findings
                ):
                    found[kind] += 1
                else:
                    missed[kind] += 1
                    wrong.append((make.__name__, f"missed {kind}", value))
            for f in findings:
                if not any(f.start < end and start < f.end for start, end in spans):
                    found["false"] += 1
                    wrong.append((make.__name__, f"false {f.type}", f.value))
    return found, missed, wrong


def collector(forms: list[Callable[[], Item]]) -> Callable[[Callable[[], Item]], Callable[[], Item]]:
    """A decorator adding a form function to `forms` (the later sets' modules of values)."""

    def add(make: Callable[[], Item]) -> Callable[[], Item]:
        forms.append(make)
        return make

    return add


def set_main(
    forms: list[Callable[[], Item]],
    rng: random.Random,
    doc: str,
    argv: list[str] | None,
    kinds: frozenset[str] | None = None,
) -> None:
    """The command line of a later set of values: per kind found of labelled, false findings,
    and with `--show-missed` the misses (`score`'s arguments otherwise)."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=3, help="rounds, each with its own values")
    parser.add_argument("--show-missed", action="store_true")
    args = parser.parse_args(argv)
    found, missed, wrong = score(args.seeds, forms, rng, kinds)
    for kind in sorted((set(found) | set(missed)) - {"false"}):
        total = found[kind] + missed[kind]
        print(f"{kind:16} found {found[kind]} of {total} ({found[kind] / total:.3f})")
    print(f"false findings: {found['false']}")
    if args.show_missed:
        for name, what, value in wrong:
            print(f"  {name}: {what}: {value!r}")


def main(argv: list[str] | None = None) -> None:
    set_main(FORMS, R, __doc__ or "", argv)


if __name__ == "__main__":
    main()

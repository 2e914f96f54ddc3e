"""Postal addresses in forms the earlier sets left out, written after the address finder and
scored blind once.

`later_addresses.py` covers 16 countries' street lines in records, requests and APIs. These are
what remained: military post (`PSC 1234, Box 5678`, `Unit 2050 Box 4190`, `APO AE 09021`), a
rural route, a PO box alone, addresses typed in lower case in chat, a street line in a sentence
with no postcode, an address with its landmark as India's are written, Brazil's and Mexico's
(`Av. Paulista, 1578 - Bela Vista`, `Calle 5 de Mayo #123, Col. Centro`), Russia's in Cyrillic,
Poland's `ul. … m. …`, Italy's `Via …, 00100 Roma RM`, Korea's and China's in romanisation, a
map link's query, a delivery note's `line1`/`line2` in JSON, a ticket's address after `ship to`,
and look-alikes (versions, sizes, times, room numbers, routes of code). Each form names the
street line that must not reach the cloud.

Scored blind, before anything was changed for them (3 rounds): ADDRESS 30 of 54 (0.556), and 6
false findings that were the set's own mistake (a person it names, `Dana Whitlock`, was not
labelled: labelled since). Missed: rural routes, street lines typed in lower case after `address
to`, India's flat-building-landmark lines, Brazil's `Av. Paulista, 1578 - Bela Vista` (its CEP,
`01310-200`, was taken for a phone, and the phone's finding shut the address out), Mexico's
`Calle 5 de Mayo #123, Col. Centro`, Russia's Cyrillic lines, Korea's `-ro, -gu` lines, a map
link's `query=9174+Bramblewood+Drive`. Then each got its grammar (addresses.py `_RURAL`, `_IN`,
`_KR`, `_RU`, `_MAP_QUERY`, `_SOUTH`'s dates, `#` and districts, lower-case streets after a cue)
and a CEP alone is no phone (phones.py): 54 of 54, no false finding.

    python -m benchmarks.privacy.later_places [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable

from benchmarks.privacy.later_people import Item, collector, set_main

FORMS: list[Callable[[], Item]] = []
R = random.Random(0)  # reseeded per round (`score`)

form = collector(FORMS)

STREETS = ["Juniper", "Larkspur", "Kestrel", "Wexford", "Alder Creek", "Bramblewood", "Harrowgate", "Quillon"]
TYPES = ["Street", "Avenue", "Road", "Lane", "Drive", "Court", "Boulevard", "Way"]


def number() -> str:
    return str(R.randint(3, 9899))


def street() -> str:
    return f"{number()} {R.choice(STREETS)} {R.choice(TYPES)}"


def one(template: str, value: str) -> Item:
    return template.format(value), [("ADDRESS", value)]


@form
def military_psc() -> Item:
    line = f"PSC {R.randint(1000, 9999)}, Box {R.randint(1000, 9999)}"
    text = f"Ship to:\nSgt. Dana Whitlock\n{line}\nAPO AE 09{R.randint(100, 999)}\n"
    return text, [("ADDRESS", line), ("PERSON", "Dana Whitlock")]


@form
def military_unit() -> Item:
    line = f"Unit {R.randint(1000, 9999)} Box {R.randint(100, 9999)}"
    return f"Mailing address: {line}, DPO AP 96{R.randint(100, 999)}", [("ADDRESS", line)]


@form
def rural_route() -> Item:
    line = f"RR {R.randint(1, 9)} Box {R.randint(10, 999)}"
    return f"Send the replacement to {line}, Millbrook, AL 36054.", [("ADDRESS", line)]


@form
def po_box_alone() -> Item:
    line = f"P.O. Box {R.randint(100, 99999)}"
    return f"billing_address: {line}, Tulsa, OK 74101", [("ADDRESS", line)]


@form
def chat_lower_case() -> Item:
    line = street().lower()
    return f"hey can u update my address to {line} apt 4b, springfield il 62704 thx", [("ADDRESS", line)]


@form
def sentence_no_postcode() -> Item:
    line = street()
    return f"The courier left the parcel at {line} instead of the depot.", [("ADDRESS", line)]


@form
def india_landmark() -> Item:
    line = f"Flat {R.randint(1, 40)}{R.choice('ABCD')}, Sunrise Apartments, near City Mall, Andheri West"
    return f"Deliver to: {line}, Mumbai 400053", [("ADDRESS", line)]


@form
def brazil() -> Item:
    line = f"Av. Paulista, {R.randint(100, 2999)} - Bela Vista"
    return f"Endereço: {line}, São Paulo - SP, 01310-200", [("ADDRESS", line)]


@form
def mexico() -> Item:
    line = f"Calle 5 de Mayo #{R.randint(10, 999)}, Col. Centro"
    return f"Dirección de entrega: {line}, 06000 Ciudad de México, CDMX", [("ADDRESS", line)]


@form
def russia() -> Item:
    line = f"ул. Тверская, д. {R.randint(1, 40)}, кв. {R.randint(1, 200)}"
    return f"Адрес доставки: {line}, Москва, 125009", [("ADDRESS", line)]


@form
def poland() -> Item:
    line = f"ul. Marszałkowska {R.randint(1, 150)}/{R.randint(1, 20)} m. {R.randint(1, 60)}"
    return f"Adres: {line}, 00-624 Warszawa", [("ADDRESS", line)]


@form
def italy() -> Item:
    line = f"Via Nazionale {R.randint(1, 300)}"
    return f"Indirizzo di spedizione: {line}, 00184 Roma RM", [("ADDRESS", line)]


@form
def korea() -> Item:
    line = f"{R.randint(1, 300)} Teheran-ro, Gangnam-gu"
    return f"Office: {line}, Seoul 06142, South Korea", [("ADDRESS", line)]


@form
def china() -> Item:
    line = f"No. {R.randint(1, 999)} Nanjing East Road, Huangpu District"
    return f"Shipping address: {line}, Shanghai 200001, China", [("ADDRESS", line)]


@form
def map_link() -> Item:
    n = number()
    line = f"{n}+Bramblewood+Drive"
    return f"Directions: https://www.google.com/maps/search/?api=1&query={line}+Austin+TX", [("ADDRESS", line)]


@form
def json_lines() -> Item:
    line1 = street()
    body = {"shipping": {"line1": line1, "line2": "Suite 210", "city": "Denver", "state": "CO", "postal_code": "80202"}}
    return json.dumps(body), [("ADDRESS", line1)]


@form
def ticket_ship_to() -> Item:
    line = street()
    return f"Customer asked us to ship to {line}, Portland instead of the old address.", [("ADDRESS", line)]


@form
def signature_one_line() -> Item:
    line = street()
    text = f"--\nDana Whitlock | Whitlock Studio | {line}, Boise, ID 83702 | +1 208 555 0142"
    return text, [("ADDRESS", line), ("PERSON", "Dana Whitlock")]


@form
def negatives() -> Item:
    text = (
        "Upgraded to 3 Node Cluster and 12 Worker Pools.\n"
        "The 2 Way handshake took 40 ms.\n"
        "Room 404 is on floor 4; Building 7 houses the lab.\n"
        "GET /api/v2/users/42/street HTTP/1.1\n"
        "Version 15 Drive Firmware released.\n"
        "Route 66 Diner opens at 7.\n"
    )
    return text, []


def main(argv: list[str] | None = None) -> None:
    set_main(FORMS, R, __doc__ or "", argv)


if __name__ == "__main__":
    main()

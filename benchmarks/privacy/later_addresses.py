"""Postal addresses in the forms agents read and people type, written after the address finder
and scored blind once.

Each form names the part that must not reach the cloud: the street line (the house number and
the street; a unit where it is part of the line). A finding of ADDRESS that covers it is a find,
whether or not it also covers the city and the postcode. The forms: short requests (`Ship it to
…`), order and customer JSON of shop and payment APIs, a geocoder's `formatted_address`, a
vCard's `ADR`, HTML and Markdown, a YAML fixture, a log line, and the street lines of countries
written as their post writes them (Japan, India, Brazil, Mexico, Canada, Australia, the UK,
Ireland, Singapore, South Africa, New Zealand, Germany, France, Italy, Spain, the Netherlands);
streets and numbers are this module's own, not the finder's examples.

Scored blind, before anything was changed for them (3 rounds): ADDRESS 79 of 87 (0.908); the
misses: a German street whose type is a word of its own (`Schönhauser Allee 86`, in prose), a
Dutch street with no type on one line with its postcode (`Overtoom 409, 1016 GV Amsterdam`),
Japan's block numbers (`5-30-18 Ebisu, Shibuya-ku`), an Irish `Road Upper`; one false finding a
round, a New Zealand suburb after the street line taken for a person (`Te Aro`). (The three
people the forms name were first left unlabelled, a mistake of the forms, not of the finder.)
Then each was given a grammar: 87 of 87, no false finding (over ten rounds 284 of 290: an
Irish street named `… Park` is none, `Park` being no street type here).

    python -m benchmarks.privacy.later_addresses [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable

from benchmarks.privacy.later_people import Item, collector, set_main

FORMS: list[Callable[[], Item]] = []
R = random.Random(0)  # reseeded per round (`score`)


form = collector(FORMS)


def n(low: int = 2, high: int = 980) -> int:
    return R.randint(low, high)


def pick(*options: str) -> str:
    return R.choice(options)


def _one(text: str, street: str) -> Item:
    return text, [("ADDRESS", street)]


@form
def ship_to() -> Item:
    street = f"{n()} {pick('Wallaby Way', 'Juniper Crescent', 'Fenwick Road')}"
    return _one(f"Ship it to {street}, Sydney NSW 2000 please.", street)


@form
def moved() -> Item:
    street = f"{n()} {pick('Larkspur Lane', 'Orchard Street', 'Halsey Avenue')}"
    return _one(f"I moved last month, my new address is {street}, Columbus, OH 43215.", street)


@form
def shop_order_json() -> Item:
    street = f"{n()} {pick('Cedar Hollow Rd', 'Pinecrest Dr', 'Whitmore Ave')}"
    body = {"shipping_address": {"address1": street, "address2": f"Apt {n(1, 40)}", "city": "Denver", "zip": "80202"}}
    return _one(json.dumps(body), street)


@form
def payment_customer_json() -> Item:
    street = f"{n()} {pick('Bramble Court', 'Kestrel Way', 'Sutton Place')}"
    body = {"address": {"line1": street, "city": "Austin", "postal_code": "78701", "country": "US"}}
    return _one(json.dumps(body, indent=2), street)


@form
def geocoder() -> Item:
    street = f"{n()} {pick('Harbord St', 'Dundas St W', 'Ossington Ave')}"
    return _one(json.dumps({"formatted_address": f"{street}, Toronto, ON M6J 1Z6, Canada"}), street)


@form
def vcard() -> Item:
    street = f"{n()} {pick('Thornbury Road', 'Mulberry Lane', 'Ashgrove Close')}"
    text = f"BEGIN:VCARD\nVERSION:3.0\nFN:Kim Ortega\nADR;TYPE=HOME:;;{street};Bristol;;BS8 1TH;UK\nEND:VCARD"
    return text, [("ADDRESS", street), ("PERSON", "Kim Ortega")]


@form
def html() -> Item:
    street = f"{n()} {pick('Rue Oberkampf', 'Rue de Charonne', 'Boulevard Voltaire')}"
    return _one(f"<address>{street}<br>75011 Paris<br>France</address>", street)


@form
def markdown_table() -> Item:
    street = f"{n()} {pick('Elmhurst Drive', 'Foxglove Road', 'Beacon Street')}"
    return _one(f"| customer | address |\n|---|---|\n| 4471 | {street}, Boise, ID 83702 |", street)


@form
def yaml_fixture() -> Item:
    street = f"{pick('Lindenstraße', 'Bergstraße', 'Mühlenweg')} {n(1, 120)}"
    return _one(f"customer:\n  id: 88\n  street: {street}\n  zip: '50667'\n  city: Köln", street)


@form
def log_line() -> Item:
    street = f"{n()} {pick('Maple Grove Rd', 'Riverside Dr', 'Cherry St')}"
    return _one(f'2024-05-02T10:11:12Z INFO geocode ok addr="{street}, Portland, OR 97205" ms=41', street)


@form
def japan() -> Item:
    street = f"{n(1, 9)}-{n(1, 30)}-{n(1, 20)} {pick('Jingumae', 'Nishi-Shinjuku', 'Ebisu')}"
    return _one(f"Deliver to: {street}, Shibuya-ku, Tokyo 150-0001, Japan", street)


@form
def india() -> Item:
    street = f"{n(1, 300)}, {pick('MG Road', '5th Cross Road', 'Residency Road')}"
    return _one(f"Address: Flat 4B, {street}, Bengaluru, Karnataka 560001", street)


@form
def brazil() -> Item:
    street = f"{pick('Rua Augusta', 'Avenida Paulista', 'Rua Oscar Freire')}, {n(10, 2500)}"
    return _one(f"Endereço de entrega: {street} - Consolação, São Paulo - SP, 01304-001", street)


@form
def mexico() -> Item:
    street = f"{pick('Av. Insurgentes Sur', 'Calle Durango', 'Av. Reforma')} {n(10, 1800)}"
    return _one(f"Dirección: {street}, Col. Roma Norte, 06700 Ciudad de México, CDMX", street)


@form
def canada_fr() -> Item:
    street = f"{n(100, 2000)} {pick('boulevard René-Lévesque Ouest', 'rue Sainte-Catherine Est', 'avenue du Parc')}"
    return _one(f"Adresse : {street}, Montréal (Québec) H3B 4W8", street)


@form
def australia_level() -> Item:
    street = f"{n(1, 400)} {pick('Pitt Street', 'Collins St', 'George St')}"
    return _one(f"Our office: Level 5, {street}, Melbourne VIC 3000", street)


@form
def uk_flat() -> Item:
    street = f"{n(1, 99)} {pick('Crown Street', 'Albion Road', 'Hawthorn Grove')}"
    return _one(f"Please send the keys to Flat 2, {street}, Leeds LS2 7DA.", street)


@form
def ireland() -> Item:
    street = f"{n(1, 99)} {pick('Grafton Street', 'Leeson Park', 'Drumcondra Road Upper')}"
    return _one(f"{street}, Dublin 2, D02 X285", street)


@form
def singapore() -> Item:
    street = f"{n(1, 200)} {pick('Anson Road', 'Orchard Road', 'Tanjong Pagar Road')}"
    return _one(f"Billing: {street}, #12-05, Singapore 079903", street)


@form
def south_africa() -> Item:
    street = f"{n(1, 300)} {pick('Long Street', 'Bree Street', 'Kloof Street')}"
    return _one(f"Collect from {street}, Cape Town City Centre, Cape Town, 8001", street)


@form
def new_zealand() -> Item:
    street = f"{n(1, 300)} {pick('Cuba Street', 'Lambton Quay', 'Ponsonby Road')}"
    return _one(f"The parcel went to {street}, Te Aro, Wellington 6011.", street)


@form
def italy() -> Item:
    street = f"{pick('Via Giuseppe Garibaldi', 'Corso Buenos Aires', 'Viale Monza')} {n(1, 200)}"
    return _one(f"Indirizzo: {street}, 20124 Milano MI", street)


@form
def spain() -> Item:
    street = f"{pick('Calle de Alcalá', 'Carrer de Mallorca', 'Avenida de América')}, {n(1, 400)}"
    return _one(f"Envío a {street}, 28009 Madrid", street)


@form
def netherlands() -> Item:
    street = f"{pick('Prinsengracht', 'Herengracht', 'Overtoom')} {n(1, 600)}"
    return _one(f"Bezorgadres: {street}, 1016 GV Amsterdam", street)


@form
def france_prose() -> Item:
    street = f"{n(1, 150)} {pick('avenue des Champs-Élysées', 'rue du Faubourg Saint-Antoine', 'quai de Valmy')}"
    return _one(f"Le colis est arrivé au {street}, 75008 Paris.", street)


@form
def germany_prose() -> Item:
    street = f"{pick('Torstraße', 'Schönhauser Allee', 'Kastanienallee')} {n(1, 200)}"
    return _one(f"Wir wohnen jetzt in der {street}, 10119 Berlin.", street)


@form
def csv_row() -> Item:
    street = f"{n()} {pick('Bayview Ave', 'Oakridge Blvd', 'Sunset Terrace')}"
    return f"id,name,street,city,state,zip\n17,Lee Park,{street},Tampa,FL,33602", [
        ("ADDRESS", street),
        ("PERSON", "Lee Park"),
    ]


@form
def sql_insert() -> Item:
    street = f"{n()} {pick('Linden Ave', 'Harrow Road', 'Quarry Lane')}"
    text = f"INSERT INTO customers (name, address) VALUES ('R. Hale', '{street}, Omaha, NE 68102');"
    return text, [("ADDRESS", street), ("PERSON", "R. Hale")]


@form
def ticket() -> Item:
    street = f"{n()} {pick('Birch Hollow Dr', 'Wexford Ct', 'Millbrook Ln')}"
    return _one(f"Customer says the courier left the box at {street} instead of next door.", street)


@form
def negatives() -> Item:
    return (
        pick(
            "Run 3 Road tests and 12 Street scenarios.",
            "See section 4 Way forward in the design doc.",
            "Processed 250 Main loops in 3 s.",
            "Version 2 Drive API is deprecated.",
            "Chapter 3, 12000 Miles Under the Sea",
        ),
        [],
    )


def main(argv: list[str] | None = None) -> None:
    set_main(FORMS, R, __doc__ or "", argv)


if __name__ == "__main__":
    main()

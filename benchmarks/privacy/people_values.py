"""Values for the people evaluation (benchmarks/privacy/people.py): names, street addresses,
phone numbers and national ids made by this generator (not Faker, not the detectors' lists).

The name pools were written apart from router/privacy/data (a real customer base holds names no
list has): some of their names are in the detectors' lists, many are not. Each pool is split in
two by a hash of the value: the development part draws from one half, the held-out part from
the other, so no value tuned on is scored.
"""

from __future__ import annotations

import random
import zlib
from pathlib import Path

import phonenumbers
from stdnum import luhn
from stdnum.ca import sin
from stdnum.de import idnr
from stdnum.nl import bsn
from stdnum.us import ssn


def _pools() -> dict[str, list[str]]:
    pools: dict[str, list[str]] = {}
    section = ""
    for line in (Path(__file__).parent / "people_pools.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith("["):
            section = line.strip("[]")
        elif line and not line.startswith("#"):
            pools.setdefault(section, []).extend(line.split())
    return pools


_POOLS = _pools()
GIVEN = _POOLS["given"]
FAMILY = _POOLS["family"]
STREET_WORDS = _POOLS["street_words"]
EN_TYPES = [
    "Street",
    "St",
    "Avenue",
    "Ave",
    "Road",
    "Rd",
    "Lane",
    "Drive",
    "Close",
    "Way",
    "Court",
    "Crescent",
    "Boulevard",
    "Place",
    "Terrace",
    "Grove",
    "Gardens",
]
US_CITIES = [
    ("Springfield", "IL"),
    ("Riverton", "WY"),
    ("Fairview", "TN"),
    ("Madison", "WI"),
    ("Salem", "OR"),
    ("Georgetown", "TX"),
    ("Franklin", "MA"),
    ("Clinton", "IA"),
    ("Arlington", "VA"),
    ("Ashland", "KY"),
]
UK_CITIES = ["Leeds", "Bristol", "York", "Norwich", "Bath", "Exeter", "Durham", "Chester", "Derby", "Lincoln"]
DE_STEMS = [
    "Haupt",
    "Bahnhof",
    "Goethe",
    "Schiller",
    "Linden",
    "Garten",
    "Berg",
    "Kirch",
    "Wald",
    "Mühlen",
    "Rosen",
    "Schul",
    "Feld",
    "Wiesen",
    "Sonnen",
    "Eichen",
]
DE_SUFFIX = ["straße", "str.", "weg", "allee", "platz", "gasse", "ring"]
DE_CITIES = ["Berlin", "Hamburg", "München", "Köln", "Leipzig", "Dresden", "Bremen", "Hannover", "Bonn"]
FR_TYPES = ["rue", "avenue", "boulevard", "place", "allée", "chemin", "impasse", "quai"]
FR_NAMES = [
    "de la Paix",
    "Victor Hugo",
    "des Lilas",
    "du Moulin",
    "Pasteur",
    "de la République",
    "Jean Jaurès",
    "des Écoles",
    "du Général Leclerc",
    "Saint-Michel",
]
FR_CITIES = ["Paris", "Lyon", "Marseille", "Toulouse", "Nantes", "Lille", "Rennes", "Bordeaux"]
SOUTH = [
    ("Calle", ["Mayor", "del Carmen", "de Alcalá", "Real", "Nueva", "San Vicente"], ["Madrid", "Sevilla", "Valencia"]),
    ("Via", ["Roma", "Garibaldi", "Dante", "dei Mille", "Nazionale", "Cavour"], ["Roma", "Milano", "Torino"]),
    ("Rua", ["Augusta", "das Flores", "do Carmo", "Direita", "da Prata"], ["Lisboa", "Porto", "Coimbra"]),
]
NL = (
    ["Keizers", "Heren", "Prinsen", "Kerk", "Molen", "Dorps", "Linden"],
    ["gracht", "straat", "weg", "laan", "plein"],
    ["Amsterdam", "Utrecht", "Leiden", "Delft", "Haarlem"],
)


def part_of(value: str) -> int:
    """0: development, 1: held-out (a stable hash of the value)."""
    return zlib.crc32(value.encode()) % 2


class Values:
    """Random values for one part of the evaluation."""

    def __init__(self, seed: int, part: int) -> None:
        self.rng = random.Random(seed * 7919 + part)
        self.given = [n for n in GIVEN if part_of(n) == part]
        self.family = [n for n in FAMILY if part_of(n) == part]
        self.streets = [w for w in STREET_WORDS if part_of(w) == part]

    def person(self) -> tuple[str, str]:
        return self.rng.choice(self.given), self.rng.choice(self.family)

    def address(self) -> tuple[str, str]:
        """(street line, the rest: city and postcode) in one of the countries' formats."""
        rng = self.rng
        country = rng.choice(["US", "UK", "DE", "FR", "SOUTH", "NL"])
        number = str(rng.randint(1, 2999) if country == "US" else rng.randint(1, 199))
        if country == "US":
            city, state = rng.choice(US_CITIES)
            street = f"{number} {rng.choice(self.streets)} {rng.choice(EN_TYPES)}"
            return street, f"{city}, {state} {rng.randint(10000, 99999)}"
        if country == "UK":
            street = f"{number} {rng.choice(self.streets)} {rng.choice(EN_TYPES)}"
            area = rng.choice(["LS", "BS", "YO", "NR", "BA", "EX", "DH", "CH", "DE", "LN"])
            postcode = f"{area}{rng.randint(1, 29)} {rng.randint(1, 9)}{rng.choice('ABDEFGHJLNPQRSTUWXYZ')}{rng.choice('ABDEFGHJLNPQRSTUWXYZ')}"
            return street, f"{rng.choice(UK_CITIES)} {postcode}"
        if country == "DE":
            street = f"{rng.choice(DE_STEMS)}{rng.choice(DE_SUFFIX)} {number}{rng.choice(['', '', 'a', 'b'])}"
            return street, f"{rng.randint(10000, 99999)} {rng.choice(DE_CITIES)}"
        if country == "FR":
            street = f"{number}{rng.choice(['', '', ' bis'])} {rng.choice(FR_TYPES)} {rng.choice(FR_NAMES)}"
            return street, f"{rng.randint(10000, 95999)} {rng.choice(FR_CITIES)}"
        if country == "SOUTH":
            kind, names, cities = rng.choice(SOUTH)
            return f"{kind} {rng.choice(names)} {number}", f"{rng.randint(10000, 99999)} {rng.choice(cities)}"
        stems, suffixes, cities = NL
        street = f"{rng.choice(stems)}{rng.choice(suffixes)} {number}"
        return (
            street,
            f"{rng.randint(1000, 9999)} {rng.choice('ABCDEFGHJKLMNPRSTVWXZ')}{rng.choice('ABCDEFGHJKLMNPRSTVWXZ')} {rng.choice(cities)}",
        )

    def phone(self, international: bool | None = None) -> str:
        """A number libphonenumber accepts, written as people write it."""
        rng = self.rng
        while True:
            region = rng.choice(["US", "GB", "DE", "FR", "ES", "IT", "NL"])
            meta = phonenumbers.example_number_for_type(
                region, rng.choice([phonenumbers.PhoneNumberType.MOBILE, phonenumbers.PhoneNumberType.FIXED_LINE])
            )
            if meta is None:
                continue
            digits = list(str(meta.national_number))
            for i in range(3, len(digits)):
                digits[i] = str(rng.randint(0, 9))
            number = phonenumbers.parse("+" + str(meta.country_code) + "".join(digits))
            if not phonenumbers.is_valid_number(number):
                continue
            intl = rng.random() < 0.6 if international is None else international
            style = (
                rng.choice([phonenumbers.PhoneNumberFormat.E164, phonenumbers.PhoneNumberFormat.INTERNATIONAL])
                if intl
                else phonenumbers.PhoneNumberFormat.NATIONAL
            )
            return phonenumbers.format_number(number, style)

    def national_id(self) -> tuple[str, str, str]:
        """(column header, value, kind) of an id valid for its check."""
        rng = self.rng
        choice = rng.choice(["ssn", "steuer_id", "bsn", "nin", "sin"])
        while True:
            if choice == "ssn":
                value = f"{rng.randint(1, 665):03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}"
                if ssn.is_valid(value):
                    return rng.choice(["ssn", "SSN", "social_security_number"]), value, "US_SSN"
            elif choice == "steuer_id":
                value = str(rng.randint(10**10, 10**11 - 1))
                if idnr.is_valid(value):
                    return rng.choice(["steuer_id", "Steuer-ID", "idnr"]), value, "NATIONAL_ID"
            elif choice == "bsn":
                value = str(rng.randint(10**8, 10**9 - 1))
                if bsn.is_valid(value):
                    return rng.choice(["bsn", "BSN"]), value, "NATIONAL_ID"
            elif choice == "sin":
                body = str(rng.randint(10**7, 10**8 - 1))
                if sin.is_valid(body + luhn.calc_check_digit(body)):
                    return rng.choice(["sin", "SIN"]), body + luhn.calc_check_digit(body), "NATIONAL_ID"
            else:
                letters = "ABCEGHJKLMNPRSTWXYZ"
                prefix = rng.choice("ABCEGHJKLMNPRSTWXYZ") + rng.choice(letters.replace("O", ""))
                if prefix in ("BG", "GB", "KN", "NK", "NT", "TN", "ZZ"):
                    continue
                return (
                    rng.choice(["nin", "NINO", "national_insurance"]),
                    f"{prefix}{rng.randint(0, 999999):06d}{rng.choice('ABCD')}",
                    "NATIONAL_ID",
                )

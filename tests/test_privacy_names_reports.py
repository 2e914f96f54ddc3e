"""Names as reports print them: a court opinion's justices in capitals (`in which KENNEDY and
SOUTER joined`, `SCALIA filed a dissenting opinion`), people listed with their age (`Cossor
Ali, 24, London`), and a mail's closing alone on its line (`Best,` then the name); with the
look-alikes each form must leave alone."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect

PEOPLE = frozenset({"person", "address"})


def people(text: str) -> list[str]:
    return [f.value for f in detect(text, PEOPLE) if f.type == "PERSON"]


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("in which VANTERPOOL, OKORAFOR, and DRUMMELOW joined.", ["VANTERPOOL", "OKORAFOR", "DRUMMELOW"]),
        ("QUARSHIE filed a dissenting opinion, in which LINDQVIST joined.", ["QUARSHIE", "LINDQVIST"]),
        (
            "HALLORAN, C. J., delivered the opinion of the Court, in which ESTEBANEZ, J., joined.",
            ["HALLORAN", "ESTEBANEZ"],
        ),
    ],
)
def test_justices_of_a_court_opinion(text: str, names: list[str]) -> None:
    assert sorted(people(text)) == sorted(names)


def test_people_listed_with_their_age() -> None:
    text = "Charged today:\nTariq Vanspall, 28, Leeds\nCossar Mbeki Lund, 24, Luton; Ilse Dahlgrün, 31, Hull"
    assert people(text) == ["Tariq Vanspall", "Cossar Mbeki Lund", "Ilse Dahlgrün"]


def test_a_closing_alone_on_its_line_then_the_name() -> None:
    assert people("Let me know if the invoice is wrong.\nBest,\nOdalys\n") == ["Odalys"]


@pytest.mark.parametrize(
    "text",
    [
        "The table, in which JSON and YAML joined. API filed a new statement; in which AWS SDK joined.",
        "Version Two, 12, Build\nSection A, 12, Item\nMain Street, 12, Springfield\nWindows Server, 19, Linux",
        "It was the best,\nRelease Notes\n",
    ],
)
def test_look_alikes_of_those_forms_are_no_names(text: str) -> None:
    assert people(text) == []

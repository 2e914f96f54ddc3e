"""Firms and streets named after people are not people (opt-in PERSON): a firm named after its
partners (`Hawkins, Mercer and Whitfield`) and a street's name (`Harriet Quimby Avenue`) hold
family and given names that the free-text rules and the prose model took for a person's. People
listed the same way after a colon, cited authors and lists holding a given name stay names."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect
from router.privacy.names import person

PEOPLE = frozenset({"person", "address"})


def people(text: str) -> set[str]:
    return {f.value for f in detect(text, PEOPLE) if f.type == "PERSON"}


@pytest.mark.parametrize(
    "text",
    [
        "She spent two years at Hawkins, Mercer and Whitfield as a paralegal before she joined us.",
        "The Davies, Holloway and Pratt Orchestra was founded in 1962 as a volunteer ensemble.",
        "Our counsel is from Lopez, Santos and Coleman, which has offices in three cities.",
        "Barnett, Kowalski and Garcia is a design agency based in Helsinki.",
        "Send the signed copy to Reynolds, Hughes & Romero by Friday, please.",
    ],
)
def test_firms_named_after_their_partners_are_no_people(text: str) -> None:
    assert people(text) == set()


@pytest.mark.parametrize(
    ("text", "street"),
    [
        ("These early shows on Marina Fort Street were important to the band.", "Marina"),
        ("We used to meet on Harriet Quimby Avenue every Friday after work.", "Harriet"),
        ("The parcel went to Zachary Cliffs instead of the office, and it came back.", "Zachary"),
        ("The new depot is out on Medvedev Islands, an hour north of the old one.", "Medvedev"),
    ],
)
def test_streets_named_after_people_are_no_people(text: str, street: str) -> None:
    assert not {value for value in people(text) if street in value}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # People listed after a colon, a list holding a given name, authors cited with a year.
        (
            "This is the brainchild of our 3 founders: Kowalczyk, Brennan and Oyelaran, who met at school.",
            {"Kowalczyk", "Brennan", "Oyelaran"},
        ),
        ("Later that evening Margaret, Thornton and Oyelaran came along to the party.", {"Margaret"}),
        ("Attention improves with practice (Bavelier, Polat, & Scalzo, 2010) in most of the groups.", {"Polat"}),
        # A name beside a street's type that is also a family name stays (`Hill`, `Green`, `Way`).
        ("Yesterday I spoke with Priya Hill about the renewal, and she agreed.", {"Priya Hill"}),
    ],
)
def test_people_listed_or_cited_stay_names(text: str, expected: set[str]) -> None:
    assert expected <= people(text)


def test_firm_rule_leaves_cued_names_alone() -> None:
    text = "Name: Hawkins, Mercer and Whitfield\nPhone: +44 20 7946 0958\n"
    rules = {text[f.start : f.end] for f in person.find_rules(text)}
    assert {text[f.start : f.end] for f in person.find(text)} >= rules

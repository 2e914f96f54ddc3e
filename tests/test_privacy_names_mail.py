"""Names in the text people write to each other (mail, reviews, forum answers), the forms read
from Universal NER's English Web Treebank development half: a salutation or a signature alone on
its line, closings after a sentence, Lotus Notes addresses, a sender written family name first,
offices and ranks before a name; and places, peoples, storms and firms the prose model took for
people."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect

PEOPLE = frozenset({"person", "address"})


def people(text: str) -> list[str]:
    return [f.value for f in detect(text, PEOPLE) if f.type == "PERSON"]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Sanna,\nI would like to go over the invoice schedule before Friday.\nThanks,\nTadeusz", "Sanna"),
        ("Tadeusz,\nThis covers the transfer of the records to the new agent.", "Tadeusz"),
        ("Luuk, Take a look at the spreadsheet and tell me what you think.", "Luuk"),
        ("Can you send me the data you used? I shall take a look at it.\nThandeka\n", "Thandeka"),
        ("We should be able to work with this.\nRosalind Achterberg\n", "Rosalind Achterberg"),
        ("Things are good here, the move went well.\nKeep in touch,\nOsman", "Osman"),
        ("Thanks for your time and attention. Warm regards, Annelise Brunhart", "Annelise Brunhart"),
        # A given name that is an everyday word too, before a family name.
        ("I hope this answers it. Warm regards, Bill Ostrowiecki", "Bill Ostrowiecki"),
        ("It would help if you could advise me on this. Kindest regards, Thandeka", "Thandeka"),
        ("I enjoyed working with all of you. Take care.\nTheo Okafor\nPS: drinks at five.", "Theo Okafor"),
    ],
)
def test_a_salutation_or_a_signature_alone_on_its_line(text: str, name: str) -> None:
    assert name in people(text)


@pytest.mark.parametrize(
    "text",
    [
        "We tried it twice.\nSummary\nThe build passes.",
        "Deploy finished.\nJordan\n",  # a name that is also a place and an everyday word: no cue
        "Austin, Texas is where the office is.",
        "Note, the build is green.\nHello,\nThe service restarted.",
        "It moved.\nParis\n",
        "Paid the invoice. Thanks, Bill\n",  # alone, that given name is an everyday word
        "Saved it. Cheers, Mark Down\n",
    ],
)
def test_a_word_or_a_place_alone_on_its_line_is_no_signature(text: str) -> None:
    assert people(text) == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Corinna Waldmeier@ACME 08/16/2000 12:05 PM I just wanted to send a note.", "Corinna Waldmeier"),
        ("Ulrich Demski/HOU/ACME@ACME 03/28/2001 05:09 PM Please find attached.", "Ulrich Demski"),
        ('"Haverkamp, Jolanda" <jhaverkamp@example.org> 03/27/2001 09:11 AM', "Haverkamp, Jolanda"),
    ],
)
def test_senders_in_notes_addresses_and_family_name_first(text: str, name: str) -> None:
    assert name in people(text)


def test_a_notes_like_address_needs_two_name_words_and_no_domain() -> None:
    assert people("Write to Support@ACME or to ops@example.com.") == []
    assert people("Mail Corinna.Waldmeier@example.com today.") == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("President Ashdown on Tuesday nominated two judges.", "Ashdown"),
        ("Our family has been trusting Doctor Fenwick with our teeth for years.", "Fenwick"),
        ("Visit Capt. Brannigan's page for the schedule.", "Brannigan"),
        ("The lesson was given by the teacher Orsolya, who was great.", "Orsolya"),
        ("A radical cleric Ismail Haddadin said the attack was criminal.", "Ismail Haddadin"),
        ("Senator Bush spoke first.", "Bush"),
    ],
)
def test_offices_and_ranks_before_a_name(text: str, name: str) -> None:
    assert name in people(text)


@pytest.mark.parametrize(
    "text",
    [
        'jobs = ["Agent Comercial", "Inspector Sanitar", "Professor Emeritus"]',
        'islands = ["Saint Lucia", "Saint Helena", "Prince Edward Island"]',
        "It was written with the former President. After you are elected, what then?",
        "The Senator Calls For A Vote On The Budget",
    ],
)
def test_offices_before_words_that_are_no_names(text: str) -> None:
    assert people(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "I have a day stop-over in San Francisco and want to see some sights.",
        "Preferably in Palo Alto or San Jose, I want to party.",
        "Absolutely my favorite store in Lawrence, KS and the staff are kind.",
        "Currently Mercury and Venus are conjunct and the transit is difficult.",
        "The Palestinians and the Americans were there by their own choice.",
        "Upon return to New Orleans after the Hurricane Katrina evacuation, residents were homeless.",
        "It is expressed by or on behalf of Carr Futures or its officers.",
        "Calls are now forwarded to Malcolm Pruitt Motorsports down the road.",
        'countries = ["Seychelles", "Sierra Leone", "Singapore", "Sri Lanka", "Sudan"]',
    ],
)
def test_places_peoples_storms_and_shops_are_no_people(text: str) -> None:
    assert people(text) == []


def test_a_place_that_is_also_a_given_name_is_a_person_without_a_place_word() -> None:
    assert "Charlotte" in people("Charlotte is a wonderful host who does everything for her guests.")
    assert people("We spent a week in Charlotte and loved the food.") == []


def test_a_person_with_a_degree_after_the_name_is_no_place() -> None:
    assert "Harry Preuss" in people("A study of supplements, with Harry Preuss, MD, a professor of medicine.")


def test_names_in_source_trees_written_after_the_finders() -> None:
    # benchmarks/privacy/later_code_people.py: 24 forms of the people a repository names scored
    # blind once (PERSON 80 of 87, no false finding), then a rule per kind of miss: 87 of 87.
    from benchmarks.privacy import later_code_people, later_people

    found_, _missed, wrong = later_people.score(3, later_code_people.FORMS, later_code_people.R)
    assert found_["PERSON"] == 87, wrong
    assert found_["false"] == 0, wrong


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("/**\n * Parses exports.\n * @author Cosmin Raghunathan\n */", "Cosmin Raghunathan"),
        ('Authors@R: person("Henrike", "Charbonneau", role = c("aut", "cre"))', "Charbonneau"),
        ('authors = [{ name = "Radomir Pryce" }]', "Radomir Pryce"),
        ('"contributors": [\n    "Radomir Raghunathan <r@example.org>"\n  ]', "Radomir Raghunathan"),
        ("# Copyright (C) 2019 Cosmin Charbonneau and contributors", "Cosmin Charbonneau"),
        ("    # TODO(Radomir): retry once the lock is released", "Radomir"),
    ],
)
def test_people_a_source_tree_names(text: str, name: str) -> None:
    assert name in people(text)


@pytest.mark.parametrize(
    "text",
    [
        "Copyright (c) 2004 California Institute of Technology",
        "// Copyright 2024 The Ledger Authors. All rights reserved.",
        "# Copyright (c) Acme Corporation",
        '"contributors": ["Platform Team", "Release Engineering"]',
        "# TODO(Bug): handle the empty batch",
        "maintainers:\n  - name: Platform Team\n  - name: sre-oncall",
    ],
)
def test_organisations_and_teams_a_source_tree_names_are_no_people(text: str) -> None:
    assert people(text) == []

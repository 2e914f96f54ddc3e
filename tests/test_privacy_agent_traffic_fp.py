"""False findings read off public agent traffic (SWE-agent, mini-swe-agent, OpenHands and
terminal-bench runs, tau-bench conversations): a memory listing's and a dump's digit groups taken
for phones, and software, products, eponyms, a work's title, an abbreviation and interjections
taken for people. Each form is written here with values of our own, beside the real values of the
same shape that must stay findings."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect

PERSON = frozenset({"person"})


def phones(text: str) -> list[str]:
    return [f.value for f in detect(text) if f.type == "PHONE"]


def people(text: str) -> list[str]:
    return [f.value for f in detect(text, PERSON) if f.type == "PERSON"]


# A. Phones: a memory listing's addresses and words, and a dump's bytes.

# A simulator's deposits, one address and one octal word a line.
LISTING = "".join(f"sim> deposit {address} {word}\n" for address, word in [
    ("1734", "020027"), ("1736", "003124"), ("1740", "103421"), ("1742", "005067"), ("1744", "000000"),
])  # fmt: skip


@pytest.mark.parametrize(
    "text",
    [
        LISTING,
        "sim> deposit 16 000150\n",  # alone: two to four digits, no trunk 0, then six
        "deposit 144 000004",
        "examine 2040 172426 ok",
        # Two columns on each line of a run of lines of one shape (seven digits after the address).
        "sim> dep 1736 0031240\nsim> dep 1740 1034210\nsim> dep 1742 1034211\n",
        # `od -t x1`: an offset, then sixteen bytes (`02 14 01 00 00 00 00` is valid for Germany).
        "0000000 07 01 26 04 1e 00 3c 02 14 01 00 00 00 00 01 00\n0000020 09 f0 80 11 26 12 d0 0b 36 10 02 00 f7 09",
        # `od -c`: an offset, then characters and octal bytes.
        "0000040 226   %  \\0  \\n 001 211   w  \\t 354 002 002  \\0   @ 035 004  \\0\n",
        "000010  \\t 360 200 021   & 022 320  \\v   6 020 002  \\0 367  \\t   h  \\0\n",
        # `od -An -t x1`: bytes alone on the line.
        " 07 01 26 04 1e 00 3c 02 14 01 00 00 00 00 01 00",
    ],
)
def test_listings_and_dumps_hold_no_phones(text: str) -> None:
    assert phones(text) == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # Written as phones are, in a run of log lines of one shape: three groups.
        ("dialing 020 7946 0958\ndialing 020 7946 0123\ndialing 020 7946 0456\n", "020 7946 0958"),
        # A list of bare numbers (no word on its lines) may be a list of phones.
        ("030 12345678\n030 12345679\n030 12345670\n", "030 12345678"),
        # A phone word before a number of a listing's shape: a phone.
        ("My phone number is 632 139823.", "632 139823"),
        ("Tel. 320 001064", "320 001064"),
        ("Call me: 020 7946 0958", "020 7946 0958"),
        ("London 020 7946 0958 is the office", "020 7946 0958"),
        ("US office: (415) 555-2671", "(415) 555-2671"),
        ("cell 98765 43210", "98765 43210"),
        ("电话 138 0013 8000", "138 0013 8000"),
        # A line that opens with a long number and goes on in short words is no dump's row.
        ("20240101 is when we call 020 7946 0958 for the report", "020 7946 0958"),
        # A dump's text column is no cell: a phone printed there is one.
        ("00000010  20 30 32 30 20 37 39 34  36 20 30 39 35 38 0a 00  | 020 7946 0958..|", "020 7946 0958"),
    ],
)
def test_phones_beside_listings_stay_phones(text: str, value: str) -> None:
    assert value in phones(text)


def test_a_dump_row_does_not_hide_the_phone_on_the_next_line() -> None:
    text = "0000000 07 01 26 04 1e 00 3c 02 14 01 00 00 00 00 01 00\nSupport: call 020 7946 0958 now"
    assert phones(text) == ["020 7946 0958"]


# B. People: software, products and eponyms in prose.


@pytest.mark.parametrize(
    "text",
    [
        "It seems that neither Maven nor Gradle is available in the environment, so we read the build.",
        "Typically, Java projects use tools like Maven or Gradle for building and testing them.",
        "I will investigate the relevant code in the Jackson library that handles the conversion.",
        "Let me locate the relevant part of the Jackson Databind library that processes these annotations.",
        "It seems the required Jackson JAR files are not in the current directory, so we download them.",
        "Replace the placeholder with the actual path to the Jackson Core JAR file and the version.",
        "/* Jackson JSON-processor.\n *\n * Copyright (c) 2007- the authors\n */",
        "This module uses [Jackson Annotations](../../../jackson-annotations) for configuration.",
        "We should make sure the dependencies (like Jackson and JUnit) are available in the classpath.",
        "NOTE! Before Jackson 2.17, no escaping was performed, and legacy code relied on it.",
        "Cohen Algorithm 2.4.5 (for Row HNF of an n x m matrix A):",
        "Generate small random weights for the layer (Xavier initialization style) before training.",
        "The best results scored a Pearson correlation above 0.8, well above a simple baseline.",
        "Correct me if I'm wrong but isn't the Bareiss algorithm only valid for integer matrices?",
        "Invariants for a matrix (as in the Smith-Normal form) are computed here by the code.",
        "Debian Jessie ships with 3.8.7 and was EOL June 30, 2020 as the release notes say.",
        "- *Build tool:* Gradle\n- *OS:* Macos Ventura 13.3.1\n",
        "It supports many programming languages, including Python, R, Julia, and Scala, for this work.",
        "R, Julia, and Scala. Jupyter Notebooks are widely used for data cleaning and exploration.",
        "The error says that hist is an Axes method, so we call it on the subplot instead.",
        # The word in lower case in a package name of the same text: the library's.
        "package com.fasterxml.jackson.core.base;\n\n/**\n * Intermediate base class used by all Jackson"
        " {@link JsonParser} implementations, so we keep it small.\n */",
        "<!-- Extends Jackson (jackson-mapper); requires Stax API (and implementation) -->",
        "<description>Data format extension for Jackson to offer alternative support</description>\n"
        "<artifactId>jackson-dataformat-xml</artifactId>",
    ],
)
def test_software_products_and_eponyms_are_no_people(text: str) -> None:
    assert people(text) == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Peter Jackson directed the films and the critics said they were too long.", "Peter Jackson"),
        ("Ask Priya Nair to review the change before we merge it tomorrow please.", "Priya Nair"),
        ("I paid Priya 12.50 for the lunch we had with the team yesterday.", "Priya"),
        ("Let Ana Lima form a team for the launch next week, she said.", "Ana Lima"),
        ("Have Priya Nair filter the list before the meeting tomorrow with the team.", "Priya Nair"),
        # A person's handle in lower case is no software's package (`priya-nair`).
        ("Merged the PR from priya-nair today. Priya Nair said the tests pass now.", "Priya Nair"),
        # A family name software bears too, in a list of people.
        ("Pieter Mulder\nPiotr Helm\nPrakhar Gurunani\n", "Piotr Helm"),
        ("Julia and Priya met the customer at the office yesterday afternoon.", "Priya"),
        # A contraction opens the run, a possessive ends the name.
        ("Can you help me with just my name? It's Ivan Rossi.", "Ivan Rossi"),
        ("perl - Larry Wall's Practical Extraction and Report Language", "Larry Wall"),
    ],
)
def test_people_beside_such_words_stay_names(text: str, name: str) -> None:
    assert name in people(text)


def test_an_eponym_is_no_person_where_its_author_is_one() -> None:
    # The book's author is named in the first sentence; the algorithm named after him is no person.
    text = "No, Cohen doesn't say that.\n\nWait, Cohen's algorithm is for square non-singular matrices."
    eponym = text.index("Cohen's")
    assert eponym not in [f.start for f in detect(text, PERSON)]


def test_a_search_for_software_in_lower_case_is_no_name() -> None:
    assert people('search_dir "jackson xml property configuration"') == []
    assert "patricia desrosiers" in people("please follow up with patricia desrosiers about the refund today")


# C. People: labels, roles, speakers and words that open a sentence.


@pytest.mark.parametrize(
    "text",
    [
        "Permission.objects.get_or_create(codename='view_report', defaults={'name': 'Can view report'})",
        "{'name': 'Can'}",
        "    vendor = 'sqlite'\n    display_name = 'SQLite'\n",
        "To look up your reservation, I need your user ID. Could you please provide it?",
        "I found several reservations under your user ID. Here are the reservation IDs for you.",
        "<output>\nNaN: 'NAN.0'\nInf: 'INF.0'\n</output>",
        "Hmm, I don't remember the reservation ID of that flight.",
        "Oui, please proceed with the cancellation of my booking.",
        "Also, I was told I didn't need to get insurance because my card covers it.",
        'Book.objects.create(title="Jane Eyre", pages=532)',
        "Wizard Radagast, played by the worst Dr Who as hammy as can be.",
        "r-cran-polyclip - GNU R Polygon Clipping\nr-cran-devtools - Tools to Make Developing R Packages Easier",
        "- Flight from Boston (BOS) to Orlando (MCO) on 2024-05-18, Flight Number: HAT123",
    ],
)
def test_labels_roles_and_openings_that_name_no_one(text: str) -> None:
    assert people(text) == []


def test_an_airport_named_after_a_person_is_no_run_of_name_words() -> None:
    assert "John F. Kennedy International" not in people(
        "The city is served by three major airports: John F. Kennedy International Airport (JFK) and more."
    )


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ('{"name": "Ana Lima", "email": "ana.lima@example.org"}', "Ana Lima"),
        ("Author.objects.create(name='Alice')", "Alice"),
        ("user Ana Lima (id=42) logged in", "Ana Lima"),
        ("Ana: I'll be there.\nBen: See you then.", "Ana"),
        ("Warrane, can I speak to your boss?", "Warrane"),
        ("We asked Wendelin Thistlewood to rerun the job.", "Wendelin Thistlewood"),
        ("Dr. Li will see you now.", "Li"),
        ("Alvir D. Pušaver wrote the first draft.", "Alvir D. Pušaver"),
        # A role's code after a name is no airport's (one code alone, no journey).
        ("Send the slides to Priya (CTO) before noon today.", "Priya"),
    ],
)
def test_people_in_the_same_forms_stay_names(text: str, name: str) -> None:
    assert name in people(text)

"""Names in short messages (what people type to an agent, chat and ticket one-liners), written
after the detectors and scored blind once.

`later_people.py`'s forms are records (tool output, files, tables). These are short sentences:
a request to an agent naming a colleague or a customer, a chat line, a ticket's one-line
comment, a list of attendees, a possessive, a surname alone after `said`; lines with two lower-case
words or fewer among them, where the prose model (names_model.py) read no line of prose. Names
are this module's own (given names of many cultures, listed or not, not the name lists'), and
the negatives are short messages with capitalised words that are not people.

Scored blind, before anything was changed for them (3 rounds): PERSON 76 of 111 (0.685), one
false finding (`Jenkins` in `Tell Jenkins to rebuild.`). Then a short sentence became a line of
prose (a lower-case word and a sentence's end mark), the members of a list with a name in it
names (names_model.py `_coordinated`), and a list of people after a colon may end the line with
no `and` (names/enumerations.py `_ENUMERATION`): 95 of 111 (0.856), the same false finding. Then a name a
greeting or a sign-off addresses may be one in no list when no word of it is an everyday word or
software's (`Thanks Anselm!`, `Happy birthday Farida!`; `Hello World!` and `Thanks Jenkins!` are
no longer people): 97 of 111; and a name a request opens with (`Tell Anselm the build is
green.`, `Ask`, `Ping`, `Email`, … at a sentence's head) the same way: 98 of 111. Left: names in
no list alone after a preposition (`send the report to Dagny?`), a possessive opening a request
(`Per Yusuf's comment`), a speaker line of names in no list and a name in lower case with no
family name after it.

    python -m benchmarks.privacy.later_chat [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import random
from collections.abc import Callable

from benchmarks.privacy.later_people import Item, collector, set_main

FORMS: list[Callable[[], Item]] = []
R = random.Random(0)  # reseeded per round (`score`)

FIRST = [
    "Sheila",
    "Dagny",
    "Ifeoma",
    "Radek",
    "Yusuf",
    "Marisol",
    "Teodora",
    "Kenji",
    "Bronwyn",
    "Anselm",
    "Zainab",
    "Linnea",
    "Oisín",
    "Paulo",
    "Svetlana",
    "Wiremu",
    "Cosmin",
    "Amara",
    "Eero",
    "Niamh",
    "Thandiwe",
    "Lorenzo",
    "Farida",
    "Gareth",
]
LAST = [
    "Okonkwo",
    "Brannigan",
    "Szabo",
    "Castellanos",
    "Lindgren",
    "Haraldsen",
    "Mbeki",
    "Yilmaz",
    "Nakashima",
    "Dufresne",
    "Petrović",
    "Alvarado",
    "Kaur",
    "Whitfield",
    "Ferreira",
    "Nowak",
    "Abernathy",
    "Taufa",
    "Grünewald",
    "Bianchi",
]


form = collector(FORMS)


def given() -> str:
    return R.choice(FIRST)


def full() -> str:
    return f"{R.choice(FIRST)} {R.choice(LAST)}"


def _one(template: str, value: str) -> Item:
    return template.format(value), [("PERSON", value)]


@form
def send_to() -> Item:
    return _one("Can you send the report to {}?", given())


@form
def ask_review() -> Item:
    return _one("Ask {} to review the PR.", given())


@form
def pair() -> Item:
    a, b = R.sample(FIRST, 2)
    return f"{a} and {b} will pair on the migration.", [("PERSON", a), ("PERSON", b)]


@form
def ping() -> Item:
    return _one("Ping {} about the failing build", given())


@form
def customers_list() -> Item:
    a, b, c = full(), full(), full()
    return f"Customers affected: {a}, {b} and {c}.", [("PERSON", a), ("PERSON", b), ("PERSON", c)]


@form
def manager() -> Item:
    return _one("My manager {} approved it.", full())


@form
def covers() -> Item:
    return _one("I'm on leave, {} covers for me.", given())


@form
def thanks() -> Item:
    return _one("Thanks {}!", given())


@form
def possessive() -> Item:
    return _one("Per {}'s comment, revert the change.", given())


@form
def surname_said() -> Item:
    return _one("{} said the fix is fine.", R.choice(LAST))


@form
def dear() -> Item:
    return _one("Dear {},\n\nYour order has shipped.", given())


@form
def cc_line() -> Item:
    return _one("cc: {}", full())


@form
def attendees() -> Item:
    a, b, c = R.sample(FIRST, 3)
    return f"Attendees: {a}, {b}, {c}", [("PERSON", a), ("PERSON", b), ("PERSON", c)]


@form
def chat_lines() -> Item:
    a, b = R.sample(FIRST, 2)
    return f"{a}: can you restart the pod?\n{b}: done", [("PERSON", a), ("PERSON", b)]


@form
def invoice_for() -> Item:
    return _one("Invoice for {}", full())


@form
def this_is() -> Item:
    return _one("Hi, this is {} from accounting.", given())


@form
def shipping_name() -> Item:
    return _one("Change the shipping name to {}.", full())


@form
def refund() -> Item:
    return _one("Refund order 4417 for {}", full())


@form
def wife() -> Item:
    return _one("Tell my wife {} I'll be late.", given())


@form
def blame() -> Item:
    return _one("git blame says {} wrote it", full())


@form
def reported() -> Item:
    return _one("Bug from customer {} on 3 March.", full())


@form
def wants() -> Item:
    return _one("{} wants the dashboard by Friday.", given())


@form
def call_back() -> Item:
    return _one("Call {} back tomorrow.", given())


@form
def table_for() -> Item:
    return _one("Book a table for {} and me.", given())


@form
def belongs() -> Item:
    a, b = full(), given()
    return f"The account belongs to {a}, not {b}.", [("PERSON", a), ("PERSON", b)]


@form
def collaborator() -> Item:
    return _one("Add {} as a collaborator.", full())


@form
def cto() -> Item:
    return _one("Our CTO, {}, will present.", full())


@form
def birthday() -> Item:
    return _one("Happy birthday {}!", given())


@form
def tell() -> Item:
    return _one("Tell {} the build is green.", given())


@form
def lower_case() -> Item:
    name = given().lower()
    return _one("ask {} to merge it", name)


@form
def negatives() -> Item:
    return (
        R.choice(
            [
                "Ask Redis for the key.",
                "Deploy to Staging now.",
                "Thanks Team!",
                "Can you check the Billing service?",
                "Merge into Main please.",
                "Ping Support about it.",
                "Tell Jenkins to rebuild.",
                "Attendees: Engineering, Design, Legal",
                "Invoice for March",
                "Book a table for Friday.",
            ]
        ),
        [],
    )


def main(argv: list[str] | None = None) -> None:
    set_main(FORMS, R, __doc__ or "", argv)


if __name__ == "__main__":
    main()

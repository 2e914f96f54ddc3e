"""Names in the documents agents read (postmortems, minutes, clinical and legal text, citations,
changelogs, mail threads, memos, transcripts), written after the detectors and scored blind once.

`later_people.py` holds records (tool output, tables, JSON) and `later_chat.py` short messages.
These are documents: a postmortem's timeline, meeting minutes with their action items, a clinic
note, a court caption in capitals, APA and BibTeX citations, a Debian changelog's trailer, `git
shortlog`, CITATION.cff, an AUTHORS file, Outlook's and Gmail's quoted headers, an out-of-office
reply, a welcome memo, a review comment, an interview transcript with speakers in capitals, a
reported quote, a commit's trailers with no address, a docstring's author, a letter's closing;
and look-alikes (products, teams, places and roles written like names). Names are this module's
own (given and family names of many cultures, some in the name lists, some not).

Scored blind, before anything was changed for them (3 rounds): PERSON 95 of 135 (0.704), no
false finding. Missed: court captions' parties in capitals, BibTeX's `author` fields, `git
shortlog`'s authors, CITATION.cff's `family-names` and `given-names` (a key in the plural), an
AUTHORS file's lines, `wait for Ravindra to`, interview speakers in capitals beside
`INTERVIEWER:`, `hey kofi` in lower case, `Pt: Okafor, Ottilie` (family name first), `Tested-by:`.
Then each form got its rule (names/: citations.py, authorship.py, messages.py `_SPEAKER_ROLES`, the keys): 134 of 135 (3
rounds), 429 of 450 (0.953) over 10 rounds, no false finding. Left: a full name of unlisted
words opening a sentence before `'s` (`Soledad Nakagawa's pull request`), the first author of an
APA citation, a lower-case greeting of a name in no list.

    python -m benchmarks.privacy.later_documents [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import random
from collections.abc import Callable

from benchmarks.privacy.later_people import Item, collector, set_main

FORMS: list[Callable[[], Item]] = []
R = random.Random(0)  # reseeded per round (`score`)

FIRST = [
    "Ravindra",
    "Ottilie",
    "Kofi",
    "Brigid",
    "Ximena",
    "Torsten",
    "Adaeze",
    "Leopold",
    "Noor",
    "Matthias",
    "Fenna",
    "Iñaki",
    "Ludmila",
    "Tane",
    "Yara",
    "Casimir",
    "Efua",
    "Ruairí",
    "Soledad",
    "Viggo",
    "Nnamdi",
    "Agnieszka",
    "Hoang",
    "Rosalind",
]
LAST = [
    "Okafor",
    "Quispe",
    "Halvorsen",
    "Nakagawa",
    "Mwangi",
    "Delacroix",
    "Sørensen",
    "Pillai",
    "Hakobyan",
    "Zielińska",
    "Abdullahi",
    "Villanueva",
    "Tshabalala",
    "Esposito",
    "Marangoni",
    "Oyelowo",
    "Brzezinski",
    "Fairweather",
    "Hamdan",
    "Rautio",
    "Thorsdottir",
    "Kowalewski",
    "Ibarra",
    "Achebe",
]

form = collector(FORMS)


def given() -> str:
    return R.choice(FIRST)


def family() -> str:
    return R.choice(LAST)


def full() -> tuple[str, str, str]:
    first, last = given(), family()
    return f"{first} {last}", first, last


def people(*names: str) -> list[tuple[str, str]]:
    return [("PERSON", name) for name in names]


@form
def postmortem_timeline() -> Item:
    name, _first, last = full()
    other, _f, _l = full()
    text = (
        "## Timeline (UTC)\n"
        f"- 14:02 {name} paged the on-call engineer after the 5xx alert fired.\n"
        f"- 14:09 {last} rolled back release 2.3.1.\n"
        f"- 14:20 {other} confirmed error rates were back to baseline.\n"
    )
    return text, people(name, last, other)


@form
def meeting_minutes() -> Item:
    a, b, c, d = (full()[0] for _ in range(4))
    text = (
        "Weekly infra sync, 3 March\n"
        f"Present: {a}, {b}, {c}\n"
        f"Apologies: {d}\n\n"
        "Actions\n"
        f"* {a.split()[0]} to update the runbook for the failover drill by Friday.\n"
    )
    return text, people(a, b, c, d, a.split()[0])


@form
def clinic_note() -> Item:
    _patient, first, last = full()
    doctor, _f, _l = full()
    text = (
        f"Pt: {last}, {first}    DOB 04/11/1961    MRN 00482913\n"
        "Presenting complaint: intermittent chest pain on exertion, 3 weeks.\n"
        f"Seen by Dr {doctor}; ECG unremarkable; referred to cardiology.\n"
    )
    return text, people(first, last, doctor)


@form
def court_caption() -> Item:
    name, _first, _last = full()
    upper = name.upper()
    text = (
        "UNITED STATES DISTRICT COURT\nNORTHERN DISTRICT OF CALIFORNIA\n\n"
        f"{upper},\n        Plaintiff,\n    v.\nHARBORVIEW LOGISTICS LLC,\n        Defendant.\n\n"
        "Case No. 3:25-cv-04417\n"
    )
    return text, people(upper)


@form
def apa_citation() -> Item:
    last1, last2 = R.sample(LAST, 2)
    first1, first2 = R.sample(FIRST, 2)
    text = (
        f"{last1}, {first1[0]}. A., & {last2}, {first2[0]}. (2019). Tail latency in shared caches. "
        "Journal of Systems Research, 12(3), 45-67."
    )
    return text, people(last1, last2)


@form
def bibtex() -> Item:
    _name1, first1, last1 = full()
    _name2, first2, last2 = full()
    text = (
        "@article{halvorsen2021,\n"
        f"  author  = {{{last1}, {first1} and {last2}, {first2}}},\n"
        "  title   = {Speculative decoding at the edge},\n"
        "  year    = {2021}\n}\n"
    )
    return text, people(last1, first1, last2, first2)


@form
def debian_changelog() -> Item:
    name, first, last = full()
    text = (
        "tandem (0.9.1-1) unstable; urgency=medium\n\n"
        "  * New upstream release.\n"
        "  * Drop patch applied upstream.\n\n"
        f" -- {name} <{first.lower()}.{last.lower()}@example.org>  Mon, 02 Mar 2026 10:00:00 +0100\n"
    )
    return text, people(name)


@form
def shortlog() -> Item:
    a, b, c = (full()[0] for _ in range(3))
    text = f"$ git shortlog -sn --since=2025-01-01\n   142\t{a}\n    37\t{b}\n     5\t{c}\n"
    return text, people(a, b, c)


@form
def citation_cff() -> Item:
    _name, first, last = full()
    text = (
        "cff-version: 1.2.0\n"
        "message: If you use this software, please cite it as below.\n"
        "authors:\n"
        f"  - family-names: {last}\n"
        f"    given-names: {first}\n"
        "    orcid: https://orcid.org/0000-0002-1825-0097\n"
        "title: tandem\n"
    )
    return text, people(last, first)


@form
def authors_file() -> Item:
    a, b, c = (full()[0] for _ in range(3))
    text = f"# Authors, in order of first contribution\n\n{a}\n{b} (documentation)\n{c}\n"
    return text, people(a, b, c)


@form
def outlook_header() -> Item:
    sender, _f, _l = full()
    to, _f2, _l2 = full()
    text = (
        "-----Original Message-----\n"
        f"From: {sender}\n"
        "Sent: Tuesday, March 3, 2026 10:12 AM\n"
        f"To: {to}\n"
        "Subject: RE: Q1 capacity plan\n\n"
        "See the attached sheet.\n"
    )
    return text, people(sender, to)


@form
def gmail_quote() -> Item:
    name, first, _last = full()
    text = (
        "Thanks, merging now.\n\n"
        f"On Tue, Mar 3, 2026 at 10:12 AM {name} <{first.lower()}@example.com> wrote:\n"
        "> The migration is ready for review.\n"
    )
    return text, people(name)


@form
def out_of_office() -> Item:
    name, _f, _l = full()
    text = (
        "I am out of the office until 12 March with limited access to e-mail. "
        f"For urgent matters please contact {name}."
    )
    return text, people(name)


@form
def welcome_memo() -> Item:
    name, first, _l = full()
    text = (
        f"Please welcome {name}, who joins the platform team as a senior engineer this Monday. "
        f"{first} spent six years on storage systems."
    )
    return text, people(name, first)


@form
def review_comment() -> Item:
    first = given()
    return f"LGTM, but let's wait for {first} to weigh in on the retry policy.", people(first)


@form
def interview_transcript() -> Item:
    _name, _first, last = full()
    upper = last.upper()
    text = (
        "INTERVIEWER: When did you first notice the latency?\n"
        f"{upper}: Around the second week, after the cache change.\n"
        "INTERVIEWER: And who reviewed it?\n"
    )
    return text, people(upper)


@form
def reported_quote() -> Item:
    name, _f, _l = full()
    text = f"According to {name}, head of infrastructure at the bank, the outage lasted two hours and no data was lost."
    return text, people(name)


@form
def trailers_without_mail() -> Item:
    a, b = full()[0], full()[0]
    text = f"Fix off-by-one in the window's end\n\nReported-by: {a}\nTested-by: {b}\n"
    return text, people(a, b)


@form
def docstring_author() -> Item:
    name, _f, _l = full()
    text = f'"""Cache helpers.\n\n:author: {name}\n:license: MIT\n"""\n\n__author__ = "{name}"\n'
    return text, people(name)


@form
def letter_closing() -> Item:
    name, _f, _l = full()
    text = (
        "We will confirm the new dates by the end of the week.\n\n"
        f"Kind regards,\n\n{name}\nHead of Finance\nHarborview Logistics\n"
    )
    return text, people(name)


@form
def account_holder() -> Item:
    name, _f, _l = full()
    return f"The account holder is {name}, and the card ends in 4417.", people(name)


@form
def possessive_full() -> Item:
    name, _f, _l = full()
    return f"{name}'s pull request broke the nightly build.", people(name)


@form
def lower_case_chat() -> Item:
    first = given()
    low = first.lower()
    return f"hey {low} can you check why the deploy is stuck?", people(low)


@form
def passive_by() -> Item:
    name, _f, _l = full()
    return f"The contract was countersigned by {name} on 4 March.", people(name)


@form
def obituary_dates() -> Item:
    name, _f, _l = full()
    return f"{name} (1932-2019) founded the company's first research lab in Leeds.", people(name)


@form
def negatives() -> Item:
    text = (
        "Kubernetes Engine, Cloud Run and App Engine are supported.\n"
        "Reviewed-by: Build Bot\n"
        "Prepared by: Finance Department\n"
        "Dear Customer,\n"
        "Please contact Customer Success.\n"
        "Apache Kafka and Apache Spark run on the same nodes.\n"
        "The office is near Victoria Station in Saint Petersburg Square.\n"
        "Open the file in Visual Studio Code or Jupyter Notebook.\n"
        "Author: Unknown\n"
    )
    return text, []


def main(argv: list[str] | None = None) -> None:
    set_main(FORMS, R, __doc__ or "", argv)


if __name__ == "__main__":
    main()

"""The prose name model (router/privacy/names_model.py): names in running text with no cue are
found for the opt-in kind PERSON, code identifiers, products and everyday capitalised words are
not, and the default detectors are unchanged."""

from __future__ import annotations

import pytest

from router.privacy import names_model
from router.privacy.detect import detect
from router.privacy.names import person
from router.privacy.redact import Redactor

PERSON = frozenset({"person"})


def people(text: str) -> set[str]:
    return {f.value for f in detect(text, PERSON) if f.type == "PERSON"}


def test_the_shipped_model_loads() -> None:
    model = names_model.model()
    assert 0.0 < model["threshold"] < 1.0 and 0.0 < model["threshold_run"] < 1.0
    assert len(model["weights"]) > 1000 and "bias" in model["weights"]
    assert "the" in model["lexicon"] and "yesterday" in model["lexicon"]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Escalated by Ottilie Kerrigan: the export job fails on large tenants.", "Ottilie Kerrigan"),
        ("According to Cosima Quarshie, the invoice was paid twice last month.", "Cosima Quarshie"),
        ("Rose Whitfield said she would call back.", "Rose Whitfield"),
    ],
)
def test_names_in_bare_prose_are_found(text: str, name: str) -> None:
    assert name in people(text)
    # Found by the model: the rules alone miss these (no listed word, no cue).
    assert name not in {f.value for f in person.find_rules(text)}
    assert [f.rule for f in person.find(text) if f.value == name] == ["name-model"]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Asked Joaquim Oakenshield yesterday; she confirmed the migration can wait.", "Joaquim Oakenshield"),
        ("We asked Wendelin Thistlewood to rerun the nightly job.", "Wendelin Thistlewood"),
        ("Asked Priya yesterday about the outage.", "Priya"),
        ("I pinged Ottilie Kerrigan about the flaky test.", "Ottilie Kerrigan"),
        ("Thanked Cosima Quarshie for the review.", "Cosima Quarshie"),
    ],
)
def test_the_object_of_a_verb_said_of_people_is_a_name(text: str, name: str) -> None:
    assert name in people(text)
    assert [f.rule for f in person.find(text) if f.value == name] == ["name-asked"]


@pytest.mark.parametrize(
    "text",
    [
        "I asked Stack Overflow and it says the flag is deprecated.",
        "Thanks Stack Exchange for the answer.",
        "We told Python to stop at the first failure.",
        "I asked ChatGPT to write the migration.",
        "Jul  2 18:08:55 host kernel[0]: wl0: leaveModulePoweredForOffloads: Wi-Fi will stay on.",
    ],
)
def test_words_of_software_after_such_a_verb_are_no_names(text: str) -> None:
    assert people(text) == set()


def test_what_a_text_says_of_a_word_is_read_from_all_its_candidates() -> None:
    text = (
        "Priya Nair opened the ticket. President Okonkwo visited the plant. "
        "Dr. Abebe reviewed it. Halvorsen said the fix works. Asha Lindqvist wrote back."
    )
    lexicon = names_model.model()["lexicon"]
    spans = list(names_model.candidates(text, lexicon))
    cued = names_model.cues(text, spans, [names_model.near(text, s, e) for s, e in spans])
    assert "nair" in cued.after_given and "lindqvist" in cued.after_given
    assert {"okonkwo", "abebe"} <= cued.after_title
    assert "halvorsen" in cued.reporting
    assert "priya" not in cued.after_given


def test_a_word_the_text_names_as_a_family_name_elsewhere_scores_higher() -> None:
    # `Oakenshield` alone opening a sentence, with and without `Priya Oakenshield` elsewhere.
    alone = "Oakenshield reviewed the patch on Monday."
    cued = alone + " The ticket was opened by Priya Oakenshield last week."
    lexicon = names_model.model()["lexicon"]

    def probability(text: str) -> float:
        spans = list(names_model.candidates(text, lexicon))
        found = names_model.cues(text, spans, [names_model.near(text, s, e) for s, e in spans])
        return names_model.score(names_model.features(text, 0, len("Oakenshield"), lexicon, found))

    assert probability(cued) > probability(alone) + 0.1


@pytest.mark.parametrize(
    ("text", "again"),
    [
        # A surname alone, opening a sentence, after the full name the model found.
        (
            "The report from Serafina Quarshie came in late. Quarshie found that the invoice was paid twice.",
            "Quarshie",
        ),
        # A name the rules found from a cue (an e-mail trailer), again in the prose.
        (
            "Signed-off-by: Wendell Ashgrove <wendell@example.org>\n\nThe patch from Ashgrove fixes the retry loop.\n",
            "Ashgrove",
        ),
    ],
)
def test_a_found_name_is_found_again_in_the_same_text(text: str, again: str) -> None:
    second = text.rindex(again)
    assert (second, second + len(again)) in {(f.start, f.end) for f in person.find(text)}
    # The second place alone is not enough for the model.
    assert not list(names_model.find(text[text.index(".") + 1 :]))


def test_an_everyday_name_is_not_found_again() -> None:
    """`Victoria` names a person once; the word is also everyday (`Victoria station`)."""
    text = "Thanks to Victoria Okonkwo for the review. Victoria station was closed, so the team met online."
    assert [f.value for f in person.find(text)] == ["Victoria Okonkwo"]


@pytest.mark.parametrize(
    "text",
    [
        "class UserManager(MyClass):\n    def run(self) -> None:\n        return Path(self.root)\n",
        "from router.trajectory.stitch import Stitcher, Batcher\nMark = tuple[int, int]\n",
        "However, the Server restarted after the Deployment finished. Please check the Dashboard.",
        "Jun 22 13:16:30 combo sshd[17886]: connection from 210.245.165.136 () at Wed Jun 22 2005",
        "The writes wait until Redis is back; Grafana and Prometheus scrape the gateway.",
        "| Search Index | Data Team | Amber |\n| Billing Service | Payments Team | Green |\n",
        "Call os.Path.join(BaseDir, ConfigLoader) and log INFO UserService started on node-3.",
    ],
)
def test_code_products_and_everyday_capitals_are_not_names(text: str) -> None:
    assert not [f for f in person.find(text) if f.rule == "name-model"]


def test_default_detectors_find_no_names() -> None:
    text = "Spoke to Joaquim Oakenshield yesterday; she confirmed the migration can wait."
    assert not [f for f in detect(text) if f.type == "PERSON"]


def test_a_prose_name_is_redacted_and_restored() -> None:
    text = "Escalated by Teodora Kerrigan: the export job fails on large tenants."
    values = {value: f"[PERSON_{i}]" for i, value in enumerate(sorted(people(text)), 1)}
    redactor = Redactor(values)
    redacted, count = redactor.text(text)
    assert count >= 1 and "Kerrigan" not in redacted and "[PERSON_1]" in redacted
    assert redactor.restore_text(redacted) == text


def test_cost_is_linear_in_the_text() -> None:
    """Candidates are found by one regular expression pass and scored with bounded look-ups:
    a text four times longer holds four times the names."""
    unit = "Spoke to Joaquim Oakenshield yesterday; Redis restarted. class UserManager(MyClass): pass\n"
    small, large = unit * 200, unit * 800
    assert len(list(names_model.find(large))) == 4 * len(list(names_model.find(small)))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Given names in no list, told apart by their letters (the `ng` features) and the US records'
        # given names (`given_us`): the model before these features missed them.
        ("You can tell Jouni was a huge fan of the band.", {"Jouni"}),
        ("I'm so jealous! said Erle to Maurice", {"Erle", "Maurice"}),
    ],
)
def test_unlisted_given_names_in_short_sentences_are_found(text: str, expected: set[str]) -> None:
    assert {text[start:end] for start, end in names_model.find(text)} == expected


@pytest.mark.parametrize(
    "text",
    [
        "We moved the Kubernetes cluster to Frankfurt last week and it works.",
        "Google's new release broke the build again, so we pinned the version.",
        "the Civic Center was closed for the day",
        "The Impulse team shipped it and we are happy with it.",
        "Run the Makefile target and check the Changelog for the version.",
    ],
)
def test_places_firms_and_possessives_of_products_are_not_names(text: str) -> None:
    assert list(names_model.find(text)) == []


def test_name_likeness_reads_letters_not_the_lists() -> None:
    lexicon = names_model.model()["lexicon"]
    # A listed name is scored as if it were not listed (its own letters left out), so the
    # feature means the same for listed and unlisted words.
    assert names_model.name_likeness("katrine", lexicon) > 1.0
    assert names_model.name_likeness("impulse", lexicon) < -0.5
    assert "ng=3" in names_model.word_features("Katrine", lexicon)


def test_a_possessive_is_a_feature() -> None:
    text = "though Meza's song was about a boat"
    start = text.index("Meza")
    assert "possessive" in names_model.features(text, start, start + 4)


@pytest.mark.parametrize(
    ("text", "word", "expected"),
    [
        # Across a title's dot; two spaces are one gap.
        ("We met Dr.  Amara there.", "Amara", (".", False, "Dr", "there", ".")),
        # Words two gaps away, each gap of two spaces.
        ("They  said  Nair  came.", "Nair", ("said", False, "They", "came", ".")),
        # At the text's start; the word after next read across one word only.
        ("Nair Kumar told us.", "Nair", (None, False, None, "Kumar", "told")),
        # A mark after it ends the reading there.
        ("It was Nair, who else.", "Nair", ("was", False, "It", ",", None)),
        # A line break before it is said.
        ("Thanks\nNair will call.", "Nair", ("Thanks", True, None, "will", "call")),
    ],
)
def test_a_candidates_neighbours(text: str, word: str, expected: tuple[object, ...]) -> None:
    start = text.index(word)
    assert tuple(names_model.near(text, start, start + len(word))) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Later, the Colonel thought it expedient to leave the fort.",
        "The Chancellor handled it neatly, when he could.",
    ],
)
def test_a_title_or_an_office_alone_is_no_candidate(text: str) -> None:
    lexicon = names_model.model()["lexicon"]
    assert [text[s:e] for s, e in names_model.candidates(text, lexicon)] == []


def test_a_family_name_that_is_a_title_too_stays_a_candidate() -> None:
    text = "Martin Luther King spoke to the crowd that day."
    assert people(text) == {"Martin Luther King"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("They met at the Lincoln Memorial on Sunday.", set()),
        ("She gave the Carnegie Lecture at the Brandt Foundation in May.", set()),
        # A single word taken for a name before the rest of the institution's name.
        ("Pad 39A at the Kennedy Space Center on April 12 was ready.", set()),
        # A full name before an institution's stays a person's.
        ("Priya Nair School of Medicine wrote back.", {"Priya Nair"}),
        # A kind that is a family name too ends a person's name.
        ("Stuart Hall wrote the essay in 1973.", {"Stuart Hall"}),
    ],
)
def test_a_run_ending_in_an_institutions_kind_is_no_person(text: str, expected: set[str]) -> None:
    assert people(text) == expected

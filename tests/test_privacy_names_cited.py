"""Authors cited by name and year (papers, reports, docstrings that cite a method): in the
text (`Oyelaran (1987) noted`) and in parentheses (`(Quastenberg & Ilunga 2011; Trevisanato
et al., 2013)`); and the look-alikes a year follows that are no authors (software, months,
feasts, institutions, places)."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect

PEOPLE = frozenset({"person", "address"})


def people(text: str) -> list[str]:
    return [f.value for f in detect(text, PEOPLE) if f.type == "PERSON"]


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("As Oyelaran (1987) noted, the second line carries the verb.", ["Oyelaran"]),
        ("The types follow Brembati Salvi (2004, p. 31) closely.", ["Brembati Salvi"]),
        (
            "among others Quastenberg (1964), Iturbe Zamacona, (2000), and Vlahović (1983a)",
            ["Quastenberg", "Iturbe Zamacona", "Vlahović"],
        ),
        ("a long history in scholarship (Quastenberg & Ilunga 2011), but", ["Quastenberg", "Ilunga"]),
        (
            "(Trevisanato et al., 2013; Oyelaran 2010; Quastenberg and Ilunga, 2011)",
            ["Trevisanato", "Oyelaran", "Quastenberg", "Ilunga"],
        ),
        ("(see for example Vlahović 2014; Brembati Salvi et al., 2005) and", ["Vlahović", "Brembati Salvi"]),
        ("the model of Trevisanato et al (2006) for consistency", ["Trevisanato"]),
        ("(e.g., Iturbe Zamacona, Oyelaran, & Vlahović, 2019)", ["Iturbe Zamacona", "Oyelaran", "Vlahović"]),
    ],
)
def test_authors_cited_with_a_year(text: str, names: list[str]) -> None:
    found = people(text)
    assert sorted(found) == sorted(names), found


@pytest.mark.parametrize(
    "text",
    [
        "Windows (2000) and Office (2016) are still installed on the build host.",
        "(Windows 2000) (Python 2019) (March 2020) (Christmas 2019) (Summer 2021) (Tokyo 2020)",
        "Released in (2019). Fixed in Version (2021); Table (2) shows the timing.",
        ":Copyright: Smithsonian Astrophysical Observatory (2011)",
        "(NeurIPS 2020) (ICML 2019) (since 2019) (CVE 2021)",
    ],
)
def test_years_after_words_that_are_no_authors(text: str) -> None:
    assert people(text) == []

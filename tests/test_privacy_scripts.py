"""Values written in other scripts and forms: e-mail addresses in other scripts (RFC 6531, IDNA),
addresses with combining accents or zero-width characters written into them to slip past an
ASCII pattern, and full-width digits and letters as Japanese and Chinese input methods type
them: found whole, as written."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect


@pytest.mark.parametrize(
    "address",
    [
        "jürgen.müller@bücher.de",
        "ñandú@correo.es",
        "user@例え.jp",
        "почта@пример.рф",
        "δοκιμή@παράδειγμα.ελ",
        "ali\u200dce@exam\u200dple.com",
        "alice\u200b@example.com",
        "alice\u0301@example.com",
        "bob\u2060@mail.example.org",
    ],
)
def test_an_address_in_another_script_or_with_hidden_marks_is_one_finding(address: str) -> None:
    for text in (f"write to {address} today", f"«{address}»", f"Mit freundlichen Grüßen\n{address}\n"):
        found = [(f.type, f.value) for f in detect(text)]
        assert found == [("EMAIL", address)], (text, found)


@pytest.mark.parametrize(
    "text",
    [
        "café @ noon, thé à 5 h",
        "Grüße @everyone — the meeting moved",
        "@décorateur\ndef f(): pass",
        "a ü@ b",
        "naïve@home",  # no dot and top-level domain
        "x@ü.1",
    ],
)
def test_an_at_sign_among_other_scripts_is_no_address(text: str) -> None:
    assert [f for f in detect(text) if f.type == "EMAIL"] == []


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("card ４１１１ １１１１ １１１１ １１１１ please", "CARD", "４１１１ １１１１ １１１１ １１１１"),
        ("ssn ０７８-０５-１２２０", "US_SSN", "０７８-０５-１２２０"),
        ("メール：ｔａｒｏ＠ｅｘａｍｐｌｅ．ｃｏｍ　です", "EMAIL", "ｔａｒｏ＠ｅｘａｍｐｌｅ．ｃｏｍ"),
        ("電話 ０９０-１２３４-５６７８", "PHONE", "０９０-１２３４-５６７８"),
    ],
)
def test_full_width_forms_are_read_as_ascii_and_found_as_written(text: str, kind: str, value: str) -> None:
    found = [(f.type, f.value, text[f.start : f.end]) for f in detect(text)]
    assert found == [(kind, value, value)], found

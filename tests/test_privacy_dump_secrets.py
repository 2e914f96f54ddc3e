"""Secrets inside objects a program prints (PHP's `var_dump` and `print_r`, a Netscape cookie
file's session cookie) and the set of forms that found them missing
(benchmarks/privacy/later_dumps.py)."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect

PW = "Vl4*nu-YV!d8fNYvv%"
COOKIE = "4cFut1DdZ04ZAmJ9Of1Uiaz8RAuanaTW"


def test_the_dump_forms_written_after_the_detectors() -> None:
    # Scored blind once: 38 of 45 values; rules since. (A password of letters alone, which the
    # three rounds draw once, is refused by design: a translation's `"password": "Passwort"`.)
    from benchmarks.privacy import later_dumps, later_forms

    found, _missed, misses = later_forms.score(3, later_dumps.FORMS)
    assert found["dumps"] >= 44, misses
    assert all(value.isalpha() for _form, value in misses), misses


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (f'array(2) {{\n  ["user"]=>\n  string(4) "shop"\n  ["password"]=>\n  string(18) "{PW}"\n}}', PW),
        ("Array\n(\n    [user] => shop\n    [password] => Sunny9509#\n)\n", "Sunny9509#"),
        (f"# Netscape HTTP Cookie File\n.example.org\tTRUE\t/\tTRUE\t1767225600\tsessionid\t{COOKIE}\n", COOKIE),
        (f"#HttpOnly_.example.org\tTRUE\t/\tTRUE\t0\t_gitlab_session\t{COOKIE}\n", COOKIE),
    ],
)
def test_dumped_secrets_are_found(text: str, value: str) -> None:
    assert value in [f.value for f in detect(text)]


@pytest.mark.parametrize(
    "text",
    [
        '["password_min_length"]=>\n  string(2) "12"',
        ".example.org\tTRUE\t/\tFALSE\t1767225600\ttheme\tdark-high-contrast\n",
        ".example.org\tTRUE\t/\tTRUE\t1767225600\tsessionid\tdeleted\n",
    ],
)
def test_dump_look_alikes(text: str) -> None:
    assert [f for f in detect(text) if f.type == "SECRET_ASSIGNMENT"] == []

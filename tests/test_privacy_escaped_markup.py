"""Secrets written through an escape or a wrapping: quotes as HTML entities or `\\u` escapes, a
password input's value, an XML element with attributes, a YAML block scalar, a shell's ANSI-C
string, a Markdown table's cell; and the set of forms that found them missing
(benchmarks/privacy/later_escaped.py). A value holding an escape is redacted as written and
restored byte for byte."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect
from router.privacy.redact import Redactor

TOKEN = "ffu4G7FgtJsThJv07In9ZMJLsCfMZyuKpslm0lcN"


def test_the_escaped_forms_written_after_the_detectors() -> None:
    # Scored blind once: 30 of 54 values; the escape view and rules since. The one value left is
    # a password of letters alone under a name, which the detectors refuse by design (a
    # translation file's `"password": "Passwort"`).
    from benchmarks.privacy import later_escaped, later_forms

    found, _missed, misses = later_forms.score(3, later_escaped.FORMS)
    assert found["escaped"] >= 53, misses
    assert all(value == "JlpobluliGGxGR" for _form, value in misses), misses


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (f"<code>API_SECRET=&quot;{TOKEN}&quot;</code>", TOKEN),
        ("<pre>{&quot;db&quot;: {&quot;password&quot;: &quot;Tiger8906*&quot;}}</pre>", "Tiger8906*"),
        ("{&#34;password&#34;: &#34;Falcon5985#x&#34;}", "Falcon5985#x"),
        ("{\\u0022password\\u0022: \\u0022aXmI63JozGw82KwD6r\\u0022}", "aXmI63JozGw82KwD6r"),
        ('<input type="password" name="pwd" value="Sunny679!x" autocomplete="off">', "Sunny679!x"),
        ('<input value="M9UayY20948VGZiHXJnB" name="p" type="password">', "M9UayY20948VGZiHXJnB"),
        ('<password encrypted="false">qux-aXfFteaSoK</password>', "qux-aXfFteaSoK"),
        (f"auth:\n  client_secret: >-\n    {TOKEN}\n  client_id: ledger\n", TOKEN),
        ("export DB_PASSWORD=$'n9XdYRk2kvHqhM\\n'", "n9XdYRk2kvHqhM"),
        (
            "| name | value |\n|---|---|\n| `DEPLOY_TOKEN` | `f01fa9e1d6240cda060036369853fc208e384b34` |",
            "f01fa9e1d6240cda060036369853fc208e384b34",
        ),
    ],
)
def test_escaped_and_wrapped_secrets_are_found(text: str, value: str) -> None:
    assert value in [f.value for f in detect(text)]


def test_a_value_holding_an_entity_is_redacted_as_written_and_restored() -> None:
    text = "<pre>{&quot;password&quot;: &quot;p4ss&amp;word!9&quot;}</pre>"
    found = [f for f in detect(text) if f.type == "SECRET_ASSIGNMENT"]
    assert [f.value for f in found] == ["p4ss&amp;word!9"]
    redactor = Redactor({"p4ss&amp;word!9": "[SECRET_ASSIGNMENT_1]"})
    redacted, count = redactor.text(text)
    assert count == 1 and "p4ss" not in redacted
    assert redactor.restore_text(redacted) == text


@pytest.mark.parametrize(
    "text",
    [
        "<p>Use &quot;password&quot; as the field&#39;s name &amp; &lt;b&gt;never&lt;/b&gt; log it.</p>",
        '<input type="password" name="pwd" value="" placeholder="Password">',
        '<input type="password" value="{{ form.password.value }}">',
        '<password encrypted="true">${DB_PASSWORD}</password>',
        "script: |\n  echo building\n  make test\n",
        "password: |\n  Passwort\n",
        "| `API_TOKEN` | see the vault |",
        "| Secret | Description |\n|---|---|\n| `TOKEN` | the deploy token |",
    ],
)
def test_escaped_and_wrapped_look_alikes(text: str) -> None:
    assert [f for f in detect(text) if f.type == "SECRET_ASSIGNMENT"] == []

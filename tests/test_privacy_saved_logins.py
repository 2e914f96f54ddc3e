"""Logins as password managers, keychains and saved-connection files keep them (a key element
then its value element, what a secret-printing command prints, Sentinel's `auth-pass`, NATS
seeds, a CSV export's password cell) and the set of forms that found them missing
(benchmarks/privacy/later_vaults.py)."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect

SEED = "SUAGNUCBASU4ZUZEEU5HQN6WQLNTMPXFRF4FVOYTQ3RXK2PLMWJ6TZ5HBA"


def test_the_vault_forms_written_after_the_detectors() -> None:
    # Scored blind once: 34 of 57 values; rules since.
    from benchmarks.privacy import later_forms, later_vaults

    found, missed, misses = later_forms.score(3, later_vaults.FORMS)
    assert not missed["vaults"], misses
    assert found["vaults"] == 57


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (
            '<String>\n\t<Key>Password</Key>\n\t<Value ProtectInMemory="True">Sunny9421!</Value>\n</String>',
            "Sunny9421!",
        ),
        ("<key>Password</key>\n<string>RoLE!rnPf0jWsqR</string>", "RoLE!rnPf0jWsqR"),
        ("$ pass show work/vpn\nozGw82KwD6rQJM9UayY2\nusername: ana\n", "ozGw82KwD6rQJM9UayY2"),
        ("ana@mac % security find-generic-password -s deploy-key -w\nOrbit9634*x\n", "Orbit9634*x"),
        ("$ secret-tool lookup service smtp user ana\neKJoKf8rx5sKI7hD5rgY\n", "eKJoKf8rx5sKI7hD5rgY"),
        (
            "sentinel monitor mymaster 10.0.0.5 6379 2\nsentinel auth-pass mymaster c0saNQafAh04YcmpYL",
            "c0saNQafAh04YcmpYL",
        ),
        (f"-----BEGIN USER NKEY SEED-----\n{SEED}\n------END USER NKEY SEED------", SEED),
        ('<Pass encoding="base64">U3VubnkxMzY4IQ==</Pass>', "U3VubnkxMzY4IQ=="),
        ("url,username,password,totp\nhttps://mail.example.org/,ana,!1fjORS#6ilI,\n", "!1fjORS#6ilI"),
    ],
)
def test_saved_logins_are_found(text: str, value: str) -> None:
    assert value in [f.value for f in detect(text)]


@pytest.mark.parametrize(
    "text",
    [
        "            # pass kwargs in extra_body\n            optional_params['extra_body'].update(kwargs)",
        "$ pass\nPassword Store\n├── work\n",
        "$ pass git push\nEverything-up-to-date\n",
        "<key>Password</key>\n<string>${KEYCHAIN_PASSWORD}</string>",
        "<key>PasswordPolicy</key>\n<string>strict</string>",
        "SUAVE and SUAVE-TWO are codenames",
        "sentinel auth-pass mymaster $SENTINEL_PASSWORD",
    ],
)
def test_saved_login_look_alikes(text: str) -> None:
    kinds = ("SECRET_ASSIGNMENT", "PRIVATE_KEY")
    assert [f for f in detect(text) if f.type in kinds] == []

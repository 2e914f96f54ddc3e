"""Secrets held as a name field and a value field (XML attributes, a name element then a value
element, Helm's `--set` of a list item's name and value) and the set of forms that found them
missing (benchmarks/privacy/later_pairs.py)."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect

PW = "B8dE3xKJm8GAF0w"


def test_the_pair_forms_written_after_the_detectors() -> None:
    # Scored blind once: 24 of 42 values; rules since.
    from benchmarks.privacy import later_forms, later_pairs

    found, missed, misses = later_forms.score(3, later_pairs.FORMS)
    assert not missed["pairs"], misses
    assert found["pairs"] == 42


@pytest.mark.parametrize(
    "text",
    [
        f'<envs>\n  <env name="DB_PASSWORD" value="{PW}" />\n</envs>',
        f'<mapEntry key="STRIPE_SECRET" value="{PW}"/>',
        f'<EnvironmentVariable key = "API_KEY" value = "{PW}" isEnabled = "YES">',
        f'<appSettings>\n  <add key="ApiSecret" value="{PW}" />\n</appSettings>',
        f"<context-param>\n  <param-name>ldap.bind.password</param-name>\n  <param-value>{PW}</param-value>",
        f"helm upgrade api ./chart --set env[0].name=DB_PASSWORD --set env[0].value={PW}",
        f"helm install api ./chart --set extraEnv[2].name=API_TOKEN,extraEnv[2].value={PW}",
    ],
)
def test_pair_secrets_are_found(text: str) -> None:
    assert PW in [f.value for f in detect(text)]


@pytest.mark.parametrize(
    "text",
    [
        '<add key="PasswordLabel" value="Enter your password" />',
        '<add key="TokenUrl" value="https://login.example.org/oauth/token" />',
        '<env name="PROFILE" value="dev-eu-west-1-blue" />',
        '<add key="ApiSecret" value="${API_SECRET}" />',
        "helm upgrade api ./chart --set env[0].name=DB_PASSWORD --set env[1].value=Xy7pass9Qz",
        "<param-name>password.min.length</param-name>\n<param-value>12345678</param-value>",
    ],
)
def test_pair_look_alikes(text: str) -> None:
    assert [f for f in detect(text) if f.type == "SECRET_ASSIGNMENT"] == []

"""Credentials of build and release tooling (router/privacy/build_secrets.py, the package tools'
flags in credentials.py) and the set of forms that found them missing
(benchmarks/privacy/later_build.py)."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect

PASSWORD = "Kv7#pQ2mZ9xL"


def test_the_build_forms_written_after_the_detectors() -> None:
    # Scored blind once: 60 of 84 values; rules since.
    from benchmarks.privacy import later_build, later_forms

    found, missed, misses = later_forms.score(3, later_build.FORMS)
    assert not missed["build"], misses
    assert found["build"] == 84


@pytest.mark.parametrize(
    "text",
    [
        f"        storePassword '{PASSWORD}'\n        keyAlias 'upload'",
        f'    keyPassword "{PASSWORD}"',
        f"keytool -genkeypair -keystore r.jks -storepass Ab3dE6gH9jK -keypass {PASSWORD} -dname 'CN=x'",
        f"twine upload -u ci --password {PASSWORD} dist/*",
        f"conan remote login artifactory ci -p {PASSWORD}",
        f"poetry config http-basic.internal ci-user {PASSWORD}",
        f"<settingsSecurity>\n  <master>{{{PASSWORD}abc=}}</master>\n</settingsSecurity>",
        "channels:\n  - https://conda.anaconda.org/t/ab-Q8zRt5LmW2xVp9KdN3sYh7Jc/internal",
    ],
)
def test_build_secrets_are_found(text: str) -> None:
    values = [f.value for f in detect(text)]
    assert any(PASSWORD in v or "Q8zRt5" in v for v in values), values


@pytest.mark.parametrize(
    "text",
    [
        '    password "${NEXUS_PASSWORD}"',  # a reference
        "    storePassword System.getenv('STORE_PASSWORD')",  # a call, not a literal
        'Enter your password "carefully" here',  # prose, not a DSL call alone on its line
        f"keytool -list -keystore a.jks | grep x; echo -keypass {PASSWORD}",  # not keytool's flag
        "<master>localhost</master>",  # no settings-security around it
    ],
)
def test_build_look_alikes_are_not_secrets(text: str) -> None:
    assert not detect(text), detect(text)


def test_the_login_forms_written_after_the_detectors() -> None:
    # benchmarks/privacy/later_logins.py: developer CLIs' login commands and AI tools' configs,
    # scored blind once (54 of 57; the misses `wandb login <key>`), then that rule.
    from benchmarks.privacy import later_forms, later_logins

    found, missed, misses = later_forms.score(3, later_logins.FORMS)
    assert not missed["logins"], misses
    assert found["logins"] == 57


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("wandb login --relogin 4283fefc63f0cd0e873a0000c6d07ef7b77e90d3", True),
        ("wandb login", False),
        ("run `wandb login` to authenticate", False),
    ],
)
def test_wandb_login(text: str, found: bool) -> None:
    assert bool(detect(text)) is found, detect(text)


def test_the_client_forms_written_after_the_detectors() -> None:
    # benchmarks/privacy/later_clients.py: mail, chat and sync clients' dotfiles, scored blind
    # once (36 of 45: isync's `Pass`, NickServ's IDENTIFY, davfs2's secrets), then those rules.
    from benchmarks.privacy import later_clients, later_forms

    found, missed, misses = later_forms.score(3, later_clients.FORMS)
    assert not missed["clients"], misses
    assert found["clients"] == 45


@pytest.mark.parametrize(
    "text",
    [
        'IMAPAccount work\nHost imap.example.com\nPassCmd "pass show mail"\n',  # a command, no value
        "Pass the salt, please\n",  # no IMAP block
        "ask NickServ to identify you",
        "# davfs2\n/mnt/dav alice\n",  # a user, no password
    ],
)
def test_client_look_alikes(text: str) -> None:
    assert not detect(text), detect(text)

"""Credentials in build and release tooling that no name-and-value rule reads: a Gradle (Groovy)
or Ruby DSL call whose argument is the password (`storePassword 'X'`, `keyPassword "X"`), Maven's
master password in `settings-security.xml` (encrypted with a key every Maven knows, so as good as
plain), Anaconda's channel tokens in a URL's path (`conda.anaconda.org/t/<token>/…`), and a
Dockerfile's `ENV` in its older form, the name and the value apart by a space (`ENV DB_PASSWORD X`).
"""

from __future__ import annotations

import re

from router.privacy import validators
from router.privacy.credentials import ARG, command_password, command_rule, opaque_token, password_value
from router.privacy.detector import Detector
from router.privacy.patterns import SECRET_NAMES


def _env_value(value: str) -> bool:
    """A Dockerfile `ENV`'s value under a secret's name: a password's or a token's shape, not a
    reference (`$TOKEN`, `{{ TOKEN }}`) nor a URL."""
    return "://" not in value and (password_value(value) or validators.secret_value(value))


DETECTORS: tuple[Detector, ...] = (
    Detector(
        "SECRET_ASSIGNMENT",
        # A DSL call alone on its line: a password's name, a space, one quoted argument
        # (Gradle's signing configs and repository credentials, a Podfile's or Fastfile's).
        re.compile(
            r"(?m)^[ \t]*(?:[a-z]+(?:Password|Passwd|Passphrase)|password|passwd|passphrase)[ \t]+"
            r"(?:\"(?P<dq>[^\"\n]{4,200})\"|'(?P<sq>[^'\n]{4,200})')[ \t]*(?:\r?$|//)"
        ),
        rb"(?i)pass(?:word|wd|phrase)[ \t]+[\"'][^\"'\n]{4}",
        validate=command_password,
        group=0,
        reach=210,
        lead=40,
        rule="dsl-password-call",
        value_span=lambda match: match.span("dq") if match.group("dq") is not None else match.span("sq"),
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # settings-security.xml's master password (`<master>{…}</master>`).
        re.compile(r"<master>([^<\s]{6,200})</master>"),
        rb"<master>[^<\s]{6}",
        validate=command_password,
        check=lambda text, start, _end: "settingsSecurity" in text[max(0, start - 300) : start],
        group=1,
        reach=200,
        rule="maven-master-password",
        keyword_core=20,
    ),
    Detector(
        "API_KEY",
        # An Anaconda token in a channel's URL (`https://conda.anaconda.org/t/<token>/channel`).
        re.compile(r"(?<=anaconda\.org/t/)([A-Za-z0-9-]{16,128})(?=/)"),
        rb"anaconda\.org/t/[A-Za-z0-9-]{16}",
        validate=opaque_token,
        group=1,
        reach=128,
        rule="anaconda-channel-token",
        keyword_core=40,
    ),
    # `ENV NAME value` (the `=` form is any assignment's): the name ends in a secret's word; at
    # a line's start or a string's (a Dockerfile's line quoted in a tool's JSON output).
    command_rule(
        "dockerfile-env-secret",
        r"(?m)(?:^|(?<=[\"'`]))[ \t]*ENV[ \t]+[\w.-]{0,60}?(?i:" + SECRET_NAMES + r")[0-9]{0,2}[ \t]+" + ARG,
        rb"(?:^|[\n\"'`])[ \t]*ENV[ \t]+[\w.-]{0,60}(?i:" + SECRET_NAMES.encode() + rb")[0-9]{0,2}[ \t]+[^\s=]",
        100,
        _env_value,
    ),
)

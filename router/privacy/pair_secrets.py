"""Secrets held as a name field and a value field, where the secret's name is a field's value
rather than a key: XML elements with a `name` or `key` attribute naming a secret and a `value`
attribute holding it (IntelliJ's `<env name="DB_PASSWORD" value="X" />`, Eclipse's `<mapEntry
key=… value=…/>`, Xcode's `<EnvironmentVariable key = "API_KEY" value = "X">`, .NET's `<add
key="ApiSecret" value="X" />`), a name element then a value element (`web.xml`'s
`<param-name>ldap.bind.password</param-name>` and `<param-value>`), and Helm's `--set` of a
list item's `name` and `value` (`--set env[0].name=DB_PASSWORD --set env[0].value=X`). (JSON's
`{"key": …, "value": …}` pairs are the assignments' rules'.)"""

from __future__ import annotations

import re

from router.privacy import validators
from router.privacy.credentials import ARG, command_rule, password_value
from router.privacy.detector import Detector
from router.privacy.patterns import SECRET_WORDS

# A name holding a secret's word (`DB_PASSWORD`, `ApiSecret`, `ldap.bind.password`), not a word
# about one (`PasswordLabel`, `token_url`, `secret_name`).
_ABOUT = (
    r"label|text|message|msg|hint|prompt|title|placeholder|policy|length|len|min|max|enabled|required|url|uri"
    r"|path|file|name|id|type|field|regex|pattern|expiry|expires|ttl|timeout|reset|format|hash|salt"
)
_NAME = r"(?i:[\w.-]{0,60}?" + SECRET_WORDS + r"(?:[_.-]?(?!(?:" + _ABOUT + r")(?![a-z0-9]))[a-z0-9]{1,20}){0,2})"


def _pair_value(value: str) -> bool:
    """A value beside a secret's name: a password's or a token's shape, with no space."""
    return " " not in value and (password_value(value) or validators.secret_value(value))


DETECTORS: tuple[Detector, ...] = (
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(
            r"<[\w:.-]{1,60}[ \t][^<>]{0,200}?\b(?:name|key)[ \t]*=[ \t]*\"" + _NAME + r"\"[^<>]{0,200}?"
            r"\bvalue[ \t]*=[ \t]*\"([^\"\n<>]{4,400})\""
        ),
        rb"(?i)(?:name|key)[ \t]*=[ \t]*\"[\w.-]{0,60}?(?:pass|pwd|secret|token|key|credential)",
        validate=_pair_value,
        group=1,
        lead=260,
        reach=700,
        rule="xml-name-value",
        keyword_core=90,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(
            r"<(param-name|name|key)>[ \t]*" + _NAME + r"[ \t]*</\1>[ \t]*\r?\n?[ \t]*"
            r"<(param-value|value)>([^<>\n]{4,400})</\2>"
        ),
        rb"(?i)<(?:param-name|name|key)>[ \t]*[\w.-]{0,60}?(?:pass|pwd|secret|token|key|credential)",
        validate=_pair_value,
        group=3,
        reach=600,
        rule="xml-name-element-value",
        keyword_core=90,
    ),
    command_rule(
        "helm-set-list-secret",
        r"\b([\w.-]{1,60}\[\d{1,3}\])\.name=" + _NAME + r"(?=[ \t,])[^\n]{0,300}?[ \t,=]\1\.value=" + ARG,
        rb"\]\.name=",
        90,
        lead=80,
        reach=500,
    ),
)

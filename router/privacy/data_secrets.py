"""Credentials of data tools that no name-and-value rule reads: the password Elasticsearch's
tools print (`elasticsearch-reset-password`: `New value: X`; `elasticsearch-setup-passwords`:
`PASSWORD elastic = X`), a secret wrapped by a constructor that says it is one (Prefect's
`Secret(value="X")`, pydantic's `SecretStr("X")`), and a Google service account key's
`private_key_id` (the key's name at Google: with it and the account, a key can be revoked or
looked up).
"""

from __future__ import annotations

import re

from router.privacy.credentials import command_password, opaque_token
from router.privacy.detector import Detector


def _after_password_words(text: str, start: int, _end: int) -> bool:
    """`New value:` is the password's when the tool's lines before it say so."""
    return "password" in text[max(0, start - 300) : start].lower()


DETECTORS: tuple[Detector, ...] = (
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(r"(?m)^New value: ([^\s]{6,200})[ \t]*\r?$"),
        rb"New value: [^\s]{6}",
        validate=command_password,
        check=_after_password_words,
        group=1,
        reach=200,
        rule="elasticsearch-new-password",
        keyword_core=20,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(r"(?m)^PASSWORD [A-Za-z0-9_.-]{1,64} = ([^\s]{6,200})[ \t]*\r?$"),
        rb"PASSWORD [A-Za-z0-9_.-]{1,64} = [^\s]{6}",
        validate=command_password,
        group=1,
        reach=200,
        rule="elasticsearch-setup-password",
        keyword_core=90,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # A constructor named for a secret, given the value (a literal, not a variable).
        re.compile(
            r"(?<![\w.])(?:[A-Za-z_][\w]*\.)?(?:Secret|SecretStr|SecretBytes)\([ \t]*(?:value[ \t]*=[ \t]*)?b?"
            r"(?:\"(?P<dq>[^\"\n]{6,200})\"|'(?P<sq>[^'\n]{6,200})')"
        ),
        rb"Secret(?:Str|Bytes)?\([ \t]*(?:value[ \t]*=[ \t]*)?b?[\"'][^\"'\n]{6}",
        validate=command_password,
        group=0,
        reach=210,
        lead=40,
        rule="secret-constructor",
        keyword_core=40,
        value_span=lambda match: match.span("dq") if match.group("dq") is not None else match.span("sq"),
    ),
    Detector(
        "CLOUD_KEY",
        re.compile(r"\"private_key_id\"[ \t]*:[ \t]*\"([0-9a-f]{40})\""),
        rb"\"private_key_id\"[ \t]*:[ \t]*\"[0-9a-f]{40}\"",
        validate=opaque_token,
        group=1,
        rule="gcp-private-key-id",
        keyword_core=70,
    ),
)

"""Secrets that a wrapping, not a plain `name = value`, puts beside their name: an HTML password
input's `value` attribute, an XML element with attributes (`<password encrypted="false">X`),
a YAML block scalar under a secret's name (`client_secret: >-` then the value indented below),
a shell's ANSI-C string (`DB_PASSWORD=$'X\\n'`) and a Markdown table's cell beside a cell naming
a secret (`| DEPLOY_TOKEN | 6f1c… |`)."""

from __future__ import annotations

import re

from router.privacy import validators
from router.privacy.credentials import attached_password, command_password, password_value
from router.privacy.detector import Detector
from router.privacy.patterns import SECRET_NAMES

# A name ending in a secret word (`DB_PASSWORD`, `client_secret`), maybe numbered.
_NAMED = r"(?:[A-Za-z0-9]+[_.-])*" + SECRET_NAMES + r"[0-9]{0,2}"
_XML_TAGS = (
    r"password|passwd|pwd|pass|secret|client[_-]?secret|api[_-]?key|apikey|token|access[_-]?token|secret[_-]?key"
)


def _cell_value(value: str) -> bool:
    """A cell's value beside a secret's name: a generated value's shape, not another name."""
    return validators.secret_value(value) and re.fullmatch(_NAMED, value, re.IGNORECASE) is None


def _block_value(value: str) -> bool:
    """A block scalar's one line under a secret's name: a password's or a token's shape."""
    return password_value(value) or validators.secret_value(value)


DETECTORS: tuple[Detector, ...] = (
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(
            r"(?i:<input\b(?=[^<>]{0,400}?\btype=[\"']?password\b)[^<>]{0,400}?\bvalue=)([\"'])([^\"'<>\n]{1,200})\1"
        ),
        rb"(?i)type=[\"']?password",
        validate=command_password,
        group=2,
        lead=420,
        reach=420,
        rule="html-password-input",
        keyword_core=24,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(rf"<((?i:{_XML_TAGS}))[ \t][^<>]{{0,200}}>([^<>\n]{{1,200}})</\1>"),
        rb"(?i)<(?:" + _XML_TAGS.encode() + rb")[ \t]",
        validate=attached_password,
        group=2,
        reach=420,
        rule="xml-secret-element",
        keyword_core=24,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(
            r"(?m)(?<![\w.-])(?i:"
            + _NAMED
            + r")[\"']?[ \t]*:[ \t]*[>|][-+]?[0-9]?[ \t]*\r?\n[ \t]+([^\s#]{6,4096})[ \t]*\r?$"
        ),
        # The secret word, the colon and the block's mark: led by words, not by a colon (which
        # hyperscan would follow at every `:` of a text, ~0.5 ms a MiB).
        rb"(?i)(?:pass(?:word|wd|phrase)?|pwd|pw|secret|token|key|credentials?)[0-9]{0,2}[\"']?[ \t]{0,8}:"
        rb"[ \t]{0,8}[>|]",
        validate=_block_value,
        group=1,
        lead=120,
        reach=4160,
        rule="yaml-block-secret",
        keyword_core=40,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(r"(?<![\w-])(?i:" + _NAMED + r")=\$'([^'\\\n]{4,200})"),
        rb"=\$'",
        validate=command_password,
        group=1,
        lead=80,
        reach=210,
        rule="shell-ansi-c-secret",
        keyword_core=3,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # A table's row (a line that opens with its bar), cells spaced or in backticks: not a
        # regex's alternation (`…|s3_secret_access_key|s3_access_key_id|`).
        re.compile(
            r"(?m)^[ \t]*\|(?:[^|\n]*\|)*?(?:[ \t]+`?|`)(?i:" + _NAMED + r")(?:`?[ \t]+|`)\|"
            r"(?:[ \t]+`?|`)([^\s|`]{8,200})(?:`?[ \t]+|`)\|"
        ),
        rb"(?i)(?:token|secret|key|pass(?:word|wd)?|pwd|credentials?)[0-9]{0,2}`?[ \t]*\|",
        validate=_cell_value,
        group=1,
        lead=400,
        reach=220,
        rule="markdown-cell-secret",
        keyword_core=24,
    ),
)

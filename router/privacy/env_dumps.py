"""Secrets in the shapes environment dumps and secret managers print them: a variable named for
what it authenticates (`REDIS_AUTH=…`), a name, a colon and
the value aligned in a column (`heroku config`, `op item get`: `SENTRY_AUTH_TOKEN:   …`), a
name/value table's row (`| DATABASE_PASSWORD | … |`, Doppler's and other CLIs' box-drawn
`│ NAME │ VALUE │`), and a CloudFormation parameter's `Default` that its `NoEcho: true` marks as
a secret. The names are the assignment rules' (patterns.NAME_HEAD); a value must pass their
validator (validators.secret_value).
"""

from __future__ import annotations

import re

from router.privacy import validators
from router.privacy.credentials import command_password
from router.privacy.detector import Detector
from router.privacy.patterns import NAME_HEAD, SECRET_NAMES

_NAME = NAME_HEAD.pattern.removeprefix("(?i)")
# A table's cell border: ASCII's and the box-drawing bars (light and heavy).
_BAR = "[|│┃]"
_BAR_BYTES = rb"(?:\||\xe2\x94[\x82\x83])"
_NO_ECHO = re.compile(r"(?i)[\"']?NoEcho[\"']?[ \t]*:[ \t]*[\"']?true\b")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _no_echo_near(text: str, start: int, _end: int) -> bool:
    """Whether `NoEcho: true` is in the parameter `Default` belongs to (within 300 characters):
    in JSON the same object, in YAML the lines indented as deep as `Default` or deeper around it
    (the next parameter's `Default` is no secret: `InstanceType`'s `t3.medium` after a hidden
    `DBPassword`)."""
    low_bound, high_bound = max(0, start - 300), min(len(text), start + 300)
    brace, closed = text.rfind("{", low_bound, start), text.rfind("}", low_bound, start)
    if brace > closed:  # JSON: the object `Default` is in
        high = text.find("}", start, high_bound)
        return _NO_ECHO.search(text, brace, high if high >= 0 else high_bound) is not None
    line_start = text.rfind("\n", 0, start) + 1
    indent = _indent(text[line_start:start])
    low = line_start
    while low > low_bound:
        previous = text.rfind("\n", 0, low - 1) + 1
        line = text[previous : low - 1]
        if line.strip() and _indent(line) < indent:
            break
        low = previous
    high = text.find("\n", start, high_bound)
    while 0 <= high < high_bound:
        following = text.find("\n", high + 1, high_bound)
        line = text[high + 1 : following if following >= 0 else high_bound]
        if line.strip() and _indent(line) < indent:
            break
        high = following
    return _NO_ECHO.search(text, low, high if high >= 0 else high_bound) is not None


DETECTORS: tuple[Detector, ...] = (
    Detector(
        "SECRET_ASSIGNMENT",
        # An environment variable named for what it authenticates (`REDIS_AUTH=…`, `PROXY_AUTH`):
        # in capitals only (`auth = …` in code is anything), its value a secret's.
        re.compile(
            r"(?<![A-Za-z0-9])[A-Z][A-Z0-9_]{0,40}_AUTH[\"']?[ \t]{0,32}[:=][ \t]{0,40}[\"']?([^\s\"'`,;}{<>\\]{8,512})"
        ),
        rb"[A-Z0-9]_AUTH[\"']?[ \t]{0,32}[:=][ \t]{0,40}[\"']?[^\s\"'`,;}{<>]{8}",
        validate=validators.secret_value,
        group=1,
        lead=50,
        reach=560,
        rule="env-auth",
        keyword_core=110,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # `NAME:` then the value aligned in a column, alone on its line.
        re.compile(r"(?im)^[ \t]{0,8}[\w.-]{0,40}?" + _NAME + r"[\"']?:[ \t]{4,48}([^\s\"']{8,512})[ \t]*\r?$"),
        b"(?i)" + SECRET_NAMES.encode() + rb"[0-9]{0,2}[\"']?:[ \t]{4}",
        validate=validators.secret_value,
        group=1,
        lead=60,
        reach=560,
        rule="aligned-secret",
        keyword_core=100,  # (a name of 40 characters at the most, its sign and spaces)
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # A table's row: a cell naming a secret, the next cell its value (the cells spaced from
        # their bars, as tables print them: a regex's alternation `a_token|b_key|` is none).
        re.compile(rf"(?i){_BAR}[ \t]+[\w.-]{{0,40}}?" + _NAME + rf"[ \t]*{_BAR}[ \t]+([^\s|│┃]{{6,512}})[ \t]*{_BAR}"),
        b"(?i)" + SECRET_NAMES.encode() + rb"[0-9]{0,2}[ \t]*" + _BAR_BYTES + rb"[ \t]*[^\s|]{6}",
        validate=validators.secret_value,
        group=1,
        lead=60,
        reach=560,
        rule="table-row-secret",
        keyword_core=80,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # CloudFormation: a parameter that `NoEcho: true` hides has its secret as `Default`.
        re.compile(
            r"[\"']?Default[\"']?[ \t]*:[ \t]*"
            r"(?:'(?P<sq>[^'\n]{4,200})'|\"(?P<dq>[^\"\n]{4,200})\"|(?P<bare>[^\s'\",}#]{4,200}))"
        ),
        rb"(?i)[\"']?NoEcho[\"']?[ \t]{0,3}:[ \t]{0,3}[\"']?true",
        validate=command_password,  # (whatever NoEcho hides is a secret, a word's letters too)
        check=_no_echo_near,
        follows=True,  # (the `Default` line may come before or after the core)
        group=0,
        lead=300,
        reach=300,
        rule="cloudformation-no-echo",
        value_span=lambda match: next(match.span(g) for g in ("sq", "dq", "bare") if match.group(g) is not None),
    ),
)

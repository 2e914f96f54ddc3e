"""Secrets in dumps of a program's state whose syntax parts the name from the value: PHP's
`var_dump` (`["password"]=>` then `string(10) "X"` on the next line) and a Netscape cookie file
(curl's and wget's `cookies.txt`: seven tab-separated fields, a session or an authentication
cookie's value last)."""

from __future__ import annotations

import re

from router.privacy import validators
from router.privacy.credentials import command_password
from router.privacy.detector import Detector
from router.privacy.patterns import SECRET_WORDS

# A cookie that carries a session or a login (`sessionid`, `connect.sid`, `_gitlab_session`,
# `remember_user_token`, `__Secure-next-auth.session-token`, `PHPSESSID`, `JSESSIONID`).
_SESSION_COOKIE = r"[\w.-]{0,40}?(?i:sess|sid|token|auth|jwt|remember|login)[\w.-]{0,40}"


DETECTORS: tuple[Detector, ...] = (
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(
            r"\[\"[\w.-]{0,40}?(?i:" + SECRET_WORDS + r")[\w.-]{0,20}\"\]=>[ \t]*\r?\n?[ \t]*"
            r"string\(\d{1,5}\)[ \t]*\"([^\"\n]{1,400})\""
        ),
        rb"\"\]=>[ \t]*\r?\n?[ \t]*string\(",
        validate=command_password,
        group=1,
        lead=80,
        reach=440,
        rule="php-var-dump-secret",
        keyword_core=40,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(
            r"(?m)^(?:#HttpOnly_)?[\w.-]{1,253}\t(?:TRUE|FALSE)\t[^\t\n]{1,200}\t(?:TRUE|FALSE)\t\d{1,12}\t"
            + _SESSION_COOKIE
            + r"\t([^\s]{8,4096})[ \t]*\r?$"
        ),
        rb"\t(?:TRUE|FALSE)\t/",  # (the domain's flag, then the path)
        validate=validators.secret_value,
        group=1,
        lead=280,
        reach=4500,
        rule="netscape-session-cookie",
        keyword_core=8,
    ),
)

"""Passwords in databases' own statements and shells that no name-and-value rule reads: the
statement's words say which argument is the password, not a name beside it.

MySQL's `SET PASSWORD FOR 'u'@'h' = 'X'`, Oracle's `IDENTIFIED BY "X"`, DB2's and Informix's
`CONNECT TO db USER u USING X`, SQL Server's
`sp_addlogin 'login', 'X'`, Neo4j's `SET PASSWORD FROM 'old' TO 'new'` (both), MongoDB's
`changeUserPassword("user", "X")`, Redis' `ACL SETUSER name … >X`, and the users under
CouchDB's `[admins]` section (`admin = X`).
"""

from __future__ import annotations

import re

from router.privacy.credentials import ARG, argument_span, command_password, command_rule
from router.privacy.detector import Detector

# A quoted argument: the password (`'X'` or `"X"`).
_QUOTED = r"""(?:"(?P<dq>[^"\n]{1,200})"|'(?P<sq>[^'\n]{1,200})')"""


def _statement(rule: str, pattern: str, core: bytes, span: int) -> Detector:
    return command_rule(rule, pattern, core, span, reach=230)


def _in_admins(text: str, start: int, _end: int) -> bool:
    """A `name = value` line belongs to CouchDB's `[admins]` section: the last section header
    before it is `[admins]`."""
    header = text.rfind("\n[", 0, start)
    if header < 0 and text.startswith("["):
        header = -1
    elif header < 0:
        return False
    return text.startswith("[admins]", header + 1)


DETECTORS: tuple[Detector, ...] = (
    _statement(
        "sql-set-password",
        r"(?i:\bset[ \t]+password(?:[ \t]+for[ \t]+[^=\n]{1,120}?)?[ \t]*=[ \t]*(?:password[ \t]*\([ \t]*)?)" + _QUOTED,
        rb"(?i)set[ \t]+password",
        140,
    ),
    _statement(
        "sql-identified-by-quoted",
        # Double-quoted (Oracle); single-quoted and bare are credentials.py's.
        r"(?i:\bidentified[ \t]+(?:with[ \t]+\w{1,40}[ \t]+)?by)[ \t]+\"(?P<dq>[^\"\n]{1,200})\"",
        rb"(?i)identified[ \t]+(?:with[ \t]+\w{1,40}[ \t]+)?by[ \t]+\"",
        70,
    ),
    _statement(
        # DB2's CLP and embedded SQL, Informix: `CONNECT TO db USER u USING X`.
        "sql-connect-using",
        r"(?i:\bconnect[ \t]+to[ \t]+[^\s;]{1,100}[ \t]+user[ \t]+[^\s;]{1,100}[ \t]+using)[ \t]+" + ARG,
        rb"(?i)connect[ \t]+to[ \t]",
        20,
    ),
    _statement(
        "sql-sp-addlogin",
        r"(?i:\bsp_addlogin)[ \t]+(?:@loginame[ \t]*=[ \t]*)?N?'[^'\n]{1,128}'[ \t]*,[ \t]*(?:@passwd[ \t]*=[ \t]*)?N?"
        + _QUOTED,
        rb"(?i)sp_addlogin[ \t]",
        20,
    ),
    _statement(
        "neo4j-password-from",
        r"(?i:\bset[ \t]+password[ \t]+from)[ \t]+" + _QUOTED,
        rb"(?i)set[ \t]+password[ \t]+from[ \t]",
        30,
    ),
    _statement(
        "neo4j-password-to",
        r"(?i:\bset[ \t]+password[ \t]+from[ \t]+(?:'[^'\n]{1,200}'|\"[^\"\n]{1,200}\")[ \t]+to)[ \t]+" + _QUOTED,
        rb"(?i)set[ \t]+password[ \t]+from[ \t]",
        30,
    ),
    _statement(
        "mongo-change-password",
        r"\bchangeUserPassword\([ \t]*(?:\"[^\"\n]{1,128}\"|'[^'\n]{1,128}')[ \t]*,[ \t]*" + _QUOTED,
        rb"changeUserPassword\(",
        20,
    ),
    _statement(
        "redis-acl-password",
        # `ACL SETUSER name on >password ~keys +@cmds`: `>` adds a password.
        r"(?i:\bacl[ \t]+setuser)[ \t]+[^\s]{1,64}(?:[ \t]+[^\s>]{1,64}){0,8}?[ \t]+>(?P<bare>[^\s]{1,200})",
        rb"(?i)acl[ \t]+setuser[ \t]",
        20,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(r"(?m)^[ \t]*[\w.@-]{1,64}[ \t]*=[ \t]*" + ARG + r"[ \t]*\r?$"),
        rb"\[admins\]",
        validate=command_password,
        check=_in_admins,
        group=0,
        reach=2048,
        follows=True,
        rule="couchdb-admin-password",
        keyword_core=8,
        value_span=argument_span,
    ),
)

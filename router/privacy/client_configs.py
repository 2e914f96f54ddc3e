"""Passwords in mail, chat and file-sync clients' own formats that no name-and-value rule reads:
isync's `Pass X` in an `IMAPAccount` block, an IRC `NickServ IDENTIFY`, davfs2's secrets file
(`URL user password` lines). The value is taken as any command-line password is
(credentials.command_password: not a reference, a stand-in or a flag).
"""

from __future__ import annotations

import re

from router.privacy.credentials import ARG, argument_span, command_password
from router.privacy.detector import Detector

_IMAP_BLOCK = re.compile(r"\bIMAP(?:Account|Store)\b")


def _in_imap_block(text: str, start: int, _end: int) -> bool:
    return _IMAP_BLOCK.search(text, max(0, start - 600), start) is not None


DETECTORS: tuple[Detector, ...] = (
    Detector(
        "SECRET_ASSIGNMENT",
        # isync / mbsync: `Pass X` in an account's block (`PassCmd` runs a command: no value).
        re.compile(r"(?m)^[ \t]*Pass[ \t]+" + ARG + r"[ \t]*\r?$"),
        rb"\n[ \t]{0,8}Pass[ \t]+[^\s]{4}",
        validate=command_password,
        check=_in_imap_block,
        group=0,
        lead=10,
        reach=210,
        rule="mbsync-pass",
        keyword_core=20,
        value_span=argument_span,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # IRC: `/msg NickServ IDENTIFY [account] X`, `/ns identify X`.
        re.compile(r"(?i)(?:\bnickserv|/ns)[ \t]+identify[ \t]+(?:[^\s]{1,40}[ \t]+(?=[^\s]))?" + ARG),
        rb"(?i)(?:nickserv|/ns)[ \t]+identify[ \t]",
        validate=command_password,
        group=0,
        reach=260,
        rule="nickserv-identify",
        keyword_core=30,
        value_span=argument_span,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # davfs2's secrets file: `URL-or-mount-point user password` lines after its name.
        re.compile(r"(?m)^(?:https?://|/)[^\s]{1,300}[ \t]+[^\s]{1,80}[ \t]+" + ARG + r"[ \t]*\r?$"),
        rb"davfs2?",
        validate=command_password,
        group=0,
        follows=True,
        reach=4000,
        rule="davfs-secret",
        keyword_core=6,
        value_span=argument_span,
    ),
)

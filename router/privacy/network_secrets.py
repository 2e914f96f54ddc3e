"""Credentials in network devices' configurations that no name-and-value rule reads: their
keywords are written with a space, not `=` or `:`, and a type digit may stand between the word
and the value (`key 7 0822…`, `password 0 …`, `md5 …`).

Cisco IOS and its kin: a RADIUS or TACACS+ server's `key` on a line of its own in a `radius
server` block (after `radius-server host` it is credentials.py's), a routing neighbour's
`password`, OSPF's `message-digest-key N md5` and `authentication-key`, a key chain's
`key-string`. Juniper's
`$9$` secrets (a reversible encoding, as good as plain), FortiGate's `set password ENC …` (the
same), and OpenVPN's static key block (a shared secret, PEM-like, that names no PRIVATE KEY).
"""

from __future__ import annotations

import re

from router.privacy.credentials import command_password
from router.privacy.detector import Detector

# A type digit before the value: 0 (clear), 6 or 7 (reversible encodings); 5, 8 and 9 are
# hashes (`enable secret 5 $1$…`, read as crypt hashes elsewhere).
_TYPE = r"(?:[067][ \t]+)?"
# A value: what the device reads up to the line's end or the next space.
_VALUE = r"([^\s]{4,128})"


def _in_server_block(text: str, start: int, _end: int) -> bool:
    """A bare `key` line belongs to a RADIUS or TACACS+ server's block above it."""
    before = text[max(0, start - 400) : start].lower()
    return "radius" in before or "tacacs" in before


DETECTORS: tuple[Detector, ...] = (
    Detector(
        "SECRET_ASSIGNMENT",
        # ` key <value>` on a line of its own, indented under `radius server X` or `tacacs server X`.
        re.compile(rf"(?m)^[ \t]+key[ \t]+{_TYPE}{_VALUE}[ \t]*\r?$"),
        rb"\n[ \t]{1,8}key[ \t]+(?:[067][ \t]+)?[^\s]{4}",
        validate=command_password,
        check=_in_server_block,
        group=1,
        reach=140,
        rule="network-server-key",
        keyword_core=20,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # A routing neighbour's password (`neighbor 192.0.2.1 password X`), OSPF's keys, a key
        # chain's `key-string X`.
        re.compile(
            rf"(?m)(?:\bneighbor[ \t]+[^\s]{{1,64}}[ \t]+password|\bmessage-digest-key[ \t]+\d{{1,3}}[ \t]+md5"
            rf"|\bauthentication-key|\bkey-string)[ \t]+{_TYPE}{_VALUE}[ \t]*\r?$"
        ),
        rb"(?:neighbor[ \t]+[^\s]{1,64}[ \t]+password|message-digest-key[ \t]+\d{1,3}[ \t]+md5|authentication-key"
        rb"|key-string)[ \t]",
        validate=command_password,
        group=1,
        reach=140,
        lead=0,
        rule="network-routing-key",
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # Juniper's `$9$` secret in quotes (decoded by anyone who has the config).
        re.compile(r"\"(\$9\$[A-Za-z0-9./\-]{8,256})\""),
        rb"\"\$9\$[A-Za-z0-9./\-]{8}",
        group=1,
        reach=260,
        rule="junos-type9-secret",
        keyword_core=20,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # FortiGate's stored secrets (`set password ENC …`, `set psksecret ENC …`): a reversible
        # encoding with a key every FortiOS holds.
        re.compile(r"\bset[ \t]+(?:password|passwd|psksecret|secret|key)[ \t]+ENC[ \t]+([A-Za-z0-9+/=]{16,512})"),
        rb"set[ \t]+(?:password|passwd|psksecret|secret|key)[ \t]+ENC[ \t]+[A-Za-z0-9+/=]{16}",
        group=1,
        reach=520,
        rule="fortigate-enc-secret",
        keyword_core=60,
    ),
    Detector(
        "PRIVATE_KEY",
        # OpenVPN's static key: a shared secret between BEGIN and END lines of its own.
        re.compile(
            r"-----BEGIN OpenVPN Static key V1-----\r?\n([0-9a-f\r\n]{64,1200}?)\r?\n"
            r"-----END OpenVPN Static key V1-----"
        ),
        rb"-----BEGIN OpenVPN Static key V1-----",
        group=1,
        reach=1300,
        rule="openvpn-static-key",
        keyword_core=40,
    ),
)

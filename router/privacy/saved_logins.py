"""Logins as password managers, keychains and saved-connection files keep them, where the
format, not a `name = value` line, says which value is the password.

A key element naming a password and the value element after it (KeePass's `<Key>Password</Key>`
then `<Value ProtectInMemory="True">`, a plist's `<key>Password</key>` then `<string>`); Redis
Sentinel's `auth-pass`; a NATS NKEY seed (`SUA…`, 58 characters of base32). What password
managers' commands print is printed_secrets.py's."""

from __future__ import annotations

import re

from router.privacy.credentials import ARG, command_password, command_rule
from router.privacy.detector import Detector

_KEYED_NAMES = r"(?:password|passwd|passphrase|pass|pwd|secret|token|api[ _-]?key|private[ _-]?key)"
DETECTORS: tuple[Detector, ...] = (
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(
            rf"<([Kk]ey)>[ \t]*(?i:{_KEYED_NAMES})[ \t]*</\1>[ \t]*\r?\n?[ \t]*"
            r"<(Value|string|value)(?:[ \t][^<>\n]{0,120})?>([^<>\n]{1,200})</\2>"
        ),
        rb"(?i)<key>[ \t]*(?:password|passwd|passphrase|pass|pwd|secret|token|api[ _-]?key|private[ _-]?key)"
        rb"[ \t]*</key>",
        validate=command_password,
        group=3,
        reach=330,
        rule="keyed-password",
        keyword_core=40,
    ),
    command_rule(
        "sentinel-auth-pass",
        r"(?im)^[ \t]*sentinel[ \t]+auth-pass[ \t]+[^\s]{1,64}[ \t]+" + ARG,
        rb"(?i)sentinel[ \t]+auth-pass[ \t]",
        40,
    ),
    Detector(
        "PRIVATE_KEY",
        # An NKEY seed: `S`, the key's kind (user, account, operator, server, cluster, curve),
        # `A` for ed25519, then base32: 58 characters in all.
        re.compile(r"(?<![A-Za-z0-9])(S[UAONCX]A[A-Z2-7]{55})(?![A-Za-z0-9])"),
        rb"S[UAONCX]A[A-Z2-7]{55}",
        group=1,
        rule="nkey-seed",
        keyword_core=58,
    ),
)

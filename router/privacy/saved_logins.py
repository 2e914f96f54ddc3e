"""Logins as password managers, keychains and saved-connection files keep them, where the
format, not a `name = value` line, says which value is the password.

A key element naming a password and the value element after it (KeePass's `<Key>Password</Key>`
then `<Value ProtectInMemory="True">`, a plist's `<key>Password</key>` then `<string>`); the line a
secret-printing command prints (`pass show`, `gopass show`, `security find-generic-password -w`,
`secret-tool lookup`, `op read`, `bw get password`); Redis Sentinel's `auth-pass`; a NATS NKEY
seed (`SUA…`, 58 characters of base32)."""

from __future__ import annotations

import re

from router.privacy.credentials import ARG, command_password, command_rule
from router.privacy.detector import Detector

_KEYED_NAMES = r"(?:password|passwd|passphrase|pass|pwd|secret|token|api[ _-]?key|private[ _-]?key)"
# The commands whose output is the secret itself, after a prompt (`$ `, `% `, `root@box:~# `; a
# `#` alone opens a comment): `pass` and `gopass` with one entry and nothing after it.
_PROMPT = r"(?:[\w.@:~/-]+(?:[ \t][\w.@:~/-]+){0,2}[ \t]?[$#%]|[$%])"
_PRINTS_SECRET = (
    r"(?:(?:go)?pass(?:[ \t]+show)?[ \t]+[\w.@/-]+[ \t]*\r?\n"
    r"|security[ \t]+find-(?:generic|internet)-password[^\n]*?[ \t]-w\b[^\n]*\r?\n"
    r"|(?:secret-tool[ \t]+lookup|op[ \t]+read|bw[ \t]+get[ \t]+password|keyring[ \t]+get)\b[^\n]*\r?\n"
    r"|lpass[ \t]+show[^\n]*?--password\b[^\n]*\r?\n)"
)


def _printed(value: str) -> bool:
    """A line a secret-printing command printed: one token that is a password's or a key's, not
    a prompt, a message or a path."""
    return command_password(value) and not value.startswith(("$", "/", "~", "usage", "Error", "error"))


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
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(rf"(?m)^[ \t]*{_PROMPT}[ \t]+{_PRINTS_SECRET}[ \t]*([^\s]{{4,200}})[ \t]*\r?$"),
        rb"[$#%][ \t]+(?:pass|gopass|security[ \t]+find-|secret-tool[ \t]+lookup|op[ \t]+read|bw[ \t]+get"
        rb"|keyring[ \t]+get|lpass[ \t]+show)",
        validate=_printed,
        group=1,
        reach=420,
        rule="printed-secret",
        lead=80,
        keyword_core=32,
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

"""Passwords and tokens on administrators' command lines and in directories' files that a
tool's own syntax places: Windows' `net user NAME PASSWORD /add`, `vault login TOKEN`, `etcdctl
--user NAME:PASSWORD`, Nomad's and Consul's `-token X`, the registry tools' `--creds
NAME:PASSWORD` (skopeo's `--src-creds` and `--dest-creds`, podman's and buildah's `--creds`),
`wpa_passphrase SSID X`, macOS's `security add-generic-password … -w X`, `netsh wlan show
profile key=clear`'s `Key Content`, and LDIF's base64 passwords (`userPassword:: …`, Active
Directory's `unicodePwd:: …`)."""

from __future__ import annotations

import re

from router.privacy.credentials import ARG, attached_password, command_password, command_rule
from router.privacy.detector import Detector


def _key_content(value: str) -> bool:
    """netsh's `Key Content`: the passphrase, not the word it shows for an absent key."""
    return value not in ("Absent", "Present", "1") and command_password(value)


DETECTORS: tuple[Detector, ...] = (
    command_rule(
        # (`net user NAME *` asks at a prompt; `net user NAME` alone shows the account; `/x` is a switch.)
        "net-user-password",
        r"(?i:\bnet[ \t]+user)[ \t]+(?:\"[^\"\n]{1,64}\"|[^\s/\"]{1,64})[ \t]+(?!/)" + ARG + r"(?=[ \t]+/|[ \t]*$)",
        rb"(?i)net[ \t]+user[ \t]",
        12,
    ),
    command_rule(
        "vault-login-token",
        r"\bvault[ \t]+login(?:[ \t]+-[\w-]+(?:=[^\s]+)?)*[ \t]+(?![\w.-]+=)" + ARG + r"(?=[ \t]*$|[ \t]*[\r\n;&|])",
        rb"vault[ \t]+login[ \t]",
        14,
    ),
    command_rule(
        "etcdctl-user",
        r"\betcdctl\b[^\n|;&]{0,300}?[ \t]--user[ \t=]+[^\s:\"']{1,64}:" + ARG,
        rb"etcdctl",
        8,
        attached_password,
        reach=420,
    ),
    command_rule(
        "hashicorp-token-flag",
        r"\b(?:nomad|consul)\b[^\n|;&]{0,300}?[ \t]--?token[ \t=]+" + ARG,
        rb"(?:nomad|consul)[ \t]",
        8,
        reach=420,
    ),
    command_rule(
        "registry-creds",
        r"(?<![\w-])--(?:src-|dest-)?creds[ \t=]+[\"']?[^\s:\"']{1,64}:" + ARG,
        rb"--(?:src-|dest-)?creds[ \t=]",
        14,
        attached_password,
    ),
    command_rule(
        "wpa-passphrase",
        r"\bwpa_passphrase[ \t]+(?:\"[^\"\n]{1,64}\"|'[^'\n]{1,64}'|[^\s|;&]{1,64})[ \t]+" + ARG,
        rb"wpa_passphrase[ \t]",
        16,
    ),
    command_rule(
        "keychain-add-password",
        r"\bsecurity[ \t]+add-(?:generic|internet)-password\b[^\n|;&]{0,300}?[ \t]-w[ \t]+" + ARG,
        rb"security[ \t]+add-(?:generic|internet)-password",
        40,
        reach=420,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(r"(?im)^[ \t]*Key Content[ \t]*:[ \t]*([^\r\n]{1,63}?)[ \t]*\r?$"),
        rb"(?i)Key Content[ \t]*:",
        validate=_key_content,
        group=1,
        reach=90,
        rule="netsh-key-content",
        keyword_core=20,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(
            r"(?im)^(?:userPassword|unicodePwd|olcRootPW|nsslapd-rootpw|sambaNTPassword|sambaLMPassword)::[ \t]*"
            r"([A-Za-z0-9+/]{4,}={0,2})[ \t]*\r?$"
        ),
        rb"(?i)(?:userPassword|unicodePwd|olcRootPW|nsslapd-rootpw|sambaNTPassword|sambaLMPassword)::",
        validate=command_password,
        group=1,
        reach=600,
        rule="ldif-base64-password",
        keyword_core=20,
    ),
)

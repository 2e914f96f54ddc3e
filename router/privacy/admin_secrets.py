"""Passwords and tokens on administrators' command lines that a tool's own syntax places:
Windows' `net user NAME PASSWORD /add`, `vault login TOKEN`, `etcdctl --user NAME:PASSWORD`,
Nomad's and Consul's `-token X`, and the registry tools' `--creds NAME:PASSWORD` (skopeo's
`--src-creds` and `--dest-creds`, podman's and buildah's `--creds`)."""

from __future__ import annotations

from router.privacy.credentials import ARG, attached_password, command_rule
from router.privacy.detector import Detector

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
)

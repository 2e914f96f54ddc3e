"""Secrets a command prints, read from a transcript: the command after its prompt, the value
alone on a line below it, no name beside it.

Password managers and keychains (`pass show entry`, `security find-generic-password … -w`,
`secret-tool lookup`, `op read`, `bw get password`), cloud CLIs that print a token (`aws ecr
get-login-password`, `gcloud auth print-access-token`, `heroku auth:token`, `gh auth token`,
`az account get-access-token … -o tsv`), secret stores read raw (`aws secretsmanager
get-secret-value … --output text`, `aws ssm get-parameter --with-decryption … --output text`,
`gcloud secrets versions access`, `vault kv get -field=…`, `terraform output -raw`, `pulumi config
get`, `kubectl get secret … | base64 -d`, `kubectl create token`, `jq -r` of a secret's field), a
secret's variable echoed (`echo $DB_PASSWORD`, `printenv GITHUB_TOKEN`, `docker exec … printenv
…`), and secrets made on the spot (`openssl rand`, `python -c` with `secrets`, `pwgen`, bytes of
`/dev/urandom` encoded, Django's `get_random_secret_key`, `rails secret`, `wg genkey`). The
line below may follow up to two lines of messages (`› Warning: token will expire`)."""

from __future__ import annotations

import re

from router.privacy.credentials import command_password
from router.privacy.detector import Detector
from router.privacy.patterns import SECRET_NAMES

# A shell's prompt: `$`, `%`, `user@host:~$`, `root@box:~#` (a `#` alone opens a comment), a
# virtualenv's `(venv) $`, starship's `❯`, zsh's `➜`, PowerShell's `PS C:\work>`.
_PROMPT = (
    r"(?:\([\w.-]{1,40}\)[ \t]+)?"
    r"(?:[\w.@:~/-]+(?:[ \t][\w.@:~/-]+){0,2}[ \t]?[$#%]|[$%❯➜]|PS[ \t][^\n>]{1,80}>)"
)
_NAMED = r"(?:[A-Za-z0-9]+_)*" + SECRET_NAMES + r"[0-9]{0,2}"
# The commands whose output is a secret (the rest of their line included, with no pipe to another
# command: `aws ecr get-login-password | docker login …` prints docker's answer).
_COMMANDS = (
    r"(?:(?:go)?pass(?:[ \t]+show)?[ \t]+[\w.@/-]+[ \t]*"
    r"|security[ \t]+find-(?:generic|internet)-password[^\n|]*?[ \t]-w\b[^\n|]*"
    r"|(?:secret-tool[ \t]+lookup|op[ \t]+read|bw[ \t]+get[ \t]+password|keyring[ \t]+get)\b[^\n|]*"
    r"|lpass[ \t]+show[^\n|]*?--password\b[^\n|]*"
    r"|aws[ \t]+(?:ecr|ecr-public)[ \t]+get-login-password\b[^\n|]*"
    r"|aws[ \t]+codeartifact[ \t]+get-authorization-token\b[^\n|]*?--output[ \t=]+text\b[^\n|]*"
    r"|aws[ \t]+secretsmanager[ \t]+get-secret-value\b[^\n|]*?--output[ \t=]+text\b[^\n|]*"
    r"|aws[ \t]+ssm[ \t]+get-parameters?\b[^\n|]*?--with-decryption\b[^\n|]*?--output[ \t=]+text\b[^\n|]*"
    r"|gcloud[ \t]+(?:auth[ \t]+print-(?:access|identity)-token|secrets[ \t]+versions[ \t]+access)\b[^\n|]*"
    r"|(?:heroku[ \t]+auth:token|gh[ \t]+auth[ \t]+token|vault[ \t]+print[ \t]+token|fly(?:ctl)?[ \t]+auth[ \t]+token"
    r"|firebase[ \t]+login:ci)\b[^\n|]*"
    r"|az[ \t]+account[ \t]+get-access-token\b[^\n|]*?(?:-o|--output)[ \t=]+tsv\b[^\n|]*"
    r"|vault[ \t]+(?:kv[ \t]+get|read)\b[^\n|]*?-field[ \t=][^\n|]*"
    r"|terraform[ \t]+output[ \t]+-raw\b[^\n|]*"
    r"|pulumi[ \t]+config[ \t]+get\b[^\n|]*"
    r"|kubectl[ \t]+get[ \t]+secrets?\b[^\n|]*?\|[ \t]*base64[ \t]+(?:-d|--decode)\b[^\n|]*"
    r"|kubectl[ \t]+create[ \t]+token\b[^\n|]*"
    rf"|jq[ \t]+-r\b[^\n|]*?(?i:{SECRET_NAMES})[^\n|]*"
    rf"|(?:echo[ \t]+\"?\$\{{?|(?:docker[ \t]+exec[ \t][^\n|;&]*?)?printenv[ \t]+)(?i:{_NAMED})\b[^\n|]*"
    r"|openssl[ \t]+rand[ \t]+-(?:hex|base64)\b[^\n|]*"
    r"|python[0-9.]*[ \t]+-c[ \t][^\n|]*?(?:secrets\.|token_urlsafe|token_hex|get_random_secret_key|urandom)[^\n|]*"
    r"|pwgen\b[^\n|]*"
    r"|head[ \t]+-c[ \t]*[0-9]+[ \t]+/dev/u?random[ \t]*\|[ \t]*(?:base64|xxd|od|basenc)\b[^\n|]*"
    r"|(?:rails|rake)[ \t]+secret\b[^\n|]*|wg[ \t]+genkey\b[^\n|]*)"
)
# Up to two lines of messages (each holding a space) between the command and its value.
_BETWEEN = r"\r?\n(?:[^\n]*[ \t][^\n]*\r?\n){0,2}?"


def _printed(value: str) -> bool:
    """A line a secret-printing command printed: one token that is a password's or a key's, not
    a prompt, a message, a path or a placeholder."""
    if value.startswith(("$", "/", "~", "usage", "Error", "error", "[")) or value.endswith(":"):
        return False
    if value.endswith(("$", "#", "%", ">")) and ("@" in value or ":" in value):
        return False  # the next prompt (`ubuntu@host:~$`), not a password ending in `#`
    return command_password(value)


DETECTORS: tuple[Detector, ...] = (
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(rf"(?m)^[ \t]*{_PROMPT}[ \t]+{_COMMANDS}{_BETWEEN}[ \t]*([^\s]{{4,4096}})[ \t]*\r?$"),
        # (A prompt's last character: `$`, `%`, a `#` after a host's path, a `>` after PowerShell's.)
        rb"(?:[$%]|[\w~\]]#|\w>|\xe2\x9d\xaf|\xe2\x9e\x9c)[ \t]+(?:pass|gopass|security[ \t]+find-|secret-tool"
        rb"|op[ \t]+read|bw[ \t]+get|keyring[ \t]+get|lpass[ \t]+show|aws[ \t]|gcloud[ \t]|heroku[ \t]|gh[ \t]+auth"
        rb"|vault[ \t]|az[ \t]+account|fly[ \t]+auth|flyctl[ \t]+auth|firebase[ \t]+login"
        rb"|terraform[ \t]+output|pulumi[ \t]+config|kubectl[ \t]|jq[ \t]|echo[ \t]|printenv|docker[ \t]+exec"
        rb"|openssl[ \t]+rand|python|pwgen|head[ \t]+-c|rails[ \t]|rake[ \t]|wg[ \t]+genkey)",
        validate=_printed,
        group=1,
        reach=4600,
        lead=120,
        rule="printed-secret",
        keyword_core=40,
    ),
)

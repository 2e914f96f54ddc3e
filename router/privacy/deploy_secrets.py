"""Secrets given to CI/CD systems and deployment platforms on their command lines, where no flag
or name says `password` beside the value: a variable named for a secret set by its name and value
as two arguments (`netlify env:set STRIPE_SECRET X`), a value piped into a command that stores a
secret (`echo -n X | vercel env add DB_PASSWORD`), Drone's `secret add … --data X`, Azure
Pipelines' `variable create --secret true --value X`, Concourse's `fly … login -p X`.
"""

from __future__ import annotations

import re

from router.privacy.credentials import ARG, command_password, command_rule
from router.privacy.detector import Detector

# A variable's name that says it holds a secret (`STRIPE_SECRET`, `DB_PASSWORD`, `SERVICE_KEY`).
_SECRET_NAME = (
    r"[A-Za-z0-9_-]{0,40}(?i:pass(?:word|wd)?|secret|token|key|private[_-]?key|credential|pwd|auth)[A-Za-z0-9_-]{0,40}"
)


def _secret_argument(value: str) -> bool:
    """A command's secret argument, not a usage line's metavariable (`config set KEY VALUE`,
    `--data <secret>`: capitals alone name what goes there)."""
    return command_password(value) and not re.fullmatch(r"[A-Z][A-Z_]*", value)


def _command(rule: str, pattern: str, core: bytes, span: int, lead: int = 0) -> Detector:
    return command_rule(rule, pattern, core, span, _secret_argument, lead=lead)


DETECTORS: tuple[Detector, ...] = (
    # `netlify env:set NAME VALUE`, `gh variable set NAME VALUE`, `dokku config:set`-like
    # commands written with a space: the name says it is a secret.
    _command(
        "platform-env-set",
        rf"(?i:\b(?:env:set|env[ \t]+set|secrets?[ \t]+set|config:set|config[ \t]+set|variables?[ \t]+set))"
        rf"[ \t]+(?:--?[\w-]+[ \t]+)?{_SECRET_NAME}[ \t]+(?!--?[A-Za-z])" + ARG,
        rb"(?i)(?:env:set|env[ \t]+set|secrets?[ \t]+set|config:set|config[ \t]+set|variables?[ \t]+set)[ \t]",
        30,
    ),
    # A value piped into a command that stores it as a secret, or reads a password from its input
    # (`echo X | kinit user@REALM`, `echo X | keyring set smtp ana`, `passwd --stdin`).
    _command(
        "piped-secret",
        r"\b(?:echo(?:[ \t]+-[neE]{1,2})?|printf(?:[ \t]+['\"]%s['\"])?)[ \t]+" + ARG + r"[ \t]*\|[ \t]*(?:sudo[ \t]+)?"
        r"(?=(?:vercel[ \t]+env[ \t]+add|gh[ \t]+secret[ \t]+set|docker[ \t]+secret[ \t]+create|wrangler[ \t]+secret"
        r"[ \t]+put|npx[ \t]+wrangler[ \t]+secret[ \t]+put|firebase[ \t]+functions:secrets:set|supabase[ \t]+secrets"
        r"[ \t]+set|podman[ \t]+secret[ \t]+create|kinit|keyring[ \t]+set|passwd[ \t]+--stdin)\b)",
        rb"\|[ \t]*(?:sudo[ \t]+)?(?:vercel[ \t]+env[ \t]+add|gh[ \t]+secret[ \t]+set|docker[ \t]+secret[ \t]+create"
        rb"|wrangler[ \t]+secret|npx[ \t]+wrangler|firebase[ \t]+functions:secrets|supabase[ \t]+secrets"
        rb"|podman[ \t]+secret|kinit|keyring[ \t]+set|passwd[ \t]+--stdin)",
        60,
        lead=240,  # the value is echoed before the pipe
    ),
    # A secret named by `--name` and given by `--value` (`eas secret:create --name SENTRY_AUTH_TOKEN
    # --value X`, `az keyvault secret set --name db-password --value X`).
    _command(
        "named-secret-value",
        rf"--name[ \t=]+['\"]?{_SECRET_NAME}['\"]?[ \t][^\n|;&]{{0,160}}?--value[ \t=]+" + ARG,
        rb"--name[ \t=]",
        200,
    ),
    _command(
        "drone-secret-data",
        r"\bdrone[ \t]+(?:orgsecret|secret)[ \t]+(?:add|update)\b[^\n|;&]{0,200}?--data[ \t=]+" + ARG,
        rb"drone[ \t]+(?:orgsecret|secret)[ \t]+(?:add|update)",
        40,
    ),
    _command(
        "azure-pipelines-secret",
        r"\baz[ \t]+pipelines[ \t]+variable(?:-group[ \t]+variable)?[ \t]+(?:create|update)\b"
        r"(?=[^\n]{0,300}--secret[ \t]+true)[^\n|;&]{0,200}?--value[ \t=]+" + ARG,
        rb"az[ \t]+pipelines[ \t]+variable",
        40,
    ),
    _command(
        "concourse-fly-login",
        r"\bfly[ \t]+(?:-t|--target)[ \t]+[^\s]{1,64}[ \t]+(?:login|l)\b[^\n|;&]{0,200}?(?:-p|--password)[ \t=]+" + ARG,
        rb"fly[ \t]+(?:-t|--target)[ \t]",
        100,
    ),
)

"""Secrets a command prints, written after the detectors and scored blind once (a twenty-sixth
set beside `later_forms.py`'s nine and the later ones).

An agent's transcript holds the command and what it printed: the value alone on the line below,
no name beside it. Cloud CLIs that print a token (`aws ecr get-login-password`, `heroku
auth:token`, `az account get-access-token --query accessToken -o tsv`), secret stores read raw
(`aws secretsmanager get-secret-value … --output text`, `vault kv get -field=password`,
`terraform output -raw`, `pulumi config get`, `kubectl get secret … | base64 -d`, `jq -r
.token`), a variable echoed (`echo $DB_PASSWORD`, `printenv GITHUB_TOKEN`), and secrets made on
the spot (`openssl rand -hex 32`, `python -c "…token_urlsafe…"`, `pwgen`, `head -c 32
/dev/urandom | base64`). Values come from `later_forms.py`'s generator (its `R`, reseeded each
round by its `score`).

Scored blind, before any rule was written for them (3 rounds): 6 of 57 values (0.105): a value
alone on its line is found only by its own shape (a prefixed token). Since (printed_secrets.py:
the command after a prompt, then its value alone on a line, up to two lines of messages
between): 57 of 57, 190 of 190 over 10 rounds.

    python -m benchmarks.privacy.later_printed [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import base64
from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, R, an, hexs, pw, registrar, set_main

FORMS: list[tuple[str, Callable[[], Form]]] = []


form = registrar("printed", FORMS)


def prompt() -> str:
    return R.choice(["$ ", "ubuntu@ip-10-0-1-5:~$ ", "❯ ", "PS C:\\work> ", "(venv) $ "])


def b64(n: int) -> str:
    return base64.b64encode(bytes(R.getrandbits(8) for _ in range(n))).decode()


@form
def ecr_login_password() -> Form:
    token = "eyJwYXlsb2FkIjoi" + an(180)
    return f"{prompt()}aws ecr get-login-password --region eu-west-1\n{token}\n", [token]


@form
def heroku_token() -> Form:
    token = "-".join(hexs(n) for n in (8, 4, 4, 4, 12))
    return f"{prompt()}heroku auth:token\n ›   Warning: token will expire 04/01/2027\n{token}\n", [token]


@form
def az_access_token_tsv() -> Form:
    token = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9." + an(60) + "." + an(43)
    return f"{prompt()}az account get-access-token --query accessToken -o tsv\n{token}\n", [token]


@form
def secretsmanager_text() -> Form:
    p = pw()
    return (
        f"{prompt()}aws secretsmanager get-secret-value --secret-id prod/db --query SecretString --output text\n{p}\n",
        [p],
    )


@form
def vault_field() -> Form:
    p = pw()
    return f"{prompt()}vault kv get -field=password secret/prod/db\n{p}\n", [p]


@form
def terraform_output_raw() -> Form:
    p = pw()
    return f"{prompt()}terraform output -raw db_password\n{p}\n", [p]


@form
def pulumi_config_get() -> Form:
    p = pw()
    return f"{prompt()}pulumi config get dbPassword\n{p}\n", [p]


@form
def kubectl_secret_decoded() -> Form:
    p = pw()
    return (
        f"{prompt()}kubectl get secret db-creds -o jsonpath='{{.data.password}}' | base64 -d\n{p}\n",
        [p],
    )


@form
def jq_token() -> Form:
    t = an(40)
    return f"{prompt()}jq -r .access_token ~/.config/app/credentials.json\n{t}\n", [t]


@form
def echo_variable() -> Form:
    p = pw()
    return f"{prompt()}echo $DB_PASSWORD\n{p}\n", [p]


@form
def printenv_token() -> Form:
    t = "ghp_" + an(36)
    u = an(32)
    return f"{prompt()}printenv GITHUB_TOKEN\n{t}\n{prompt()}printenv SENTRY_AUTH_TOKEN\n{u}\n", [t, u]


@form
def openssl_rand() -> Form:
    k = hexs(64)
    return f"{prompt()}openssl rand -hex 32\n{k}\n", [k]


@form
def openssl_rand_base64() -> Form:
    k = b64(32)
    return f"{prompt()}openssl rand -base64 32\n{k}\n", [k]


@form
def python_token_urlsafe() -> Form:
    t = an(43)
    return f"{prompt()}python3 -c 'import secrets; print(secrets.token_urlsafe(32))'\n{t}\n", [t]


@form
def pwgen() -> Form:
    p = an(16)
    return f"{prompt()}pwgen -s 16 1\n{p}\n", [p]


@form
def urandom_base64() -> Form:
    k = b64(32)
    return f"{prompt()}head -c 32 /dev/urandom | base64\n{k}\n", [k]


@form
def django_secret() -> Form:
    k = "".join(R.choice("abcdefghijklmnopqrstuvwxyz0123456789!@#$%^&*(-_=+)") for _ in range(50))
    return (
        f"{prompt()}python -c 'from django.core.management.utils import get_random_secret_key; "
        f"print(get_random_secret_key())'\n{k}\n",
        [k],
    )


@form
def docker_exec_env() -> Form:
    p = pw()
    return f"{prompt()}docker exec db printenv POSTGRES_PASSWORD\n{p}\n", [p]


def main(argv: list[str] | None = None) -> None:
    set_main("printed", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()

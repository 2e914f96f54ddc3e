"""Secrets in environment and process dumps, the tool output an agent gets when it looks at how
something runs, written after the detectors and scored blind once (a twelfth credential set).

`env` and `printenv` output, `docker inspect`'s `Env` list, `docker run -e`, `kubectl get pod
-o yaml`'s `env` values, `systemctl show`'s `Environment=`, `ps eww`'s environment after the
command, `/proc/<pid>/environ` (NUL-separated, and as `cat -v` and `tr '\\0' '\\n'` show it),
`heroku config`, `vercel env pull`'s `.env`, Doppler's and 1Password's CLI output, a
supervisord program's `environment=`, a CloudFormation template's parameters, a GitHub
Actions job's `env:`, an ECS task definition's `environment`. The names are the services' own
(`STRIPE_SECRET_KEY`, `DATABASE_PASSWORD`, `SENTRY_AUTH_TOKEN`, …) and the values this module's
generator's (`later_forms.py`'s `R`, reseeded each round by its `score`).

Scored blind, before any rule was written for them (3 rounds): 47 of 63 values (0.746). Missed:
values aligned in a column after `NAME:` (`heroku config`, `op item get`), name/value tables'
rows (ASCII and box-drawn), `REDIS_AUTH` (no secret word in the name), a CloudFormation
parameter's `Default` under `NoEcho: true`. Rules since (router/privacy/env_dumps.py): 62 of 63
(205 of 210 over ten rounds; left: `REDIS_AUTH` in a table's row or a name/value pair, a
word-and-digits password before a comment, a short letters-only one quoted).

    python -m benchmarks.privacy.later_env [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import json
from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, R, an, hexs, pw, registrar, set_main

FORMS: list[tuple[str, Callable[[], Form]]] = []


form = registrar("env", FORMS)


def name() -> str:
    return R.choice(
        [
            "DATABASE_PASSWORD",
            "SENTRY_AUTH_TOKEN",
            "APP_SECRET",
            "SESSION_SECRET",
            "JWT_SIGNING_KEY",
            "MAILGUN_API_KEY",
            "ADMIN_PASS",
            "REDIS_AUTH",
            "ENCRYPTION_KEY",
            "WEBHOOK_SECRET",
        ]
    )


def value() -> str:
    return R.choice([pw(), an(32), hexs(40)])


@form
def env_output() -> Form:
    a, b = value(), value()
    n1, n2 = R.sample(["DATABASE_PASSWORD", "SENTRY_AUTH_TOKEN", "APP_SECRET", "REDIS_AUTH"], 2)
    return f"HOSTNAME=web-7d9f\nHOME=/root\n{n1}={a}\nPATH=/usr/local/bin:/usr/bin\n{n2}={b}\nLANG=C.UTF-8\n", [a, b]


@form
def docker_inspect_env() -> Form:
    v = value()
    body = [{"Config": {"Env": [f"{name()}={v}", "PATH=/usr/local/sbin:/usr/local/bin", "NODE_ENV=production"]}}]
    return json.dumps(body, indent=4), [v]


@form
def docker_run_e() -> Form:
    v = value()
    return f"docker run -d --name api -e NODE_ENV=production -e {name()}={v} -p 8080:8080 acme/api:1.4", [v]


@form
def kubectl_pod_env() -> Form:
    v = value()
    return (
        "spec:\n  containers:\n  - name: api\n    image: acme/api:1.4\n    env:\n    - name: LOG_LEVEL\n"
        f"      value: info\n    - name: {name()}\n      value: {v}\n",
        [v],
    )


@form
def systemctl_show() -> Form:
    a, b = value(), value()
    return f"Environment=NODE_ENV=production {name()}={a} PORT=3000 SESSION_SECRET={b}", [a, b]


@form
def ps_eww() -> Form:
    v = value()
    return (
        "  PID TTY      STAT   TIME COMMAND\n"
        f" 4127 ?        Ssl    0:42 node server.js PATH=/usr/bin HOME=/home/app {name()}={v} NODE_ENV=production",
        [v],
    )


@form
def proc_environ_nul() -> Form:
    v = value()
    return f"PATH=/usr/bin\x00HOME=/app\x00{name()}={v}\x00LANG=C.UTF-8\x00", [v]


@form
def proc_environ_cat_v() -> Form:
    v = value()
    return f"PATH=/usr/bin^@HOME=/app^@{name()}={v}^@LANG=C.UTF-8^@", [v]


@form
def heroku_config() -> Form:
    a, b = value(), "sk_live_" + an(24)
    return (
        f"=== acme-api Config Vars\n{name() + ':':24} {a}\nSTRIPE_SECRET_KEY:       {b}\nWEB_CONCURRENCY:         2\n",
        [
            a,
            b,
        ],
    )


@form
def vercel_env() -> Form:
    v = value()
    return (
        f'# Created by Vercel CLI\nNEXT_PUBLIC_APP_URL="https://acme.app"\n{name()}="{v}"\nVERCEL_ENV="development"\n',
        [v],
    )


@form
def doppler_table() -> Form:
    v = value()
    n = name()
    return (
        "┌───────────────────┬──────────────────────────────────────────┐\n"
        "│ NAME              │ VALUE                                    │\n"
        "├───────────────────┼──────────────────────────────────────────┤\n"
        f"│ {n:17} │ {v:40} │\n"
        "│ DOPPLER_CONFIG    │ dev                                      │\n"
        "└───────────────────┴──────────────────────────────────────────┘",
        [v],
    )


@form
def op_item_get() -> Form:
    v = pw()
    return (
        "ID:          7p4zq2e5jbbh3k\nTitle:       Production DB\nVault:       Infra\nFields:\n"
        f"  username:    svc_prod\n  password:    {v}\n  hostname:    db.prod.internal",
        [v],
    )


@form
def supervisord() -> Form:
    v = value()
    return f'[program:worker]\ncommand=python worker.py\nenvironment=QUEUE="jobs",{name()}="{v}",DEBUG="0"\n', [v]


@form
def cloudformation_params() -> Form:
    v = pw()
    return (
        "Parameters:\n  DBPassword:\n    Type: String\n    NoEcho: true\n"
        f"    Default: '{v}'\nResources:\n  DB:\n    Type: AWS::RDS::DBInstance\n",
        [v],
    )


@form
def github_actions_env() -> Form:
    v = value()
    return f"jobs:\n  test:\n    runs-on: ubuntu-latest\n    env:\n      CI: true\n      {name()}: {v}\n", [v]


@form
def ecs_task_environment() -> Form:
    v = value()
    body = {
        "containerDefinitions": [
            {"name": "api", "environment": [{"name": name(), "value": v}, {"name": "PORT", "value": "80"}]}
        ]
    }
    return json.dumps(body, indent=2), [v]


@form
def export_lines() -> Form:
    v = value()
    return f"$ export {name()}='{v}'\n$ npm run migrate", [v]


@form
def dotenv_comment_value() -> Form:
    v = value()
    return f"# rotated 2024-03-01\n{name()} = {v}  # do not commit\n", [v]


def main(argv: list[str] | None = None) -> None:
    set_main("env", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()

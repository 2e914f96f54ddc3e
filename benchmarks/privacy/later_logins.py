"""Tokens given to developer CLIs' login commands and AI tools' configs, written after the
detectors and scored blind once (a fifteenth credential set).

The commands an agent runs or reads to log a tool in (`wandb login`, `huggingface-cli login
--token`, `ngrok config add-authtoken`, `doctl auth init -t`, `vercel --token`, `netlify deploy
--auth`, `supabase login --token`, `az login --service-principal -p`, `aws configure set
aws_secret_access_key`, `kubectl config set-credentials --token=`, `npm config set
//registry/:_authToken`, `gh auth login --with-token` with the token echoed in), and AI tools'
configuration files (an MCP server's `env` in `mcp.json`, Claude Desktop's config, `.aider.conf.yml`,
Continue's `config.json`, a notebook's cell setting `os.environ`). Values come from
`later_forms.py`'s generator (its `R`, reseeded each round by its `score`).

Scored blind, before any rule was written for them (3 rounds): 54 of 57 values (0.947); the
misses: `wandb login <key>`. A rule since (credentials.py): 57 of 57 (190 of 190 over ten rounds).

    python -m benchmarks.privacy.later_logins [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import json
from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, an, hexs, pw, registrar, set_main

FORMS: list[tuple[str, Callable[[], Form]]] = []
form = registrar("logins", FORMS)


@form
def wandb_login() -> Form:
    key = hexs(40)
    return f"$ wandb login {key}\nwandb: Appending key for api.wandb.ai to your netrc file", [key]


@form
def hf_login() -> Form:
    token = "hf_" + an(34)
    return f"huggingface-cli login --token {token} --add-to-git-credential", [token]


@form
def ngrok_authtoken() -> Form:
    token = an(27) + "_" + an(21)
    return f"ngrok config add-authtoken {token}", [token]


@form
def doctl_init() -> Form:
    token = "dop_v1_" + hexs(64)
    return f"doctl auth init -t {token} --context prod", [token]


@form
def vercel_token() -> Form:
    token = an(24)
    return f"npx vercel deploy --prod --token {token} --yes", [token]


@form
def netlify_auth() -> Form:
    token = "nfp_" + an(36)
    return f"netlify deploy --prod --dir=dist --auth {token}", [token]


@form
def supabase_login() -> Form:
    token = "sbp_" + hexs(40)
    return f"supabase login --token {token}", [token]


@form
def az_sp_login() -> Form:
    secret = an(8) + "~" + an(31)
    return (
        f"az login --service-principal -u 0f8e4c2a-1b3d-4e5f-8a9b-0c1d2e3f4a5b -p {secret} --tenant contoso.onmicrosoft.com",
        [secret],
    )


@form
def aws_configure_set() -> Form:
    secret = an(40)
    return f"aws configure set aws_secret_access_key {secret} --profile ci", [secret]


@form
def kubectl_set_credentials() -> Form:
    token = an(40)
    return f"kubectl config set-credentials ci-bot --token={token}", [token]


@form
def npm_config_set() -> Form:
    token = "npm_" + an(36)
    return f"npm config set //registry.npmjs.org/:_authToken {token}", [token]


@form
def gh_with_token() -> Form:
    token = "ghp_" + an(36)
    return f"echo {token} | gh auth login --with-token", [token]


@form
def mcp_json() -> Form:
    token = "ghp_" + an(36)
    other = an(32)
    body = {
        "mcpServers": {
            "github": {
                "command": "npx",
                "args": ["-y", "@modelcontextprotocol/server-github"],
                "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": token},
            },
            "linear": {"command": "npx", "args": ["-y", "linear-mcp"], "env": {"LINEAR_API_KEY": other}},
        }
    }
    return json.dumps(body, indent=2), [token, other]


@form
def claude_desktop_env() -> Form:
    value = an(40)
    body = {
        "mcpServers": {"postgres": {"command": "uvx", "args": ["mcp-server-postgres"], "env": {"PGPASSWORD": value}}}
    }
    return json.dumps(body, indent=2), [value]


@form
def aider_conf() -> Form:
    key = "sk-ant-api03-" + an(95)
    return f"model: claude-3-5-sonnet\nanthropic-api-key: {key}\nauto-commits: false\n", [key]


@form
def continue_config() -> Form:
    key = an(40)
    body = {"models": [{"title": "Local", "provider": "openai", "apiBase": "https://llm.internal/v1", "apiKey": key}]}
    return json.dumps(body, indent=2), [key]


@form
def notebook_cell() -> Form:
    key = an(32)
    cell = {"cell_type": "code", "source": ["import os\n", f'os.environ["COHERE_API_KEY"] = "{key}"\n']}
    return json.dumps({"cells": [cell]}, indent=1), [key]


@form
def mysql_config_editor() -> Form:
    password = pw()
    return (
        f"$ mysql_config_editor set --login-path=prod --host=db.internal --user=app --password\nEnter password: {password}",
        [password],
    )


def main(argv: list[str] | None = None) -> None:
    set_main("logins", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()

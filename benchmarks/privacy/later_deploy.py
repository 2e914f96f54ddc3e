"""Credentials in CI/CD systems and deployment platforms' CLIs, written after the detectors and
scored blind once (a nineteenth set beside `later_forms.py`'s nine and the later ones).

Setting a secret on a platform (`gh secret set`, `flyctl secrets set`, `netlify env:set`,
`vercel env add` with its value piped in, `railway variables --set`, `heroku config:set`,
`doppler secrets set`, `drone secret add --data`, `az pipelines variable create --secret`),
logging in (`argocd login --password`, `fly -t ci login -p`, `vault login -method=userpass`,
`doctl auth init --access-token`, `oc login --token`, `helm registry login --password`), a CI
log line that sets a secret (`##vso[task.setvariable …;issecret=true]`), Jenkins' `credentials.xml`
(its `{AQAAABAAAAAQ…}` is decrypted by the controller's own key), a Buildkite agent's config,
a CircleCI context's env in YAML, a GitLab runner's `config.toml`, Terraform Cloud's
`credentials.tfrc.json`. Values come from `later_forms.py`'s generator (its `R`, reseeded each
round by its `score`).

Scored blind, before any rule was written for them (3 rounds): 51 of 66 values (0.773). Missed:
`netlify env:set NAME VALUE` (a secret's name and value as two arguments), a value piped into
`vercel env add`, Drone's `secret add … --data X`, Azure Pipelines' `--secret true --value X`,
Concourse's `fly … login -p X`. Rules since (router/privacy/deploy_secrets.py): 66 of 66.

    python -m benchmarks.privacy.later_deploy [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import json
from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, an, pw, registrar, set_main

FORMS: list[tuple[str, Callable[[], Form]]] = []


form = registrar("deploy", FORMS)


@form
def gh_secret_set() -> Form:
    value = an(32)
    return f"gh secret set DEPLOY_TOKEN --body {value} --repo acme/api", [value]


@form
def gh_secret_set_quoted() -> Form:
    value = pw()
    return f'gh secret set DB_PASSWORD --body "{value}"', [value]


@form
def flyctl_secrets() -> Form:
    value = an(28)
    return f"flyctl secrets set STRIPE_WEBHOOK_SECRET={value} -a billing-api", [value]


@form
def netlify_env() -> Form:
    value = an(30)
    return f"netlify env:set SUPABASE_SERVICE_KEY {value}", [value]


@form
def vercel_env_pipe() -> Form:
    value = pw()
    return f"echo -n '{value}' | vercel env add DATABASE_PASSWORD production", [value]


@form
def railway_variables() -> Form:
    value = an(24)
    return f'railway variables --set "SESSION_SECRET={value}"', [value]


@form
def heroku_config_set() -> Form:
    value = pw()
    return f"heroku config:set SMTP_PASSWORD='{value}' -a marketing-site", [value]


@form
def doppler_secrets() -> Form:
    value = an(26)
    return f"doppler secrets set SIGNING_KEY={value} --project web --config prd", [value]


@form
def drone_secret() -> Form:
    value = pw()
    return f"drone secret add --repository acme/api --name docker_password --data {value}", [value]


@form
def az_pipeline_variable() -> Form:
    value = pw()
    return (
        f"az pipelines variable create --name sqlPassword --secret true --value '{value}' --pipeline-name api-ci",
        [value],
    )


@form
def argocd_login() -> Form:
    value = pw()
    return f"argocd login argocd.internal.example.com --username admin --password '{value}' --grpc-web", [value]


@form
def fly_concourse_login() -> Form:
    value = pw()
    return f"fly -t ci login -c https://ci.example.com -u admin -p {value}", [value]


@form
def vault_userpass() -> Form:
    value = pw()
    return f"vault login -method=userpass username=deploy password={value}", [value]


@form
def doctl_auth() -> Form:
    value = "dop_v1_" + an(64).lower()
    return f"doctl auth init --access-token {value}", [value]


@form
def oc_login() -> Form:
    value = "sha256~" + an(43)
    return f"oc login --token={value} --server=https://api.cluster.example.com:6443", [value]


@form
def helm_registry_login() -> Form:
    value = pw()
    return f"helm registry login registry.example.com --username ci --password {value}", [value]


@form
def vso_setvariable() -> Form:
    value = pw()
    return f"##vso[task.setvariable variable=dbPassword;issecret=true]{value}", [value]


@form
def jenkins_credentials_xml() -> Form:
    value = "{AQAAABAAAAAQ" + an(40) + "=}"
    return (
        "<com.cloudbees.plugins.credentials.impl.UsernamePasswordCredentialsImpl>\n"
        "  <scope>GLOBAL</scope>\n  <id>nexus-deploy</id>\n  <username>deployer</username>\n"
        f"  <password>{value}</password>\n"
        "</com.cloudbees.plugins.credentials.impl.UsernamePasswordCredentialsImpl>",
        [value],
    )


@form
def buildkite_agent_cfg() -> Form:
    value = an(50).lower()
    return f'# /etc/buildkite-agent/buildkite-agent.cfg\ntoken="{value}"\nname="%hostname-%spawn"\n', [value]


@form
def circleci_env_yaml() -> Form:
    value = pw()
    return (
        "jobs:\n  deploy:\n    docker:\n      - image: cimg/base:stable\n    environment:\n"
        f"      REGISTRY_PASSWORD: {value}\n",
        [value],
    )


@form
def gitlab_runner_toml() -> Form:
    value = "glrt-" + an(20)
    return f'[[runners]]\n  name = "docker-runner"\n  url = "https://gitlab.example.com"\n  token = "{value}"\n', [
        value
    ]


@form
def terraform_credentials() -> Form:
    value = an(14) + ".atlasv1." + an(60)
    body = {"credentials": {"app.terraform.io": {"token": value}}}
    return json.dumps(body, indent=2), [value]


def main(argv: list[str] | None = None) -> None:
    set_main("deploy", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()

"""Secrets held as a name field and a value field (the secret's name is a field's value, not a
key), written after the detectors and scored blind once (a thirtieth set beside
`later_forms.py`'s nine and the later ones).

Postman's environment export (`{"key": "api_key", "value": "X"}`), Terraform Cloud's variables
API, Azure's `az webapp config appsettings list` output, GitHub's Actions variables API, CircleCI's
environment API, Bitbucket's pipeline variables, IntelliJ's run configuration (`<env
name="DB_PASSWORD" value="X" />`), Eclipse's `.launch` (`<mapEntry key="…" value="…"/>`), Xcode's
scheme (`<EnvironmentVariable key="API_KEY" value="X" isEnabled="YES">`), .NET's `app.config`
(`<add key="ApiSecret" value="X" />`), Java's `web.xml` `<context-param>`, a Helm `--set` of a
list's `name`/`value`, Spring Cloud Config's `propertySources`. Values come from
`later_forms.py`'s generator (its `R`, reseeded each round by its `score`).

Scored blind, before any rule was written for them (3 rounds): 24 of 42 values (0.571). The JSON
pairs were found; missed: XML elements with a `name` or `key` attribute naming a secret and its
`value` (IntelliJ, Eclipse, Xcode, .NET), `web.xml`'s `param-name` then `param-value`, Helm's
`--set env[0].name=… --set env[0].value=…`. Rules since (pair_secrets.py): 42 of 42, 140 of 140
over 10 rounds.

    python -m benchmarks.privacy.later_pairs [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import json
from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, an, pw, registrar, set_main

FORMS: list[tuple[str, Callable[[], Form]]] = []


form = registrar("pairs", FORMS)


def p_() -> str:
    return pw().replace('"', "").replace("\\", "").replace("<", "").replace("&", "")


@form
def postman_environment() -> Form:
    k, t = an(32), p_()
    env = {
        "name": "prod",
        "values": [
            {"key": "base_url", "value": "https://api.example.org", "enabled": True},
            {"key": "api_key", "value": k, "enabled": True},
            {"key": "admin_password", "value": t, "type": "secret", "enabled": True},
        ],
    }
    return json.dumps(env, indent=2), [k, t]


@form
def terraform_cloud_vars() -> Form:
    s = an(40)
    item = {"data": {"type": "vars", "attributes": {"key": "AWS_SECRET_ACCESS_KEY", "value": s, "category": "env"}}}
    return json.dumps(item), [s]


@form
def az_appsettings() -> Form:
    p = p_()
    rows = [
        {"name": "WEBSITE_NODE_DEFAULT_VERSION", "slotSetting": False, "value": "~18"},
        {"name": "DB_PASSWORD", "slotSetting": False, "value": p},
    ]
    return "$ az webapp config appsettings list -g prod -n shop\n" + json.dumps(rows, indent=2), [p]


@form
def github_variables_api() -> Form:
    t = an(36)
    return json.dumps({"total_count": 1, "variables": [{"name": "DEPLOY_TOKEN", "value": t}]}), [t]


@form
def circleci_env() -> Form:
    k = an(40)
    return (
        f'curl -X POST -H "Circle-Token: $CIRCLE_TOKEN" https://circleci.com/api/v2/project/gh/acme/shop/envvar -d \'{{"name":"NPM_TOKEN","value":"{k}"}}\'',
        [k],
    )


@form
def bitbucket_variables() -> Form:
    p = p_()
    return json.dumps({"key": "SONAR_PASSWORD", "value": p, "secured": False}), [p]


@form
def intellij_run_config() -> Form:
    p = p_()
    return (
        '<configuration name="App" type="Application">\n  <envs>\n'
        f'    <env name="DB_PASSWORD" value="{p}" />\n    <env name="PROFILE" value="dev" />\n  </envs>\n</configuration>',
        [p],
    )


@form
def eclipse_launch() -> Form:
    k = an(32)
    return (
        '<mapAttribute key="org.eclipse.debug.core.environmentVariables">\n'
        f'  <mapEntry key="STRIPE_SECRET" value="{k}"/>\n</mapAttribute>',
        [k],
    )


@form
def xcode_scheme() -> Form:
    k = an(32)
    return (
        "<EnvironmentVariables>\n"
        f'   <EnvironmentVariable key = "API_KEY" value = "{k}" isEnabled = "YES">\n   </EnvironmentVariable>\n'
        "</EnvironmentVariables>",
        [k],
    )


@form
def dotnet_app_config() -> Form:
    s = an(28)
    return f'<appSettings>\n  <add key="ApiSecret" value="{s}" />\n  <add key="Region" value="eu" />\n</appSettings>', [
        s
    ]


@form
def web_xml_context_param() -> Form:
    p = p_()
    return (
        "<context-param>\n  <param-name>ldap.bind.password</param-name>\n"
        f"  <param-value>{p}</param-value>\n</context-param>",
        [p],
    )


@form
def helm_set_list() -> Form:
    p = an(18)
    return (
        "helm upgrade api ./chart --set env[0].name=DB_PASSWORD "
        f"--set env[0].value={p} --set env[1].name=LOG_LEVEL --set env[1].value=info",
        [p],
    )


@form
def spring_cloud_config() -> Form:
    p = p_()
    doc = {
        "name": "api",
        "profiles": ["prod"],
        "propertySources": [{"name": "vault:api", "source": {"spring.datasource.password": p}}],
    }
    return json.dumps(doc), [p]


def main(argv: list[str] | None = None) -> None:
    set_main("pairs", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()

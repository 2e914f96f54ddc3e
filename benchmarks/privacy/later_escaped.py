"""Credentials written through an escape, written after the detectors and scored blind once (a
twenty-fourth set beside `later_forms.py`'s nine and the later ones).

The same names and values the other sets hold, as agents meet them wrapped: a form body or a
query string URL-encoded (`password=p%40ss%21`), HTML-escaped JSON or config in a page or a
report (`&quot;password&quot;: &quot;X&quot;`), JSON held in a JSON string twice (a log line's
`message` carrying a request body: `\\"password\\": \\"X\\"`), `\\u0022`-escaped quotes, a
password input's `value` attribute, XML with attributes on the element, a YAML block scalar, a
shell's `$'…'` string, a heredoc into a config file, a CSV cell quoted with doubled quotes.
Values come from `later_forms.py`'s generator (its `R`, reseeded each round by its `score`).

Scored blind, before any rule was written for them (3 rounds): 30 of 54 values (0.556). Missed:
HTML-escaped quotes (`&quot;password&quot;: &quot;X&quot;`, `API_SECRET=&quot;X&quot;`),
`\u0022`-escaped quotes, a password input's `value`, an XML element with attributes, a YAML
block scalar, a shell's `$'…'` string, a Markdown table's cell. Since (escaped_markup.py reads
the entities and escapes as the characters; wrapped_secrets.py): 53 of 54; the one left is a
password of letters alone under a name, refused by design (a translation file's `"password":
"Passwort"`).

    python -m benchmarks.privacy.later_escaped [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import html
import json
import urllib.parse
from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, an, hexs, pw, registrar, set_main

FORMS: list[tuple[str, Callable[[], Form]]] = []


form = registrar("escaped", FORMS)


def quoted(value: str) -> str:
    return urllib.parse.quote(value, safe="")


@form
def form_body() -> Form:
    p = pw()
    return (
        f"POST /login HTTP/1.1\nContent-Type: application/x-www-form-urlencoded\n\nusername=ops&password={quoted(p)}",
        [quoted(p)],
    )


@form
def query_string() -> Form:
    p = pw()
    return f"GET /api/v1/export?user=ops&passwd={quoted(p)}&format=csv HTTP/1.1", [quoted(p)]


@form
def curl_data_urlencode() -> Form:
    t = an(32)
    return (
        f"curl -X POST https://auth.example.org/token --data-urlencode 'client_secret={t}' -d grant_type=client_credentials",
        [t],
    )


@form
def html_json() -> Form:
    p = pw()
    body = html.escape(json.dumps({"db": {"user": "app", "password": p}}), quote=True)
    return f"<pre class='config'>{body}</pre>", [html.escape(p, quote=True)]


@form
def html_env() -> Form:
    t = an(40)
    return f"<code>API_SECRET=&quot;{t}&quot;</code>", [t]


@form
def json_in_json() -> Form:
    p = pw().replace("\\", "")
    inner = json.dumps({"username": "ops", "password": p})
    outer = json.dumps({"level": "debug", "msg": "request body", "body": inner})
    return outer, [p]


@form
def json_in_json_token() -> Form:
    t = an(36)
    inner = json.dumps({"grant_type": "refresh_token", "refresh_token": t})
    return json.dumps({"ts": "2026-03-02T10:00:00Z", "payload": inner}), [t]


@form
def unicode_escaped() -> Form:
    p = an(18)
    return f"{{\\u0022password\\u0022: \\u0022{p}\\u0022, \\u0022user\\u0022: \\u0022ops\\u0022}}", [p]


@form
def password_input() -> Form:
    p = pw().replace('"', "")
    return (
        f'<form method="post">\n  <input type="password" name="pwd" id="pwd" value="{p}" autocomplete="off">\n</form>',
        [p],
    )


@form
def xml_attribute_element() -> Form:
    p = pw().replace("<", "").replace("&", "")
    return f'<datasource name="main">\n  <password encrypted="false">{p}</password>\n</datasource>', [p]


@form
def xml_attribute() -> Form:
    p = an(16)
    return f'<connection host="db.internal" user="app" password="{p}" pool="10"/>', [p]


@form
def yaml_block() -> Form:
    t = an(40)
    return f"auth:\n  client_secret: >-\n    {t}\n  client_id: ledger\n", [t]


@form
def shell_ansi_c() -> Form:
    p = an(14)
    return f"export DB_PASSWORD=$'{p}\\n'", [p]


@form
def heredoc_config() -> Form:
    p = pw()
    return f"cat > ~/.my.cnf <<'EOF'\n[client]\nuser=ops\npassword={p}\nEOF", [p]


@form
def csv_doubled_quotes() -> Form:
    p = an(16)
    return f'id,config\n7,"{{""user"": ""ops"", ""password"": ""{p}""}}"\n', [p]


@form
def escaped_newlines_env() -> Form:
    t = an(32)
    return f'"env": "NODE_ENV=production\\nSTRIPE_WEBHOOK_SECRET=whsec_{t}\\nPORT=8080"', ["whsec_" + t]


@form
def python_repr_bytes() -> Form:
    p = an(16)
    return f'b\'{{"username": "ops", "password": "{p}"}}\'', [p]


@form
def markdown_table_code() -> Form:
    t = hexs(40)
    return f"| name | value |\n|---|---|\n| `DEPLOY_TOKEN` | `{t}` |\n| `REGION` | `eu-west-1` |", [t]


def main(argv: list[str] | None = None) -> None:
    set_main("escaped", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()

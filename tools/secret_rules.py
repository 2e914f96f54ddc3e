"""Generate router/privacy/secret_rules.py from gitleaks' published rule data.

    python -m tools.secret_rules path/to/gitleaks.toml COMMIT > router/privacy/secret_rules.py

Source: https://github.com/gitleaks/gitleaks, config/gitleaks.toml (MIT License, Copyright (c)
2019 Zachary Rice). Each provider rule keeps its regex (converted from Go's RE2 syntax to
Python's), keywords, secret group, entropy floor and allowlist regexes; its kind is chosen here
from the rule id (the small vocabulary of router/privacy/kinds.py).
"""

from __future__ import annotations

import itertools
import re
import sys
import tomllib
from collections.abc import Iterator

# Rules Tandem covers with its own detectors (typed, validated) or does not use: the generic
# rule's keywords (`key`, `token`, …) occur on most lines of source code; ours decides by the
# value's shape. Path-only rules need a file name.
SKIP = {"generic-api-key", "pkcs12-file", "private-key", "jwt", "aws-access-token", "gcp-api-key"}

KIND_BY_PREFIX = (
    (
        "CLOUD_KEY",
        "aws alibaba azure gcp digitalocean cloudflare heroku flyio netlify yandex scalingo openshift "
        "kubernetes hashicorp vault doppler pulumi databricks confluent clickhouse planetscale fastly "
        "defined-networking authress okta 1password age-secret",
    ),
    ("AI_KEY", "openai anthropic cohere huggingface perplexity privateai"),
    (
        "CODE_TOKEN",
        "github gitlab bitbucket npm pypi rubygems nuget clojars jfrog artifactory travisci "
        "droneci codecov sourcegraph snyk sonar octopus harness prefect infracost sentry settlemint "
        "readme postman linear atlassian launchdarkly grafana new-relic datadog sumologic dynatrace "
        "sidekiq freemius contentful",
    ),
    (
        "MESSAGING_TOKEN",
        "slack discord telegram microsoft-teams twilio mattermost sendgrid sendinblue "
        "mailgun mailchimp messagebird sendbird twitter facebook linkedin intercom gitter twitch "
        "notion asana typeform zendesk hubspot",
    ),
    (
        "PAYMENT_KEY",
        "stripe square plaid flutterwave gocardless coinbase kraken kucoin bittrex shopify "
        "finicity duffel easypost shippo",
    ),
)


def kind_of(rule_id: str) -> str:
    for kind, prefixes in KIND_BY_PREFIX:
        if any(rule_id.startswith(prefix) for prefix in prefixes.split()):
            return kind
    return "API_KEY"


def _syntax(pattern: str, start: int) -> Iterator[tuple[int, str, int]]:
    """(index, character, depth) of each `(`, `)` and `|` of `pattern` from `start`, outside
    escapes and character classes; depth counted from `start` (a `)` of the enclosing group
    comes at depth -1)."""
    depth, index, in_class = 0, start, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if pattern[index + 1 : index + 2] == "]":
                index += 1
        elif char in "()|":
            depth += (char == "(") - (char == ")")
            yield index, char, depth
        index += 1


def _group_end(pattern: str, start: int) -> int:
    """Index of the `)` closing the group that contains `start` (len(pattern) at top level)."""
    return next((index for index, char, depth in _syntax(pattern, start) if depth < 0), len(pattern))


def _branches(pattern: str, start: int, end: int) -> list[str]:
    """`pattern[start:end]` cut at its top-level `|` (those of the group it is in)."""
    cuts = [index for index, char, depth in _syntax(pattern[:end], start) if char == "|" and depth == 0]
    bounds = [start - 1, *cuts, end]
    return [pattern[low + 1 : high] for low, high in itertools.pairwise(bounds)]


def to_python(pattern: str) -> str:
    """Go RE2 -> Python re: a `(?i)` after the start applies to the rest of its group in Go,
    alternatives after it included (each becomes a `(?i:…)` of its own: one group around them
    all would make the later ones follow the text before the flag); `\\z` is Python's `\\Z`;
    POSIX classes are spelled out."""
    pattern = pattern.replace("\\z", "\\Z").replace("[[:alnum:]]", "[A-Za-z0-9]")
    while True:
        position = pattern.find("(?i)", 1)
        if position < 0:
            return pattern
        end = _group_end(pattern, position + 4)
        scoped = "|".join(f"(?i:{piece})" for piece in _branches(pattern, position + 4, end))
        pattern = pattern[:position] + scoped + pattern[end:]


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit("usage: python -m tools.secret_rules path/to/gitleaks.toml COMMIT > router/privacy/secret_rules.py")
    path, commit = sys.argv[1], sys.argv[2]
    with open(path, "rb") as handle:
        config = tomllib.load(handle)
    rules = []
    for rule in config["rules"]:
        if rule["id"] in SKIP or "regex" not in rule:
            continue
        regex = to_python(rule["regex"])
        compiled = re.compile(regex)
        group = int(rule.get("secretGroup", 0)) or (1 if compiled.groups else 0)
        allow = tuple(
            to_python(expression)
            for allowlist in rule.get("allowlists", ())
            if allowlist.get("regexTarget", "secret") == "secret" and not allowlist.get("paths")
            for expression in allowlist.get("regexes", ())
        )
        stop = tuple(word for allowlist in rule.get("allowlists", ()) for word in allowlist.get("stopwords", ()))
        rules.append(
            (
                rule["id"],
                kind_of(rule["id"]),
                regex,
                tuple(rule["keywords"]),
                group,
                float(rule.get("entropy", 0)),
                allow,
                stop,
            )
        )
    print("# ruff: noqa: E501")
    print('"""Provider secret rules, generated by tools/secret_rules.py: do not edit.')
    print()
    print(f"Source: gitleaks (https://github.com/gitleaks/gitleaks) config/gitleaks.toml at commit {commit[:12]},")
    print("MIT License, Copyright (c) 2019 Zachary Rice. Regexes converted from Go RE2 to Python `re`;")
    print('the kind of each rule is Tandem\'s. Fields: id, kind, regex, keywords, group, entropy, allow, stop."""')
    print()
    print("# fmt: off")
    print("RULES: tuple[tuple[str, str, str, tuple[str, ...], int, float, tuple[str, ...], tuple[str, ...]], ...] = (")
    for rule in rules:
        print(f"    {rule!r},")
    print(")")


if __name__ == "__main__":
    main()

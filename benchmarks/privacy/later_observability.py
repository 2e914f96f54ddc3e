"""Credentials in observability and alerting tools' configurations, written after the detectors
and scored blind once (a twenty-second set beside `later_forms.py`'s nine and the later ones).

Splunk's HEC header (`Authorization: Splunk <token>`), Honeycomb's and Opsgenie's headers, an
OpenTelemetry exporter's headers in one variable, Logstash's `password => "…"`, Fluentd's
`<match>` directives, collectd's and Apache-style `Password "…"`, New Relic's `license_key`,
Elastic APM's `secret_token`, PagerDuty's `routing_key`, Alertmanager's receivers, Vector's sink,
Telegraf's output, Promtail's client, a Sentry DSN's key, a StatsD/Graphite URL. Values come from
`later_forms.py`'s generator (its `R`, reseeded each round by its `score`).

Scored blind, before any rule was written for them (3 rounds): 39 of 48 values (0.812). Missed:
Splunk's `Authorization: Splunk <token>`, Honeycomb's `X-Honeycomb-Team` header, PagerDuty's
`routing_key` (a key's name the service-key rule took for a message broker's). Rules since
(credentials.py's `Authorization` schemes, web_secrets.py's vendor header, service_keys.py):
48 of 48.

    python -m benchmarks.privacy.later_observability [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, R, an, hexs, pw, registrar, set_main

FORMS: list[tuple[str, Callable[[], Form]]] = []


form = registrar("observability", FORMS)


def uid() -> str:
    return str(uuid.UUID(int=R.getrandbits(128), version=4))


@form
def splunk_hec() -> Form:
    token = uid()
    return (
        f'curl -k https://splunk.example.com:8088/services/collector -H "Authorization: Splunk {token}" '
        '-d \'{"event": "deploy finished"}\'',
        [token],
    )


@form
def honeycomb_header() -> Form:
    key = an(22)
    return f"curl https://api.honeycomb.io/1/events/prod -H 'X-Honeycomb-Team: {key}' -d '{{\"ok\":1}}'", [key]


@form
def opsgenie_header() -> Form:
    key = uid()
    return f'curl -X POST https://api.opsgenie.com/v2/alerts -H "Authorization: GenieKey {key}"', [key]


@form
def otel_headers_env() -> Form:
    key = an(32)
    return f"export OTEL_EXPORTER_OTLP_HEADERS=api-key={key},x-tenant=prod", [key]


@form
def logstash_output() -> Form:
    p = pw()
    return (
        'output {\n  elasticsearch {\n    hosts => ["https://es01:9200"]\n    user => "logstash_writer"\n'
        f'    password => "{p}"\n  }}\n}}',
        [p],
    )


@form
def fluentd_match() -> Form:
    p = pw()
    return (
        f"<match app.**>\n  @type elasticsearch\n  host es01\n  user fluent\n  password {p}\n</match>",
        [p],
    )


@form
def collectd_password() -> Form:
    p = pw()
    return f'<Plugin mysql>\n  <Database app>\n    User "collectd"\n    Password "{p}"\n  </Database>\n</Plugin>', [p]


@form
def newrelic_yml() -> Form:
    key = hexs(36) + "NRAL"
    return f"common: &default_settings\n  license_key: {key}\n  app_name: billing\n", [key]


@form
def elastic_apm() -> Form:
    token = an(24)
    return f"ELASTIC_APM_SERVER_URL=https://apm.example.com\nELASTIC_APM_SECRET_TOKEN={token}\n", [token]


@form
def pagerduty_routing_key() -> Form:
    key = hexs(32)
    return f'{{"routing_key": "{key}", "event_action": "trigger", "payload": {{"summary": "disk full"}}}}', [key]


@form
def alertmanager_receiver() -> Form:
    key = hexs(32)
    return (
        "receivers:\n  - name: oncall\n    pagerduty_configs:\n"
        f"      - service_key: {key}\n        severity: critical\n",
        [key],
    )


@form
def vector_sink() -> Form:
    token = an(40)
    return f'[sinks.datadog]\ntype = "datadog_logs"\ninputs = ["app"]\ndefault_api_key = "{token}"\n', [token]


@form
def promtail_client() -> Form:
    p = pw()
    return (
        "clients:\n  - url: https://logs.example.com/loki/api/v1/push\n    basic_auth:\n"
        f"      username: '123456'\n      password: '{p}'\n",
        [p],
    )


@form
def sentry_dsn() -> Form:
    key = hexs(32)
    return f"SENTRY_DSN=https://{key}@o450000.ingest.sentry.io/5500000", [key]


@form
def graphite_url() -> Form:
    p = pw().replace("@", "x").replace(":", "x").replace("/", "x").replace("#", "x").replace("%", "x")
    return f"GRAPHITE_URL=https://metrics:{p}@graphite.example.com:2003", [p]


@form
def grafana_datasource() -> Form:
    p = pw()
    return (
        "apiVersion: 1\ndatasources:\n  - name: Prometheus\n    type: prometheus\n    basicAuth: true\n"
        f"    basicAuthUser: admin\n    secureJsonData:\n      basicAuthPassword: {p}\n",
        [p],
    )


def main(argv: list[str] | None = None) -> None:
    set_main("observability", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()

"""Credentials in observability and alerting tools (Splunk's `Authorization` scheme, Honeycomb's
header, PagerDuty's `routing_key`) and the set of forms that found them missing
(benchmarks/privacy/later_observability.py)."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect


def test_the_observability_forms_written_after_the_detectors() -> None:
    # Scored blind once: 39 of 48 values; rules since.
    from benchmarks.privacy import later_forms, later_observability

    found, missed, misses = later_forms.score(3, later_observability.FORMS)
    assert not missed["observability"], misses
    assert found["observability"] == 48


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (
            'curl https://splunk.example.com:8088/services/collector -H "Authorization: Splunk '
            'e3e70682-c209-4cac-a29f-6fbed82c07cd"',
            "e3e70682-c209-4cac-a29f-6fbed82c07cd",
        ),
        ("curl -H 'X-Honeycomb-Team: Acq9GFz6Y1t9EwL56nGisi' https://api.honeycomb.io", "Acq9GFz6Y1t9EwL56nGisi"),
        (
            '{"routing_key": "10d382729bd51e13c68bf56155a83e50", "event_action": "trigger"}',
            "10d382729bd51e13c68bf56155a83e50",
        ),
    ],
)
def test_observability_secrets_are_found(text: str, value: str) -> None:
    assert value in [f.value for f in detect(text)]


@pytest.mark.parametrize(
    "text",
    [
        'channel.basic_publish(exchange="", routing_key="orders.created", body=body)',
        'routing_key = "task_queue_priority_high"',
        "Authorization: Splunk $HEC_TOKEN",
        "X-Honeycomb-Team: ${HONEYCOMB_KEY}",
    ],
)
def test_observability_look_alikes(text: str) -> None:
    assert [f for f in detect(text) if f.type in ("SECRET_ASSIGNMENT", "API_KEY")] == []

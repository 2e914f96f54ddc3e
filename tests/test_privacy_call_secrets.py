"""Credentials passed to calls by position or encoded on the spot, and defaults under a declared
secret's name, and the set of forms that found them missing (benchmarks/privacy/later_calls.py)."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect

PW = "Tiger3594!x"


def test_the_call_forms_written_after_the_detectors() -> None:
    # Scored blind once: 30 of 60 values; rules since. (A letters-only default, which ten rounds
    # draw once, is refused by design.)
    from benchmarks.privacy import later_calls, later_forms

    found, missed, misses = later_forms.score(3, later_calls.FORMS)
    assert not missed["calls"], misses
    assert found["calls"] == 60


@pytest.mark.parametrize(
    "text",
    [
        f'req.SetBasicAuth("deploy", "{PW}")',
        f'Connection c = DriverManager.getConnection("jdbc:postgresql://db:5432/app", "app", "{PW}");',
        f"Net::SMTP.start('smtp.example.org', 587, 'example.org', 'mailer', '{PW}', :login) do |smtp|",
        f"ssh.connect('bastion.example.org', 22, 'ops', '{PW}')",
        f"r = redis.Redis('cache.internal', 6379, 0, '{PW}')",
        f"headers: {{ Authorization: 'Basic ' + btoa('api-user:{PW}') }},",
        f'token = base64.b64encode(b"svc_export:{PW}").decode()',
        f'variable "db_password" {{\n  type      = string\n  default   = "{PW}"\n}}',
        f"Parameters:\n  DBPassword:\n    Type: String\n    Default: '{PW}'\n",
        f"inputs:\n  api-token:\n    description: 'Token'\n    default: '#{PW}'\n",
    ],
)
def test_call_and_declared_secrets_are_found(text: str) -> None:
    assert any(PW in f.value for f in detect(text))


@pytest.mark.parametrize(
    "text",
    [
        "conn = sqlite3.connect('app.db')",
        "client.connect('broker.local', 1883, 60)",
        "r = redis.Redis('cache.internal', 6379, 0)",
        "btoa('hello world')",
        'base64.b64encode(b"user:" + password.encode())',
        'variable "db_password" {\n  type      = string\n  sensitive = true\n}',
        'variable "region" {\n  default = "eu-west-1-zone-a"\n}',
        "Parameters:\n  DBPassword:\n    Type: String\n    NoEcho: true\n  InstanceType:\n    Default: t3.medium\n",
        "inputs:\n  api-token:\n    description: 'Token'\n    default: ${{ github.token }}\n",
    ],
)
def test_call_and_declared_look_alikes(text: str) -> None:
    assert [f for f in detect(text) if f.type == "SECRET_ASSIGNMENT"] == []

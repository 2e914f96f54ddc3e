"""Secrets in environment dumps and secret managers' output (router/privacy/env_dumps.py) and the
set of forms that found them missing (benchmarks/privacy/later_env.py)."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect

VALUE = "Xk9mQ2vL7pz4Rt8w"


def test_the_env_forms_written_after_the_detectors() -> None:
    # Scored blind once: 47 of 63 values; rules since. Left: `REDIS_AUTH` in a table's row (the
    # names tables and name/value pairs read are the assignment rules') and a word-and-digits
    # password in a .env with a comment after it.
    from benchmarks.privacy import later_env, later_forms

    found, _missed, misses = later_forms.score(3, later_env.FORMS)
    assert found["env"] >= 62, misses
    assert {name for name, _value in misses} <= {"doppler_table", "dotenv_comment_value"}, misses


@pytest.mark.parametrize(
    "text",
    [
        f"=== acme-api Config Vars\nSENTRY_AUTH_TOKEN:       {VALUE}\nWEB_CONCURRENCY:         2\n",
        f"Fields:\n  username:    svc_prod\n  password:    {VALUE}\n",
        f"| name | value |\n|---|---|\n| DATABASE_PASSWORD | {VALUE} |\n",
        f"│ APP_SECRET        │ {VALUE}                 │",
        f"REDIS_AUTH={VALUE}",
        f"Parameters:\n  DBPassword:\n    Type: String\n    NoEcho: true\n    Default: '{VALUE}'\n",
        f'"DbPass": {{"Type": "String", "Default": "{VALUE}", "NoEcho": "true"}}',
    ],
)
def test_dumped_secrets_are_found(text: str) -> None:
    assert VALUE in [f.value for f in detect(text)], detect(text)


@pytest.mark.parametrize(
    "text",
    [
        "SMTP_AUTH=login",
        "REDIS_AUTH=${REDIS_PASSWORD}",
        "pattern = r'aws_secret_access_key|aws_session_token|s3_access_key_id|'",
        "| name | value |\n|---|---|\n| TOKEN_TTL | 3600 |\n",
        "Parameters:\n  InstanceType:\n    Type: String\n    Default: t3.micro\n",  # no NoEcho
        "password:    <your password here>",
    ],
)
def test_dump_look_alikes_are_not_secrets(text: str) -> None:
    assert not detect(text), detect(text)

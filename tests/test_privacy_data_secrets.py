"""Credentials of data engineering's tools (router/privacy/data_secrets.py, tabulate's `===`
rule lines in tables.py) and the set of forms that found them missing
(benchmarks/privacy/later_data.py)."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect

PASSWORD = "Kv7#pQ2mZ9xL"


def test_the_data_forms_written_after_the_detectors() -> None:
    # Scored blind once: 66 of 78 values; rules since.
    from benchmarks.privacy import later_data, later_forms

    found, missed, misses = later_forms.score(3, later_data.FORMS)
    assert not missed["data"], misses
    assert found["data"] == 78


@pytest.mark.parametrize(
    "text",
    [
        # Airflow's `connections get -o table`: tabulate's rule line is `=`, not `-`.
        "id | conn_id | login  | password     | port\n"
        "===+=========+========+==============+=====\n"
        f"1  | dw      | loader | {PASSWORD} | 5432\n",
        f"Password for the [elastic] user successfully reset.\nNew value: {PASSWORD}\n",
        f"Changed password for user elastic\nPASSWORD elastic = {PASSWORD}\n",
        f'Secret(value="{PASSWORD}").save(name="github-token")',
        f"api_key: SecretStr = SecretStr('{PASSWORD}')",
    ],
)
def test_data_tools_secrets_are_found(text: str) -> None:
    assert PASSWORD in [f.value for f in detect(text)]


def test_a_service_account_keys_id_is_found() -> None:
    key_id = "9f2c4e1d7a8b3c6e5f0a1b2c3d4e5f6a7b8c9d0e"
    text = f'{{"type": "service_account", "private_key_id": "{key_id}"}}'
    assert [(f.type, f.value) for f in detect(text)] == [("CLOUD_KEY", key_id)]


@pytest.mark.parametrize(
    "text",
    [
        # `New value:` with no password before it is some other setting's.
        "Updating the replica count.\nNew value: 3fa85f64\n",
        # A variable, a reference or a stand-in wrapped as a secret is none.
        "Secret(value=os.environ['TOKEN'])",
        'SecretStr("${DB_PASSWORD}")',
        "Secret(value='changeme')",
        # A title underlined with `=` is no table's rule line.
        "Passwords, keys and tokens\n=========================\n\nSee the vault.\n",
    ],
)
def test_data_tools_look_alikes(text: str) -> None:
    assert [f for f in detect(text) if f.type in ("SECRET_ASSIGNMENT", "CLOUD_KEY")] == []

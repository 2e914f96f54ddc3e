"""Passwords and tokens on administrators' command lines (`net user NAME X /add`, `vault login
TOKEN`, `etcdctl --user u:X`, Nomad's and Consul's `-token`, the registry tools' `--creds`) and
the set of forms that found them missing (benchmarks/privacy/later_admin.py)."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect

PW = "Falcon7374*q"
TOKEN = "ac642b4c-49b2-4ded-9c31-d9b25a2b745b"


def test_the_admin_forms_written_after_the_detectors() -> None:
    # Scored blind once: 44 of 57 values; rules since.
    from benchmarks.privacy import later_admin, later_forms

    found, missed, misses = later_forms.score(3, later_admin.FORMS)
    assert not missed["admin"], misses
    assert found["admin"] == 57


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (f"net user deploy {PW} /add /expires:never", PW),
        ("vault login hvs.AQlxJ4SXRVxfCQGgXkH1zxFU", "hvs.AQlxJ4SXRVxfCQGgXkH1zxFU"),
        (f"etcdctl --endpoints=https://10.0.0.5:2379 --user root:{PW} get /config", PW),
        ("etcdctl --user root:-MRb1OcWrhQ7TT get /config", "-MRb1OcWrhQ7TT"),
        (f"nomad job run -token {TOKEN} web.nomad", TOKEN),
        (f"skopeo copy --src-creds ci-bot:{PW} docker://r/app:1.2 dir:/tmp/app", PW),
        (f"podman pull --creds ci-bot:{PW} registry.example.org/app:1.2", PW),
    ],
)
def test_admin_secrets_are_found(text: str, value: str) -> None:
    assert value in [f.value for f in detect(text)]


@pytest.mark.parametrize(
    "text",
    [
        "net user deploy * /add",
        "net user deploy",
        "net user deploy /active:no",
        "vault login -method=oidc role=dev",
        "vault login -method=github",
        "nomad job run -token $NOMAD_TOKEN web.nomad",
        "skopeo copy --src-creds ci-bot:$REGISTRY_PASSWORD docker://r/app dir:/tmp/app",
    ],
)
def test_admin_look_alikes(text: str) -> None:
    assert [f for f in detect(text) if f.type in ("SECRET_ASSIGNMENT", "API_KEY")] == []


def test_the_directory_forms_written_after_the_detectors() -> None:
    # benchmarks/privacy/later_directory.py, scored blind once: 18 of 39 values; rules since.
    from benchmarks.privacy import later_directory, later_forms

    found, missed, misses = later_forms.score(3, later_directory.FORMS)
    assert not missed["directory"], misses
    assert found["directory"] == 39


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("dn: uid=bob,ou=people,dc=example,dc=org\nuserPassword:: RmFsY29uNzM3NCo=\n", "RmFsY29uNzM3NCo="),
        ("replace: unicodePwd\nunicodePwd:: IgBUAGkAZwBlAHIANAAwADAAIwAiAA==\n-\n", "IgBUAGkAZwBlAHIANAAwADAAIwAiAA=="),
        ("echo 'Tiger2460!' | kinit svc_etl@CORP.EXAMPLE.ORG", "Tiger2460!"),
        ("echo 'Sunny3098!' | keyring set smtp ana@example.org", "Sunny3098!"),
        ("wpa_passphrase OfficeWiFi 1f5S71IRz1THrHZp | sudo tee /etc/wpa_supplicant.conf", "1f5S71IRz1THrHZp"),
        ("security add-generic-password -a ci -s deploy-key -w Orbit8762!x -U", "Orbit8762!x"),
        (
            "    Authentication         : WPA2-Personal\n    Key Content            : hToxYkvB0dgYj2So\n",
            "hToxYkvB0dgYj2So",
        ),
    ],
)
def test_directory_and_wifi_secrets_are_found(text: str, value: str) -> None:
    assert value in [f.value for f in detect(text)]


@pytest.mark.parametrize(
    "text",
    [
        "    Key Content            : Absent\n",
        "echo $PASSWORD | kinit svc_etl@CORP.EXAMPLE.ORG",
        "wpa_passphrase OfficeWiFi",
        "userPassword:: \n",
    ],
)
def test_directory_look_alikes(text: str) -> None:
    assert [f for f in detect(text) if f.type == "SECRET_ASSIGNMENT"] == []

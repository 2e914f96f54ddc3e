"""Credentials in network devices' configurations (router/privacy/network_secrets.py) and the set
of forms that found them missing (benchmarks/privacy/later_network.py)."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect

PASSWORD = "Kv7#pQ2mZ9xL"


def test_the_network_forms_written_after_the_detectors() -> None:
    # Scored blind once: 59 of 78 values; rules since. Pulumi's `secure:` values are ciphertext
    # (its stack's key decrypts them), left.
    from benchmarks.privacy import later_forms, later_network

    found, _missed, misses = later_forms.score(3, later_network.FORMS)
    assert found["network"] == 75, misses
    assert {name for name, _value in misses} == {"pulumi_secure"}


@pytest.mark.parametrize(
    "text",
    [
        f"radius server ISE01\n address ipv4 10.20.0.5 auth-port 1812\n key {PASSWORD}\n",
        f"tacacs server TAC1\n address ipv4 10.20.0.9\n key 7 {PASSWORD}\n",
        f"router bgp 65001\n neighbor 192.0.2.1 password {PASSWORD}\n",
        f"interface Gi0/1\n ip ospf message-digest-key 1 md5 {PASSWORD}\n",
        f"interface Gi0/2\n ip ospf authentication-key 7 {PASSWORD}\n",
        f"key chain OSPF\n key 1\n  key-string {PASSWORD}\n",
    ],
)
def test_device_keys_are_found(text: str) -> None:
    assert PASSWORD in [f.value for f in detect(text)]


def test_junos_and_fortigate_reversible_secrets() -> None:
    junos = "$9$kCTGRBI1oOZSHCoHPbzRKZuQ"
    forti = "MWa4cFut1DdZ04ZAmJ9Of1Uiaz8RAuanaTWa0RHN"
    text = f'authentication-key "{junos}"; ## SECRET-DATA\nconfig system admin\n    set password ENC {forti}\n'
    assert {junos, forti} <= {f.value for f in detect(text)}


def test_an_openvpn_static_key_is_one_private_key() -> None:
    body = "\n".join(["3fc8616436ecb43f4cdfaff670aaa148"] * 4)
    text = f"#\n-----BEGIN OpenVPN Static key V1-----\n{body}\n-----END OpenVPN Static key V1-----\n"
    assert [(f.type, f.value) for f in detect(text)] == [("PRIVATE_KEY", body)]


@pytest.mark.parametrize(
    "text",
    [
        "Press any key to continue",
        "the primary key is id\n    key id\n",  # no RADIUS or TACACS+ block above
        "radius server ISE01\n key <redacted>\n",
        "neighbor 192.0.2.1 password $BGP_PASSWORD\n",
        "We use message-digest-key authentication on every area.",
    ],
)
def test_device_look_alikes(text: str) -> None:
    assert [f for f in detect(text) if f.type == "SECRET_ASSIGNMENT"] == []

"""Key material that is no PEM block (router/privacy/key_material.py) and the set of forms that
found it missing (benchmarks/privacy/later_keys.py)."""

from __future__ import annotations

import json

import pytest

from router.privacy.detect import detect

D = "Xk9mQ2vL7pz4Rt8wYb3nKc6hJd1sFg5aZe0u-_Qv"


def test_the_key_forms_written_after_the_detectors() -> None:
    # Scored blind once: 26 of 42 values; rules since.
    from benchmarks.privacy import later_forms, later_keys

    found, missed, misses = later_forms.score(3, later_keys.FORMS)
    assert not missed["keys"], misses
    assert found["keys"] == 42


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"kty": "EC", "crv": "P-256", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "d": D}),
        json.dumps({"kty": "oct", "k": D, "alg": "HS256"}),
        f"untrusted comment: minisign encrypted secret key\nRWRTY0Iy{D}{D}\n",
        json.dumps(
            {
                "primaryKeyId": 1,
                "key": [
                    {
                        "keyData": {
                            "typeUrl": "type.googleapis.com/x",
                            "value": "GhD+Xk9mQ2vL7pz4Rt8wYb3nKc6hJd1sFg5a/e0uQv==",
                        }
                    }
                ],
            }
        ),
        "FERNET_KEY = 'cw_0x689RpI-jtRR7oE8h_eQsKImvJapLeSbXpwF4e4='",
    ],
)
def test_key_material_is_found(text: str) -> None:
    assert [f for f in detect(text) if f.type in ("PRIVATE_KEY", "SECRET_ASSIGNMENT")], detect(text)


@pytest.mark.parametrize(
    "text",
    [
        # A public JWK: no private member.
        json.dumps({"kty": "RSA", "n": D * 4, "e": "AQAB", "kid": "k1"}),
        # `d` in an object that is no JWK.
        json.dumps({"d": D, "type": "digest"}),
        "untrusted comment: signature from minisign secret key\n",  # a signature's comment, no key
    ],
)
def test_key_material_look_alikes(text: str) -> None:
    assert not [f for f in detect(text) if f.type == "PRIVATE_KEY"], detect(text)

"""Private keys and key material in the forms agents read, written after the detectors and
scored blind once (a thirteenth credential set).

A JWK with its private members (`d`, `p`, `q`), a JWKS file, a PEM key JSON-escaped inside a
service's config or a Terraform state, a PEM key with its header stripped to a single line in an
`.env` file, `age`'s secret key, minisign's and signify's secret keys, a Tink keyset, a Fernet key
under its name, an HMAC key in hex, a `ssh-keygen` key pasted into a chat with its lines joined,
an X.509 key pair in a Kubernetes `tls.key` not base64-encoded (`stringData`), Ansible's
`ansible_ssh_private_key_file` content inline, a PGP private key block in a CI variable. Values
come from `later_forms.py`'s generator (its `R`, reseeded each round by its `score`).

Scored blind, before any rule was written for them (3 rounds, once a mistake of a form was put
right: its label was the PEM block unindented, the text's indented): 26 of 42 values (0.619).
Missed: a JWK's private members, minisign's and signify's secret keys, a Tink keyset's key data,
a Fernet key under its name. Rules since (router/privacy/key_material.py): 42 of 42 (140 of 140
over ten rounds).

    python -m benchmarks.privacy.later_keys [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import base64
import json
import string
from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, R, an, hexs, registrar, set_main

FORMS: list[tuple[str, Callable[[], Form]]] = []
B64 = string.ascii_letters + string.digits + "+/"
B64URL = string.ascii_letters + string.digits + "-_"


form = registrar("keys", FORMS)


def b64(n: int, alphabet: str = B64) -> str:
    return "".join(R.choice(alphabet) for _ in range(n))


def pem(label: str = "PRIVATE KEY", lines: int = 8) -> str:
    body = "\n".join(b64(64) for _ in range(lines))
    return f"-----BEGIN {label}-----\n{body}\n{b64(40)}==\n-----END {label}-----"


@form
def jwk_private() -> Form:
    d = b64(342, B64URL)
    key = {"kty": "RSA", "kid": "2024-03", "n": b64(342, B64URL), "e": "AQAB", "d": d, "p": b64(171, B64URL)}
    return json.dumps(key, indent=2), [d]


@form
def jwks_file() -> Form:
    d = b64(43, B64URL)
    keys = {"keys": [{"kty": "EC", "crv": "P-256", "x": b64(43, B64URL), "y": b64(43, B64URL), "d": d, "use": "sig"}]}
    return json.dumps(keys), [d]


@form
def pem_in_json_config() -> Form:
    key = pem()
    return json.dumps({"service": "billing", "signing_key": key}), [json.dumps(key)[1:60]]


@form
def pem_in_tfstate() -> Form:
    key = pem("RSA PRIVATE KEY")
    body = {"resources": [{"type": "tls_private_key", "instances": [{"attributes": {"private_key_pem": key}}]}]}
    return json.dumps(body, indent=2), [json.dumps(key)[1:60]]


@form
def pem_one_line_env() -> Form:
    body = b64(600)
    return f"JWT_PRIVATE_KEY={body}\nJWT_ISSUER=acme\n", [body]


@form
def age_key() -> Form:
    key = "AGE-SECRET-KEY-1" + "".join(R.choice("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L") for _ in range(58))
    return f"# created: 2024-03-01T12:00:00Z\n# public key: age1{an(58).lower()}\n{key}\n", [key]


@form
def minisign_key() -> Form:
    key = "RWRTY0Iy" + b64(204)
    return f"untrusted comment: minisign encrypted secret key\n{key}\n", [key]


@form
def tink_keyset() -> Form:
    value = b64(88)
    keyset = {
        "primaryKeyId": 12345,
        "key": [
            {
                "keyData": {
                    "typeUrl": "type.googleapis.com/google.crypto.tink.AesGcmKey",
                    "value": value,
                    "keyMaterialType": "SYMMETRIC",
                },
                "status": "ENABLED",
                "keyId": 12345,
                "outputPrefixType": "TINK",
            }
        ],
    }
    return json.dumps(keyset), [value]


@form
def fernet_key() -> Form:
    key = base64.urlsafe_b64encode(bytes(R.randrange(256) for _ in range(32))).decode()
    return f"FERNET_KEY = '{key}'", [key]


@form
def hmac_hex() -> Form:
    key = hexs(64)
    return f"webhook:\n  hmac_key: {key}\n  algorithm: sha256\n", [key]


@form
def ssh_key_joined() -> Form:
    body = b64(400)
    return f"here's the key: -----BEGIN OPENSSH PRIVATE KEY----- {body} -----END OPENSSH PRIVATE KEY-----", [body[:60]]


@form
def k8s_tls_stringdata() -> Form:
    key = pem("EC PRIVATE KEY", 3)
    indented = key.replace("\n", "\n    ")
    first_line = key.split("\n")[1]
    return f"apiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\nstringData:\n  tls.key: |\n    {indented}\n", [
        first_line
    ]


@form
def pgp_ci_variable() -> Form:
    key = pem("PGP PRIVATE KEY BLOCK", 10)
    escaped = key.replace("\n", "\\n")
    return f'GPG_SIGNING_KEY="{escaped}"', [escaped[:60]]


@form
def signify_key() -> Form:
    key = "RWRCSwAAA" + b64(140)
    return f"untrusted comment: signify secret key\n{key}\n", [key]


def main(argv: list[str] | None = None) -> None:
    set_main("keys", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()

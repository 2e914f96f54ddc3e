"""Pieces of a private key, as agents read them: the first lines (`head -n 10 key.pem`, a harness
cutting long output), the body without its lines of dashes (`sed -n 2,20p`), the last lines of a
key paged over two tool results. Each piece is key material and is found; public keys and
certificates, cut the same way, are not."""

from __future__ import annotations

import base64
import random

import pytest

from router.privacy.detect import detect

# How each kind of key's encoding begins (DER's first bytes; OpenSSH's magic), then random bytes
# of a key's length: the base64 is what a key file holds, without being anyone's key.
PREFIXES = {
    "RSA PRIVATE KEY": bytes.fromhex("308204a40201000282010100"),  # PKCS#1
    "PRIVATE KEY": bytes.fromhex("308204bd020100300d06092a864886f70d0101010500048204a7"),  # PKCS#8 RSA
    "EC PRIVATE KEY": bytes.fromhex("30770201010420"),  # SEC1, P-256
    "ENCRYPTED PRIVATE KEY": bytes.fromhex("3082051c304e06092a864886f70d01050d30"),  # PKCS#8, PBES2
    "OPENSSH PRIVATE KEY": b"openssh-key-v1\x00\x00\x00\x00\x04none",
}
PUBLIC = {
    "PUBLIC KEY": bytes.fromhex("30820122300d06092a864886f70d01010105000382010f00"),
    "CERTIFICATE": bytes.fromhex("3082036130820249a003020102"),
}


def pem(label: str, prefix: bytes, size: int, seed: int) -> list[str]:
    body = base64.b64encode(prefix + random.Random(seed).randbytes(size)).decode()
    return [f"-----BEGIN {label}-----", *(body[i : i + 64] for i in range(0, len(body), 64)), f"-----END {label}-----"]


def pieces(lines: list[str]) -> dict[str, str]:
    half = len(lines) // 2
    return {
        "head": "\n".join(lines[:8]) + "\n... [output truncated, 20 more lines]",
        "body": "\n".join(lines[1:9]),
        "tail": "\n".join(lines[half:]),
    }


@pytest.mark.parametrize("label", list(PREFIXES))
@pytest.mark.parametrize("piece", ["head", "body", "tail"])
def test_each_piece_of_a_private_key_is_found(label: str, piece: str) -> None:
    lines = pem(label, PREFIXES[label], 1200, seed=len(label))
    text = pieces(lines)[piece]
    found = detect(f"$ {piece} id_key\n{text}\n$ ls\n")
    assert [f.type for f in found] == ["PRIVATE_KEY"], found
    # Every base64 line of the piece is in the finding: none reaches the cloud.
    value = found[0].value
    assert all(line in value for line in text.split("\n") if len(line) == 64)


@pytest.mark.parametrize("label", list(PREFIXES))
def test_a_key_cut_inside_json_output_is_found(label: str) -> None:
    # A tool's JSON output: the line breaks are `\n` escapes.
    text = pieces(pem(label, PREFIXES[label], 1200, seed=3))["head"]
    document = '{"stdout": "' + text.replace("\n", "\\n") + '", "exit_code": 0}'
    found = detect(document)
    assert [f.type for f in found] == ["PRIVATE_KEY"]
    assert text.split("\n")[2] in found[0].value


@pytest.mark.parametrize("label", list(PUBLIC))
@pytest.mark.parametrize("piece", ["head", "body", "tail"])
def test_pieces_of_public_keys_and_certificates_are_not_found(label: str, piece: str) -> None:
    text = pieces(pem(label, PUBLIC[label], 1200, seed=5))[piece]
    assert detect(f"$ cat {label.lower()}.pem\n{text}\n") == []


def test_a_whole_key_is_one_finding_of_the_whole_block() -> None:
    lines = pem("RSA PRIVATE KEY", PREFIXES["RSA PRIVATE KEY"], 1200, seed=9)
    block = "\n".join(lines)
    assert [(f.type, f.value) for f in detect(f"key:\n{block}\n")] == [("PRIVATE_KEY", block)]

"""The privacy vault's originals at rest: sealed with AES-256-GCM before any store holds them.

A vault note (`vault:value:<placeholder>`) holds `v1:` + base64url(nonce ‖ ciphertext ‖ tag); the
trajectory id and the placeholder are the associated data, so a sealed value copied to another
trajectory or placeholder does not open. The value → placeholder index (`vault:id:<hash>`) uses a
hash keyed from the same key, so a reader of Redis cannot confirm a guessed e-mail or card
number by hashing it.

The key comes from the environment variable named by `vault.key_env` (32 bytes, base64). With
`redis_url` set it is required: the originals would otherwise sit in Redis, and replicas must
share one key to read each other's vault. Without Redis the vault never leaves the process and
a random key made at start-up serves (nothing to share, nothing to keep across restarts).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

SEALED = "v1:"
_NONCE = 12
_CACHE = 65_536  # opened values kept, so a long trajectory's vault is not decrypted every step
KEY_HINT = "generate one with: python -c 'import os, base64; print(base64.b64encode(os.urandom(32)).decode())'"


class VaultKeyError(ValueError):
    """The configured key is missing or not 32 bytes of base64; the message says which."""


def parse_key(text: str, name: str) -> bytes:
    cleaned = text.strip()
    try:
        key = base64.b64decode(cleaned + "=" * (-len(cleaned) % 4), altchars=b"-_", validate=False)
    except (binascii.Error, ValueError) as exc:
        raise VaultKeyError(f"{name} is not base64 ({exc}); {KEY_HINT}") from exc
    if len(key) != 32:
        raise VaultKeyError(f"{name} must hold 32 bytes of base64 (it holds {len(key)} bytes); {KEY_HINT}")
    return key


class VaultCipher:
    def __init__(self, key: bytes, *, ephemeral: bool = False) -> None:
        self._aead = AESGCM(key)
        self._id_key = hashlib.blake2b(key, digest_size=32, person=b"tandem-vault-id").digest()
        # What else the gateway seals at rest (the outage journal) uses a key of its own, derived.
        self._journal_key = hashlib.blake2b(key, digest_size=32, person=b"tandem-journal").digest()
        self.ephemeral = ephemeral  # made at start-up: nothing sealed outlives the process
        self._opened: dict[tuple[str, str, str], str] = {}

    @classmethod
    def from_env(cls, key_env: str, required: bool) -> VaultCipher:
        text = os.environ.get(key_env, "")
        if text:
            return cls(parse_key(text, f"the vault key ${key_env}"))
        if required:
            raise VaultKeyError(
                f"redis_url is set, so the privacy vault's original values would be stored in Redis: "
                f"set ${key_env} to the key that seals them (the same on every replica); {KEY_HINT}"
            )
        return cls(os.urandom(32), ephemeral=True)

    @property
    def journal_key(self) -> bytes:
        """The key sealing the outage journal on disk (router/trajectory/journal_file.py)."""
        return self._journal_key

    def value_id(self, value: str) -> str:
        """A keyed hash of a value: the vault's stable index, meaningless without the key."""
        return hashlib.blake2b(value.encode(), digest_size=10, key=self._id_key).hexdigest()

    def seal(self, trajectory_id: str, placeholder: str, value: str) -> str:
        nonce = os.urandom(_NONCE)
        sealed = self._aead.encrypt(nonce, value.encode(), f"{trajectory_id}\0{placeholder}".encode())
        text = SEALED + base64.urlsafe_b64encode(nonce + sealed).decode()
        if len(self._opened) >= _CACHE:
            self._opened.clear()
        self._opened[(trajectory_id, placeholder, text)] = value
        return text

    def open(self, trajectory_id: str, placeholder: str, text: str) -> str | None:
        """The original value, or None when it does not open (another key, tampered)."""
        slot = (trajectory_id, placeholder, text)
        known = self._opened.get(slot)
        if known is not None:
            return known
        if not text.startswith(SEALED):
            return text  # written before values were sealed: read as it is
        try:
            raw = base64.urlsafe_b64decode(text[len(SEALED) :])
            value = self._aead.decrypt(raw[:_NONCE], raw[_NONCE:], f"{trajectory_id}\0{placeholder}".encode())
        except (InvalidTag, ValueError, binascii.Error):
            return None
        if len(self._opened) >= _CACHE:
            self._opened.clear()  # a cheap bound: values open again on demand
        self._opened[slot] = opened = value.decode()
        return opened

"""Crypto wallets' keys in what wallet tools print and take.

Bitcoin's keys are base58check, their own proof: a WIF key (`dumpprivkey`'s output, a
`dumpwallet` file's lines, `importprivkey`'s argument) and an extended private key (`xprv…`,
`tprv…`, alone or inside a descriptor) are taken where their checksum and version hold. The
literal `prv` leads the extended keys; a WIF key is read only where a tool puts one (a bare
base58 run of 51 or 52 characters would be a candidate in any base58 or base64 text).
Ethereum's keys are 64 hex digits, which a transaction's hash is as often: they are read where a
tool takes one (Foundry's `--private-key` without its `0x`, web3.py's `Account.from_key`,
Brownie's `accounts.add`, `npx hardhat vars set NAME KEY`) or a sentence names it (`the private
key is …`). A seed phrase is taken on the line after a notice naming it (`solana-keygen
new`'s, `cast wallet new-mnemonic`'s `Phrase:`) and where a library takes one (`fromPhrase(…)`);
a Solana keypair (64 bytes as a JSON array) after its file's name or the word `keypair`.
"""

from __future__ import annotations

import hashlib
import re

from router.privacy.detector import Detector
from router.privacy.home_secrets import _private_key, _seed_phrase

_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_DIGITS = {char: index for index, char in enumerate(_BASE58)}
B58 = "[1-9A-HJ-NP-Za-km-z]"
# Extended private keys' versions: BIP-32's mainnet and testnet, and the SLIP-132 ones
# (`yprv`, `zprv`, `uprv`, `vprv`, multisig `Yprv`, `Zprv`, `Uprv`, `Vprv`).
_EXTENDED = frozenset(
    bytes.fromhex(v)
    for v in (
        "0488ade4",
        "04358394",
        "049d7878",
        "044a4e28",
        "04b2430c",
        "045f18bc",
        "0295b005",
        "02aa7a99",
        "024285b5",
        "02575048",
    )
)
_HEX_KEY = r"((?:0x)?[0-9a-fA-F]{64})(?![0-9a-fA-F])"


def base58check(value: str) -> bytes | None:
    """The payload of a base58check string, or None where a character or the checksum is wrong."""
    data = _base58_bytes(value)
    if data is None or len(data) < 5:
        return None
    payload, checksum = data[:-4], data[-4:]
    return payload if hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4] == checksum else None


def _wif(value: str) -> bool:
    """A WIF private key: version 0x80 (mainnet) or 0xef (testnets), 32 bytes, 0x01 if compressed."""
    payload = base58check(value)
    return (
        payload is not None
        and payload[0] in (0x80, 0xEF)
        and (len(payload) == 33 or (len(payload) == 34 and payload[33] == 1))
    )


def _extended(value: str) -> bool:
    payload = base58check(value)
    return payload is not None and len(payload) == 78 and payload[:4] in _EXTENDED and payload[45] == 0


def _hex_key(value: str) -> bool:
    return _private_key(value if value.startswith("0x") else "0x" + value)


def _key_in_prose(value: str) -> bool:
    """64 hex digits, a WIF key, or a base58 64-byte secret (Solana's wallets' export)."""
    if len(value) in (64, 66):
        return all(char in "0123456789abcdefABCDEFx" for char in value) and _hex_key(value)
    if len(value) in (51, 52):
        return _wif(value)
    payload = _base58_bytes(value)
    return payload is not None and len(payload) == 64 and len(set(payload)) > 16


def _base58_bytes(value: str) -> bytes | None:
    """The bytes a base58 string writes (each leading `1` a zero byte), or None if it is not base58."""
    number = 0
    for char in value:
        digit = _DIGITS.get(char)
        if digit is None:
            return None
        number = number * 58 + digit
    return b"\0" * (len(value) - len(value.lstrip("1"))) + number.to_bytes((number.bit_length() + 7) // 8, "big")


def _keypair(value: str) -> bool:
    """64 numbers of 0 to 255, not one repeated (an array of zeros is a placeholder)."""
    numbers = re.findall(r"\d+", value)
    return len(numbers) == 64 and len(set(numbers)) > 16


_BYTE = r"[ \t]*(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])[ \t]*"

DETECTORS: tuple[Detector, ...] = (
    Detector(
        "PRIVATE_KEY",
        re.compile(rf"(?<![A-Za-z0-9])([xtyzuvYZUV]prv{B58}{{107,108}})(?![A-Za-z0-9])"),
        rb"[xtyzuvYZUV]prv[1-9A-HJ-NP-Za-km-z]{8}",
        validate=_extended,
        group=1,
        reach=110,
        lead=1,
        rule="extended-private-key",
        keyword_core=12,
    ),
    Detector(
        "PRIVATE_KEY",
        re.compile(rf"(?:\bimportprivkey[ \t]+[\"']?|\bdumpprivkey\b[^\n]{{0,120}}\n)({B58}{{51,52}})(?![A-Za-z0-9])"),
        rb"(?:importprivkey|dumpprivkey)",
        validate=_wif,
        group=1,
        reach=200,
        follows=True,
        rule="wif-private-key",
        keyword_core=13,
    ),
    Detector(
        "PRIVATE_KEY",
        # A `dumpwallet` file's key line: the key, its time, its kind, then `# addr=`.
        re.compile(rf"(?<![A-Za-z0-9])({B58}{{51,52}}) [0-9TZ:-]{{20}} [a-z]+=[^\n#]{{0,80}}# addr="),
        rb"# addr=",
        validate=_wif,
        group=1,
        lead=180,
        rule="wif-private-key",
        keyword_core=7,
    ),
    Detector(
        "PRIVATE_KEY",
        re.compile(
            r"(?:--private-key[ \t=]+|\bfrom_key\([ \t]*|\baccounts\.add\([ \t]*"
            r"|\bhardhat[ \t]+vars set[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]+)[\"'`]?" + _HEX_KEY
        ),
        rb"(?:--private-key|from_key\(|accounts\.add\(|vars set)",
        validate=_hex_key,
        group=1,
        reach=120,
        follows=True,
        rule="wallet-private-key",
        keyword_core=13,
    ),
    Detector(
        "PRIVATE_KEY",
        re.compile(
            r"(?i:\bprivate key)(?:[ \t]+(?:is|was)\b|[ \t]*[:=])[ \t]*[\"'`]?"
            rf"((?:0x)?[0-9a-fA-F]{{64}}|{B58}{{86,88}}|{B58}{{51,52}})(?![A-Za-z0-9])"
        ),
        rb"(?i)private key",
        validate=_key_in_prose,
        group=1,
        reach=110,
        follows=True,
        rule="wallet-private-key",
        keyword_core=11,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(
            # On the line after a notice naming a seed phrase, or `cast`'s `Phrase:` line.
            r"(?:(?:(?i:\b(?:seed|recovery|backup|mnemonic)[ \t]+phrase\b)[^\n]{0,100}:"
            r"|(?<![^\n])Phrase:)[ \t]*\r?\n[ \t]*"
            r"|\b(?:fromPhrase|fromMnemonic|mnemonicToSeed(?:Sync)?|mnemonicToAccount|mnemonicToEntropy)\([ \t]*[\"'`])"
            r"((?:[a-z]{3,8}[ \t]+){11,23}[a-z]{3,8})(?![a-z])"
        ),
        rb"(?:[Pp][Hh][Rr][Aa][Ss][Ee]|mnemonicTo|fromMnemonic)",
        validate=_seed_phrase,
        group=1,
        reach=420,
        follows=True,
        rule="seed-phrase",
        keyword_core=12,
    ),
    Detector(
        "PRIVATE_KEY",
        re.compile(
            rf"(?:\bid\.json|[Kk]eypair|\bsecretKey|\bsecret_key)\b[^\[\n]{{0,120}}\n?[^\[\n]{{0,40}}(\[(?:{_BYTE},){{63}}{_BYTE}\])"
        ),
        rb"(?:id\.json|[Kk]eypair|secretKey|secret_key)",
        validate=_keypair,
        group=1,
        reach=600,
        follows=True,
        rule="solana-keypair",
        keyword_core=10,
    ),
)

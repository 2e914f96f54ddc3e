"""Secrets of home automation and of crypto wallets, where the tool's own syntax, not a name
beside the value, says what it is.

Mosquitto's clients (`mosquitto_pub -P X`), Tasmota's console (`MqttPassword X`, `WebPassword X`,
`Password1 X`), ESPHome's API key (`key:` under `encryption:`); a wallet's private key where a
library or a tool takes one (`accounts: ['0x…']`, `new Wallet('0x…')`, `--private-key 0x…`), a
seed phrase after its label (twelve to twenty-four words), and a blockchain node provider's key
in its URL's path (`…alchemy.com/v2/KEY`, `…infura.io/v3/KEY`). A transaction's or a block's hash
is the same 64 hex digits: only the places that take a key read them.
"""

from __future__ import annotations

import re

from router.privacy.credentials import ARG, argument_span, command_password, command_rule
from router.privacy.detector import Detector

# Development chains' documented accounts (Hardhat's and Anvil's first two): public examples.
_EXAMPLE_KEYS = frozenset(
    {
        "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
        "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
    }
)
_SEED_LENGTHS = frozenset({12, 15, 18, 21, 24})


def _private_key(value: str) -> bool:
    """64 hex digits that are not one digit repeated or a documented development key."""
    low = value.lower()
    return low not in _EXAMPLE_KEYS and len(set(low[2:])) > 4


def _seed_phrase(value: str) -> bool:
    """A seed phrase's length in words (BIP-39: 12, 15, 18, 21 or 24), not one word repeated."""
    words = value.split()
    return len(words) in _SEED_LENGTHS and len(set(words)) > len(words) // 2


DETECTORS: tuple[Detector, ...] = (
    command_rule(
        "mosquitto-password",
        r"\bmosquitto_(?:pub|sub|rr)\b[^\n|;&]{0,200}?[ \t](?:-P|--pw)[ \t]+" + ARG,
        rb"mosquitto_(?:pub|sub|rr)",
        20,
    ),
    command_rule(
        # Tasmota's console and its `Backlog`: the command's name, a space, the value up to `;`.
        "tasmota-password",
        r"(?<![\w-])(?:(?:Mqtt|Web|Wifi|Ota)Password|Password[1-4])[ \t]+" + ARG,
        rb"(?:(?:Mqtt|Web|Wifi|Ota)Password|Password[1-4])[ \t]",
        20,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(r"(?m)^[ \t]*encryption:[ \t]*\r?\n[ \t]+key:[ \t]*" + ARG),
        rb"encryption:[ \t]*\r?\n[ \t]+key:",
        validate=command_password,
        group=0,
        reach=120,
        rule="esphome-api-key",
        keyword_core=40,
        value_span=argument_span,
    ),
    Detector(
        "PRIVATE_KEY",
        re.compile(
            r"(?:\baccounts[ \t]*:[ \t]*\[[ \t]*|\bnew[ \t]+(?:ethers\.)?Wallet\([ \t]*|\bprivateKeyToAccount\([ \t]*"
            r"|\bfromPrivateKey\([ \t]*|--private-key[ \t=]+)[\"'`]?(0x[0-9a-fA-F]{64})(?![0-9a-fA-F])"
        ),
        rb"(?:accounts[ \t]*:[ \t]*\[|Wallet\(|privateKeyToAccount\(|fromPrivateKey\(|--private-key[ \t=])",
        validate=_private_key,
        group=1,
        reach=80,
        follows=True,
        rule="wallet-private-key",
        keyword_core=24,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(
            r"(?i:\b(?:secret[ \t]+recovery[ \t]+phrase|recovery[ \t]+phrase|seed[ \t]+phrase|backup[ \t]+phrase"
            r"|mnemonic(?:[ \t]+phrase)?|seed[ \t]+words|wallet[ \t]+seed))[\"']?[ \t]*(?:[:=]|\bis\b)[ \t]*[\"']?"
            r"((?:[a-z]{3,8}[ \t]+){11,23}[a-z]{3,8})(?![a-z])"
        ),
        rb"(?i)(?:phrase|mnemonic|seed[ \t]+words|wallet[ \t]+seed)",
        validate=_seed_phrase,
        group=1,
        reach=240,
        follows=True,
        rule="seed-phrase",
        keyword_core=20,
    ),
    Detector(
        "API_KEY",
        re.compile(
            r"(?:\balchemy\.com/v2/|\binfura\.io/v3/|\bquiknode\.pro/|\brpc\.ankr\.com/[a-z_]{2,20}/)"
            r"([A-Za-z0-9_-]{20,64})(?![A-Za-z0-9_-])"
        ),
        rb"(?:alchemy\.com/v2/|infura\.io/v3/|quiknode\.pro/|rpc\.ankr\.com/)",
        group=1,
        reach=80,
        follows=True,
        rule="node-provider-key",
        keyword_core=20,
    ),
)

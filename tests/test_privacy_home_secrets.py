"""Secrets of home automation and crypto wallets (Mosquitto's `-P`, Tasmota's console, ESPHome's
API key, a wallet's private key where a library takes one, a seed phrase, a node provider's key
in its URL) and the set of forms that found them missing (benchmarks/privacy/later_homelab.py)."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect

KEY = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
TX = "0x88df016429689c079f3b2f6ad39fa052532c56795b733da78a91ebe6a713944b"


def test_the_homelab_forms_written_after_the_detectors() -> None:
    # Scored blind once: 69 of 87 values; rules since.
    from benchmarks.privacy import later_forms, later_homelab

    found, missed, misses = later_forms.score(3, later_homelab.FORMS)
    assert not missed["homelab"], misses
    assert found["homelab"] == 87


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("mosquitto_pub -h broker.local -u sensors -P 'Xq7-pw-Lr92k' -t home/porch -m on", "Xq7-pw-Lr92k"),
        ("mosquitto_sub -h broker.local --pw s3cretPW42 -t '#'", "s3cretPW42"),
        ("Backlog MqttHost 192.168.1.20; MqttUser tasmota; MqttPassword Tq83kLm2Zp; Restart 1", "Tq83kLm2Zp"),
        ("Backlog SSId1 home; Password1 wifiPass2024; WebPassword admin-9Qx", "wifiPass2024"),
        (
            'api:\n  encryption:\n    key: "yYx3Wq1cKf3pFsu0U0PqgH0D9ZK3CmL+1M9w2i9Tz8A="\n',
            "yYx3Wq1cKf3pFsu0U0PqgH0D9ZK3CmL+1M9w2i9Tz8A=",
        ),
        (f"networks: {{ sepolia: {{ url: RPC, accounts: ['{KEY}'] }} }}", KEY),
        (f"const wallet = new ethers.Wallet('{KEY}', provider);", KEY),
        (f"forge script Deploy.s.sol --rpc-url $RPC --private-key {KEY} --broadcast", KEY),
        (
            "seed phrase: wolf ankle ceiling actor tribe pledge motion verify oyster garlic mosquito uniform",
            "wolf ankle ceiling actor tribe pledge motion verify oyster garlic mosquito uniform",
        ),
        (
            "https://eth-mainnet.g.alchemy.com/v2/Q8f2kLw9Zp3Rt6Yx1Vb4Nm7Hc0Jd5Gs2",
            "Q8f2kLw9Zp3Rt6Yx1Vb4Nm7Hc0Jd5Gs2",
        ),
        ("https://mainnet.infura.io/v3/9aa3d95b3bc440fa88ea12eaa4456161", "9aa3d95b3bc440fa88ea12eaa4456161"),
    ],
)
def test_home_and_wallet_secrets_are_found(text: str, value: str) -> None:
    assert value in [f.value for f in detect(text)]


@pytest.mark.parametrize(
    "text",
    [
        f"Transaction {TX} was mined in block 19000000.",
        f'{{"hash": "{TX}", "status": "0x1"}}',
        # Hardhat's and Anvil's documented first account: a public example.
        "accounts: ['0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80']",
        "mosquitto_pub -h broker.local -P $MQTT_PASSWORD -t a -m b",
        "MqttPassword ${MQTT_PW}",
        "The seed phrase is twelve words long; write it down.",
        "mnemonic: test test test test test test test test test test test junk",
        "Set the Password reset link to expire.",
    ],
)
def test_home_and_wallet_look_alikes(text: str) -> None:
    kinds = ("SECRET_ASSIGNMENT", "API_KEY", "PRIVATE_KEY")
    assert [f for f in detect(text) if f.type in kinds] == []

"""Crypto wallets' keys in what wallet tools print and take (WIF and extended keys by their
base58check, hex keys where a tool takes one or a sentence names one, seed phrases after their
notice or in a library's call, a Solana keypair file) and the set of forms that found them
missing (benchmarks/privacy/later_wallets.py)."""

from __future__ import annotations

import pytest

from benchmarks.privacy.later_wallets import base58check as encode
from router.privacy.detect import detect
from router.privacy.wallet_secrets import base58check

KEY = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
TX = "88df016429689c079f3b2f6ad39fa052532c56795b733da78a91ebe6a713944b"
SECRET = bytes(range(7, 39))
WIF = encode(b"\x80" + SECRET + b"\x01")
TESTNET_WIF = encode(b"\xef" + SECRET)
XPRV = encode(bytes.fromhex("0488ade4") + bytes(9) + SECRET + b"\0" + SECRET)
TPRV = encode(bytes.fromhex("04358394") + bytes(9) + SECRET + b"\0" + SECRET)
XPUB = encode(bytes.fromhex("0488b21e") + bytes(9) + SECRET + b"\x02" + SECRET)
WORDS = "wolf ankle ceiling actor tribe pledge motion verify oyster garlic mosquito uniform"
ARRAY = "[" + ",".join(str((i * 37 + 11) % 256) for i in range(64)) + "]"


def test_the_wallet_forms_written_after_the_detectors() -> None:
    # Scored blind once: 12 of 57 values; rules since.
    from benchmarks.privacy import later_forms, later_wallets

    found, missed, misses = later_forms.score(3, later_wallets.FORMS)
    assert not missed["wallets"], misses
    assert found["wallets"] == 57


def test_base58check_reads_what_the_tools_write() -> None:
    assert base58check(WIF) == b"\x80" + SECRET + b"\x01"
    assert base58check(WIF[:-1] + ("2" if WIF[-1] != "2" else "3")) is None  # a checksum off
    assert base58check("0OIl") is None  # not base58
    # Bitcoin's documented WIF example decodes to its documented key.
    payload = base58check("5HueCGU8rMjxEXxiPuD5BDku4MkFqeZyd4dZ1jvhTVqvbTLvyTJ")
    assert payload is not None and payload.hex()[2:8] == "0c28fc"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (f"$ bitcoin-cli -testnet dumpprivkey tb1qexampleaddress\n{TESTNET_WIF}\n", TESTNET_WIF),
        (f'bitcoin-cli importprivkey {WIF} "cold" false', WIF),
        (f"{WIF} 2024-02-11T09:13:55Z reserve=1 # addr=bc1qexample hdkeypath=m/84h/0h/0h/0/0", WIF),
        (f'"desc": "wpkh({TPRV}/84h/1h/0h/0/*)#3s8d7f2a"', TPRV),
        (f"WALLET_XPRV={XPRV}\n", XPRV),
        (f"cast send 0xabc --private-key {KEY} --rpc-url $RPC", KEY),
        (f'acct = Account.from_key("0x{KEY}")', f"0x{KEY}"),
        (f'deployer = accounts.add("0x{KEY}")', f"0x{KEY}"),
        (f"npx hardhat vars set SEPOLIA_PRIVATE_KEY {KEY}", KEY),
        (f"from MetaMask, the private key is {KEY} - sign with it", KEY),
        (f"my private key: {WIF}", WIF),
        (f"Successfully generated a new mnemonic.\nPhrase:\n{WORDS}\n\nAccounts:", WORDS),
        (f"Save this seed phrase and your BIP39 passphrase to recover your new keypair:\n{WORDS}\n====", WORDS),
        (f'const wallet = ethers.Wallet.fromPhrase("{WORDS}");', WORDS),
        (f"const seed = bip39.mnemonicToSeedSync('{WORDS}');", WORDS),
        (f"$ cat ~/.config/solana/id.json\n{ARRAY}\n", ARRAY),
        (f"const payer = Keypair.fromSecretKey(Uint8Array.from({ARRAY}));", ARRAY),
    ],
)
def test_wallet_keys_are_found(text: str, value: str) -> None:
    assert value in [f.value for f in detect(text)], detect(text)


@pytest.mark.parametrize(
    "text",
    [
        f"Transaction 0x{TX} was mined; the private key stays in the keystore.",
        f"the private key is derived from the seed; block hash {TX}",
        # Anvil's documented first account: a public example.
        "cast send 0xabc --private-key ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
        f"extended public key: {XPUB}",
        f"WALLET_XPRV={XPRV[:-2]}zz",  # a checksum that does not hold
        f"bitcoin-cli dumpprivkey ADDRESS\n{WIF[:-1]}9",
        "Phrase:\nthe run ended at step five, see the logs above for more",
        "Key phrase:\nquick brown foxes jump over lazy dogs near tall green trees every warm sunny day",
        "keypair = " + "[" + ",".join(["0"] * 64) + "]",
        "weights: [" + ",".join(str(i % 200) for i in range(64)) + "]",
    ],
)
def test_look_alikes_are_not_keys(text: str) -> None:
    assert [f for f in detect(text) if f.type in ("PRIVATE_KEY", "SECRET_ASSIGNMENT")] == []

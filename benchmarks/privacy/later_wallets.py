"""Crypto wallets' keys in the forms a developer's agent meets them, written after the detectors
and scored blind once (a twenty-fifth credential set).

What the wallet tools print and take: Foundry's `cast` (a key after `--private-key` without its
`0x`, `cast wallet new`'s and `cast wallet new-mnemonic`'s output), Hardhat's configuration
variables (`npx hardhat vars set`), web3.py's `Account.from_key`, Brownie's `accounts.add`,
ethers' `Wallet.fromPhrase`, Truffle's HDWalletProvider mnemonic, Solana's `solana-keygen new`
output (the seed phrase on the line after its notice) and a keypair file (`id.json`: 64 bytes as
a JSON array), a base58 secret exported from a wallet app, Bitcoin Core's `dumpprivkey`,
`dumpwallet` and `importprivkey` (WIF keys: base58check), `listdescriptors true` (an extended
private key, `tprv…`, inside a descriptor) and an `xprv…` in an environment file; a key pasted
into a chat. Values are random (keys and checksums made as the tools make them); a
documented development key is none.

    python -m benchmarks.privacy.later_wallets [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, R, hexs, registrar, set_main
from benchmarks.privacy.later_homelab import _SEED_WORDS

FORMS: list[tuple[str, Callable[[], Form]]] = []
form = registrar("wallets", FORMS)

BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def base58check(payload: bytes) -> str:
    data = payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    number = int.from_bytes(data, "big")
    out = ""
    while number:
        number, digit = divmod(number, 58)
        out = BASE58[digit] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


def secret() -> bytes:
    return bytes(R.randrange(256) for _ in range(32))


def wif(testnet: bool = False) -> str:
    return base58check((b"\xef" if testnet else b"\x80") + secret() + b"\x01")


def extended(testnet: bool = False) -> str:
    version = bytes.fromhex("04358394" if testnet else "0488ade4")
    body = bytes([3]) + secret()[:4] + (0x80000000).to_bytes(4, "big") + secret() + b"\0" + secret()
    return base58check(version + body)


def phrase(words: int = 12) -> str:
    return " ".join(R.choice(_SEED_WORDS) for _ in range(words))


def address() -> str:
    return "0x" + hexs(40)


@form
def web3py_from_key() -> Form:
    key = "0x" + hexs(64)
    return f'from eth_account import Account\nacct = Account.from_key("{key}")\nprint(acct.address)\n', [key]


@form
def cast_send_bare_hex() -> Form:
    key = hexs(64)
    text = f'cast send {address()} "approve(address,uint256)" {address()} 1000 --private-key {key} --rpc-url $RPC'
    return text, [key]


@form
def cast_wallet_new() -> Form:
    key = "0x" + hexs(64)
    return f"Successfully created new keypair.\nAddress:     {address()}\nPrivate key: {key}\n", [key]


@form
def cast_new_mnemonic() -> Form:
    words, key = phrase(), "0x" + hexs(64)
    text = (
        f"Successfully generated a new mnemonic.\nPhrase:\n{words}\n\nAccounts:\n- Account 0:\n"
        f"Address:     {address()}\nPrivate key: {key}\n"
    )
    return text, [words, key]


@form
def solana_keygen_new() -> Form:
    words = phrase()
    rule = "=" * 80
    text = (
        "Generating a new keypair\n\nFor added security, enter a BIP39 passphrase\n\n"
        "NOTE! This passphrase improves security of the recovery seed phrase NOT the\n"
        "keypair file itself, which is stored as insecure plain text\n\nBIP39 Passphrase (empty for none):\n\n"
        f"Wrote new keypair to /home/dev/.config/solana/id.json\n{rule}\n"
        f"pubkey: {base58check(secret())[:44]}\n{rule}\n"
        f"Save this seed phrase and your BIP39 passphrase to recover your new keypair:\n{words}\n{rule}\n"
    )
    return text, [words]


@form
def solana_keypair_file() -> Form:
    array = "[" + ",".join(str(R.randrange(256)) for _ in range(64)) + "]"
    return f"$ cat ~/.config/solana/id.json\n{array}\n", [array]


@form
def wallet_app_export_chat() -> Form:
    key = base58check(secret() + secret())[:88]
    return f"ok here's the phantom private key for the devnet wallet: {key} - import it in the script", [key]


@form
def hardhat_vars_set() -> Form:
    key = hexs(64)
    return (
        f"$ npx hardhat vars set SEPOLIA_PRIVATE_KEY {key}\nThe configuration variable has been stored in ~/.config/hardhat-nodejs/vars.json",
        [key],
    )


@form
def brownie_accounts_add() -> Form:
    key = "0x" + hexs(64)
    return (
        f">>> from brownie import accounts\n>>> deployer = accounts.add(\"{key}\")\n>>> deployer\n<LocalAccount '{address()}'>",
        [key],
    )


@form
def ethers_from_phrase() -> Form:
    words = phrase()
    return f'const wallet = ethers.Wallet.fromPhrase("{words}");\nconsole.log(wallet.address);', [words]


@form
def truffle_mnemonic() -> Form:
    words = phrase()
    text = (
        "const HDWalletProvider = require('@truffle/hdwallet-provider');\n"
        f"const mnemonic = '{words}';\n\nmodule.exports = {{\n  networks: {{\n    sepolia: {{\n"
        "      provider: () => new HDWalletProvider(mnemonic, process.env.RPC_URL),\n      network_id: 11155111,\n"
    )
    return text, [words]


@form
def bitcoin_dumpprivkey() -> Form:
    key = wif(testnet=True)
    return f"$ bitcoin-cli -testnet dumpprivkey tb1q{hexs(38)}\n{key}\n", [key]


@form
def bitcoin_importprivkey() -> Form:
    key = wif()
    return f'bitcoin-cli importprivkey {key} "cold-storage" false', [key]


@form
def bitcoin_dumpwallet() -> Form:
    first, second = wif(), wif()
    text = (
        "# Wallet dump created by Bitcoin Core v25.0.0\n# * Created on 2024-03-01T12:00:00Z\n\n"
        f"{first} 2024-02-11T09:13:55Z reserve=1 # addr=bc1q{hexs(38)} hdkeypath=m/84h/0h/0h/0/0\n"
        f"{second} 2024-02-11T09:13:55Z change=1 # addr=bc1q{hexs(38)} hdkeypath=m/84h/0h/0h/1/0\n"
    )
    return text, [first, second]


@form
def bitcoin_listdescriptors() -> Form:
    key = extended(testnet=True)
    text = (
        '{\n  "wallet_name": "dev",\n  "descriptors": [\n    {\n'
        f'      "desc": "wpkh({key}/84h/1h/0h/0/*)#{hexs(8)}",\n'
        '      "timestamp": 1709294400,\n      "active": true,\n      "internal": false\n    }\n  ]\n}'
    )
    return text, [key]


@form
def xprv_env() -> Form:
    key = extended()
    return f"NETWORK=mainnet\nWALLET_XPRV={key}\nDERIVATION=m/84'/0'/0'\n", [key]


@form
def private_key_in_chat() -> Form:
    key = hexs(64)
    return f"I exported it from MetaMask, the private key is {key} — can you sign the tx with it?", [key]


def main(argv: list[str] | None = None) -> None:
    set_main("wallets", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()

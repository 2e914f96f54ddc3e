"""A labelled corpus: sensitive values embedded in realistic tool outputs, code, configs,
e-mails, JSON and logs, beside look-alikes that must not match. Deterministic per seed."""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Document:
    text: str
    truth: set[tuple[str, str]] = field(default_factory=set)


def _luhn_complete(prefix: str, length: int, rng: random.Random) -> str:
    body = prefix + "".join(rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    total = 0
    for index, char in enumerate(reversed(body)):
        number = int(char) * (2 if index % 2 == 0 else 1)
        total += number - 9 if number > 9 else number
    return body + str((10 - total % 10) % 10)


def card(rng: random.Random) -> str:
    prefix, length = rng.choice([("4", 16), ("51", 16), ("55", 16), ("2221", 16), ("34", 15), ("37", 15), ("6011", 16)])
    digits = _luhn_complete(prefix, length, rng)
    style = rng.choice(["plain", "space", "dash"])
    if style == "plain":
        return digits
    sep = " " if style == "space" else "-"
    groups = (
        [digits[i : i + 4] for i in range(0, len(digits), 4)]
        if length == 16
        else [digits[:4], digits[4:10], digits[10:]]
    )
    return sep.join(groups)


def bad_card(rng: random.Random) -> str:
    good = _luhn_complete("4", 16, rng)
    return good[:-1] + str((int(good[-1]) + 1) % 10)


_IBAN = {"DE": (8, 10), "GB": None, "FR": (10, 13), "NL": None, "ES": (20, 0), "IT": None}


def iban(rng: random.Random, valid: bool = True) -> str:
    country = rng.choice(["DE", "FR", "ES", "GB", "NL"])
    if country == "GB":
        bban = "".join(rng.choice(string.ascii_uppercase) for _ in range(4)) + "".join(
            rng.choice(string.digits) for _ in range(14)
        )
    elif country == "NL":
        bban = "".join(rng.choice(string.ascii_uppercase) for _ in range(4)) + "".join(
            rng.choice(string.digits) for _ in range(10)
        )
    else:
        length = {"DE": 18, "FR": 23, "ES": 20}[country]
        bban = "".join(rng.choice(string.digits) for _ in range(length))
    numeric = "".join(str(int(c, 36)) for c in bban + country + "00")
    check = 98 - int(numeric) % 97
    if not valid:
        check = (check + 1) % 97 or 2
    compact = f"{country}{check:02d}{bban}"
    if rng.random() < 0.5:
        return " ".join(compact[i : i + 4] for i in range(0, len(compact), 4))
    return compact


def ssn(rng: random.Random) -> str:
    return f"{rng.randint(1, 665):03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}"


def cn_id(rng: random.Random) -> str:
    body = f"{rng.randint(110000, 659999)}{rng.randint(1950, 2005)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{rng.randint(0, 999):03d}"
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    return body + "10X98765432"[sum(int(d) * w for d, w in zip(body, weights, strict=True)) % 11]


def dni(rng: random.Random) -> str:
    number = rng.randint(10_000_000, 99_999_999)
    return f"{number}{'TRWAGMYFPDXBNJZSQVHLCKE'[number % 23]}"


def email(rng: random.Random) -> str:
    user = rng.choice(["jane.doe", "j.smith", "ops+alerts", "li.wei", "m_garcia", "admin", "billing"])
    domain = rng.choice(["example.com", "corp.example.org", "mail.example.co.uk", "startup.io", "uni.example.edu"])
    return f"{user}{rng.randint(1, 99)}@{domain}"


def phone(rng: random.Random) -> str:
    return rng.choice(
        [
            f"+1 {rng.randint(201, 989)} {rng.randint(200, 999)} {rng.randint(1000, 9999)}",
            f"({rng.randint(201, 989)}) {rng.randint(200, 999)}-{rng.randint(1000, 9999)}",
            f"+44 20 {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}",
            f"+49 30 {rng.randint(10000000, 99999999)}",
            f"+86 138 {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}",
            f"{rng.randint(201, 989)}-{rng.randint(200, 999)}-{rng.randint(1000, 9999)}",
        ]
    )


def ipv4(rng: random.Random) -> str:
    return ".".join(str(rng.randint(1, 254)) for _ in range(4))


def ipv6(rng: random.Random) -> str:
    groups = [f"{rng.randint(0, 65535):x}" for _ in range(8)]
    return rng.choice(
        [":".join(groups), f"2001:db8::{groups[0]}:{groups[1]}", f"fe80::{groups[2]}:{groups[3]}:{groups[4]}"]
    )


def _token(rng: random.Random, n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def aws_key(rng: random.Random) -> str:
    return "AKIA" + _token(rng, 16, string.ascii_uppercase + string.digits)


def github_token(rng: random.Random) -> str:
    return rng.choice(["ghp_", "gho_", "ghs_"]) + _token(rng, 36)


def openai_key(rng: random.Random) -> str:
    return "sk-proj-" + _token(rng, 48, string.ascii_letters + string.digits + "_-")


def slack_token(rng: random.Random) -> str:
    return f"xoxb-{rng.randint(10**10, 10**11)}-{rng.randint(10**10, 10**11)}-{_token(rng, 24)}"


def google_key(rng: random.Random) -> str:
    return "AIza" + _token(rng, 35, string.ascii_letters + string.digits + "_-")


def jwt(rng: random.Random) -> str:
    def part(data: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part({'sub': rng.randint(1, 10**6), 'name': 'x'})}.{_token(rng, 43, string.ascii_letters + string.digits + '_-')}"


def private_key(rng: random.Random) -> str:
    body = "\n".join(_token(rng, 64, string.ascii_letters + string.digits + "+/") for _ in range(6))
    return f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"


def secret(rng: random.Random) -> str:
    return _token(rng, rng.randint(12, 24), string.ascii_letters + string.digits + "!#%&*")


GENERATORS: dict[str, Callable[[random.Random], str]] = {
    "CARD": card,
    "IBAN": iban,
    "US_SSN": ssn,
    "CN_RESIDENT_ID": cn_id,
    "ES_DNI": dni,
    "EMAIL": email,
    "PHONE": phone,
    "IP_ADDRESS": ipv4,
    "AWS_ACCESS_KEY": aws_key,
    "GITHUB_TOKEN": github_token,
    "OPENAI_KEY": openai_key,
    "SLACK_TOKEN": slack_token,
    "GOOGLE_API_KEY": google_key,
    "JWT": jwt,
    "PRIVATE_KEY": private_key,
    "SECRET_ASSIGNMENT": secret,
}


def lookalikes(rng: random.Random) -> list[str]:
    return [
        f"version {rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 99)}.{rng.randint(0, 999)}",
        f"released 20{rng.randint(10, 29)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} at {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}",
        f"order #{rng.randint(10**11, 10**12)}",
        f"card on file ends {bad_card(rng)} (rejected)",
        f"ref {iban(rng, valid=False)}",
        f"commit {_token(rng, 40, '0123456789abcdef')}",
        f"request id {_token(rng, 8, '0123456789abcdef')}-{_token(rng, 4, '0123456789abcdef')}-4{_token(rng, 3, '0123456789abcdef')}-a{_token(rng, 3, '0123456789abcdef')}-{_token(rng, 12, '0123456789abcdef')}",
        f"took {rng.randint(100, 99999)} ms; ts={rng.randint(10**12, 2 * 10**12)}",
        "password: ${DB_PASSWORD}",
        "api_key = os.environ['API_KEY']",
        "token: <redacted>",
        f"python3.11 -m pytest tests/test_{rng.randint(1, 9)}.py::test_x -q",
        f"coords {rng.uniform(-90, 90):.6f}, {rng.uniform(-180, 180):.6f}",
        f"matrix[{rng.randint(0, 9)}:{rng.randint(10, 99)}] and {{'a': {rng.randint(1, 9)}}}",
    ]


TEMPLATES: tuple[Callable[[dict[str, str], list[str]], str], ...] = (
    lambda v, f: "\n".join(
        [
            f"2026-11-29T10:{i:02d}:00Z INFO worker: {x}"
            for i, x in enumerate(
                [f"user {v['EMAIL']} logged in from {v['IP_ADDRESS']}", *f, f"charged card {v['CARD']}"]
            )
        ]
    ),
    lambda v, f: (
        "# .env\n"
        + "\n".join(
            [
                f"AWS_ACCESS_KEY_ID={v['AWS_ACCESS_KEY']}",
                f"GITHUB_TOKEN={v['GITHUB_TOKEN']}",
                f"OPENAI_API_KEY={v['OPENAI_KEY']}",
                f"DB_PASSWORD={v['SECRET_ASSIGNMENT']}",
                *[f"# {x}" for x in f],
            ]
        )
    ),
    lambda v, f: json.dumps(
        {
            "customer": {"email": v["EMAIL"], "phone": v["PHONE"], "iban": v["IBAN"], "ssn": v["US_SSN"], "notes": f},
            "slack": v["SLACK_TOKEN"],
        },
        indent=2,
    ),
    lambda v, f: (
        f"From: {v['EMAIL']}\nSubject: invoice\n\nHi, please wire to {v['IBAN']}.\nCall me on {v['PHONE']}.\n"
        + "\n".join(f)
        + f"\nID: {v['CN_RESIDENT_ID']} / DNI {v['ES_DNI']}\n"
    ),
    lambda v, f: (
        "import requests\n\nHEADERS = {'Authorization': 'Bearer "
        + v["JWT"]
        + "'}\n"
        + f"GOOGLE_KEY = '{v['GOOGLE_API_KEY']}'\n"
        + "\n".join(f"# {x}" for x in f)
        + "\n"
    ),
    lambda v, f: f"$ cat ~/.ssh/id_rsa\n{v['PRIVATE_KEY']}\n$ echo done\n" + "\n".join(f),
    lambda v, f: (
        "id,name,card,ip\n"
        + "\n".join(
            f"{i},row {x},{v['CARD'] if i == 1 else ''},{v['IP_ADDRESS'] if i == 2 else ''}" for i, x in enumerate(f)
        )
    ),
)

USED: tuple[tuple[str, ...], ...] = (
    ("EMAIL", "IP_ADDRESS", "CARD"),
    ("AWS_ACCESS_KEY", "GITHUB_TOKEN", "OPENAI_KEY", "SECRET_ASSIGNMENT"),
    ("EMAIL", "PHONE", "IBAN", "US_SSN", "SLACK_TOKEN"),
    ("EMAIL", "IBAN", "PHONE", "CN_RESIDENT_ID", "ES_DNI"),
    ("JWT", "GOOGLE_API_KEY"),
    ("PRIVATE_KEY",),
    ("CARD", "IP_ADDRESS"),
)


def generate(count: int, seed: int = 0) -> list[Document]:
    rng = random.Random(seed)
    documents = []
    for index in range(count):
        template = index % len(TEMPLATES)
        values = {kind: generator(rng) for kind, generator in GENERATORS.items()}
        if rng.random() < 0.3:
            values["IP_ADDRESS"] = ipv6(rng)
        fillers = rng.sample(lookalikes(rng), 5)
        text = TEMPLATES[template](values, fillers)
        truth = {(kind, values[kind]) for kind in USED[template]}
        documents.append(Document(text, truth))
    return documents

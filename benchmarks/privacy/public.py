"""An evaluation corpus built from sources this project did not write, split into a development
part (seed 0, used while tuning) and a held-out part (seed 1, used for acceptance only).

Labelled positives:
- Faker (MIT License; https://github.com/joke2k/faker) in 16 locales: e-mail, phone, card, IBAN,
  IPv4/IPv6 and each locale's national id. A value counts as a positive only if the library the
  field maintains accepts it (libphonenumber for phones, python-stdnum for ids and IBANs, Luhn
  for cards): Faker also prints fictional numbers that are not valid anywhere.
- Provider key formats as their vendors document them (AWS key ids with each prefix, GitHub,
  GitLab, Slack incl. `xapp-`/`xoxe-`, Stripe test/live/prod, OpenAI, Anthropic, Hugging Face,
  Google), JWTs (signed and unsigned), private key blocks (RSA, EC, OpenSSH, PGP) and generic
  secrets written as Flask's docs and `.env` files write them, with random bodies.
Every value is embedded in a line shaped like real tool output (JSON, CSV, logs, prose, shell).
Look-alikes in the same documents: versions, snowflake ids, timestamps, hashes, UUIDs, dates,
order numbers, code assigning calls to `token`, templates like `${DB_PASSWORD}`.

Real negative text (no labels; every finding is reported per MB, by kind): this repository's own
source, installed package sources (site-packages), logs under /var/log and captured tool output.
Files are split between the two parts by a hash of their path.
"""

from __future__ import annotations

import hashlib
import random
import string
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import phonenumbers
from stdnum import iban as std_iban
from stdnum import luhn

from benchmarks.privacy.corpus import _luhn_complete

LOCALES = {  # locale -> (phone region, id kind, stdnum module, Faker method, label)
    "en_US": ("US", "US_SSN", "us.ssn", "ssn", "SSN"),
    "en_CA": ("CA", "NATIONAL_ID", "ca.sin", "ssn", "SIN"),
    "en_GB": ("GB", None, None, None, None),
    "de_DE": ("DE", None, None, None, None),
    "fr_FR": ("FR", "NATIONAL_ID", "fr.nir", "ssn", "NIR"),
    "es_ES": ("ES", "NATIONAL_ID", "es.dni", "nif", "DNI"),
    "it_IT": ("IT", "NATIONAL_ID", "it.codicefiscale", "ssn", "codice fiscale"),
    "nl_NL": ("NL", "NATIONAL_ID", "nl.bsn", "ssn", "BSN"),
    "pl_PL": ("PL", "NATIONAL_ID", "pl.pesel", "ssn", "PESEL"),
    "sv_SE": ("SE", "NATIONAL_ID", "se.personnummer", "ssn", "personnummer"),
    "fi_FI": ("FI", "NATIONAL_ID", "fi.hetu", "ssn", "henkilötunnus"),
    "pt_BR": ("BR", "NATIONAL_ID", "br.cpf", "cpf", "CPF"),
    "en_IN": ("IN", "NATIONAL_ID", "in_.aadhaar", "aadhaar_id", "Aadhaar"),
    "zh_CN": ("CN", "NATIONAL_ID", "cn.ric", "ssn", "身份证"),
    "ja_JP": ("JP", None, None, None, None),
    "ko_KR": ("KR", "NATIONAL_ID", "kr.rrn", "ssn", "주민등록번호"),
    "es_MX": ("MX", "NATIONAL_ID", "mx.curp", "curp", "CURP"),
}


@dataclass
class Document:
    text: str
    truth: set[tuple[str, str]] = field(default_factory=set)  # (category, value)
    # Faker values the maintained libraries reject (fictional numbers): counted neither way.
    ignore: set[str] = field(default_factory=set)


def _valid_id(module: str, value: str) -> bool:
    import importlib

    try:
        return bool(importlib.import_module(f"stdnum.{module}").is_valid(value))
    except Exception:
        return False


def _phone_category(value: str, region: str) -> str | None:
    """PHONE_INTL / PHONE_NATIONAL if libphonenumber says the number is valid, else None."""
    try:
        number = phonenumbers.parse(value, region)
    except phonenumbers.NumberParseException:
        return None
    if not phonenumbers.is_valid_number(number):
        return None
    return "PHONE_INTL" if value.lstrip().startswith("+") else "PHONE_NATIONAL"


def _tok(rng: random.Random, n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _secrets(rng: random.Random) -> list[tuple[str, str, str]]:
    """(category, value, line holding it) for documented provider formats and generic secrets."""
    up = string.ascii_uppercase + string.digits
    aws = rng.choice(["AKIA", "ASIA", "ABIA", "ACCA", "A3T" + rng.choice(up)]) + _tok(rng, 16, up)
    pem = "\n".join(_tok(rng, 64, string.ascii_letters + string.digits + "+/") for _ in range(4))
    kind = rng.choice(["RSA ", "EC ", "OPENSSH ", "", "ENCRYPTED "])
    key = f"-----BEGIN {kind}PRIVATE KEY-----\n{pem}\n-----END {kind}PRIVATE KEY-----"
    pgp = f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{pem}\n=ab12\n-----END PGP PRIVATE KEY BLOCK-----"
    header = rng.choice(["eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", "eyJhbGciOiJub25lIn0"])
    body = "eyJ" + _tok(rng, 40, string.ascii_letters + string.digits + "_-")
    jwt = f"{header}.{body}." + (
        "" if "bm9uZ" in header else _tok(rng, 43, string.ascii_letters + string.digits + "_-")
    )
    generic = rng.choice(
        [
            _tok(rng, 24, string.ascii_letters + string.digits + "!#%&*"),
            f"{_tok(rng, 6)} {_tok(rng, 5)} {rng.randint(10, 99)}",  # with spaces
            "{" + _tok(rng, 10) + "}$" + _tok(rng, 6),  # with { } $
            _tok(rng, 32, "0123456789abcdef"),
        ]
    )
    prose = _tok(rng, 4, string.ascii_lowercase) + rng.choice("!#%") + str(rng.randint(10, 999)) + _tok(rng, 2)
    return [
        ("CLOUD_KEY", aws, f"aws_access_key_id = {aws}"),
        ("CLOUD_KEY", "AIza" + (g := _tok(rng, 35, string.ascii_letters + string.digits + "_-")), f"key=AIza{g}&q=1"),
        ("CODE_TOKEN", (t := rng.choice(["ghp_", "gho_", "ghs_", "ghu_"]) + _tok(rng, 36)), f"GH_TOKEN={t}"),
        ("CODE_TOKEN", (t := "glpat-" + _tok(rng, 20)), f'gitlab_token: "{t}"'),
        (
            "MESSAGING_TOKEN",
            (
                t := _slack_length(
                    rng.choice(["xoxb-", "xoxp-", "xoxe.xoxp-1-", "xapp-1-"])
                    + f"{rng.randint(10**10, 10**11)}-{_tok(rng, 24)}"
                )
            ),
            f"SLACK={t}",
        ),
        (
            "PAYMENT_KEY",
            (t := rng.choice(["sk_test_", "sk_live_", "sk_prod_", "rk_live_"]) + _tok(rng, 24)),
            f"stripe.api_key = '{t}'",
        ),
        (
            "AI_KEY",
            (t := "sk-proj-" + _tok(rng, 48, string.ascii_letters + string.digits + "_-")),
            f"OPENAI_API_KEY={t}",
        ),
        (
            "AI_KEY",
            (t := "sk-ant-api03-" + _tok(rng, 93, string.ascii_letters + string.digits + "_-") + "AA"),
            f"x-api-key: {t}",
        ),
        ("AI_KEY", (t := "hf_" + _tok(rng, 34, string.ascii_letters)), f"HF_TOKEN={t}"),
        ("JWT", jwt, f"Authorization: Bearer {jwt}"),
        ("PRIVATE_KEY", key, key),
        ("PRIVATE_KEY", pgp, pgp),
        (
            "SECRET_ASSIGNMENT",
            generic,
            rng.choice([f"SECRET_KEY = '{generic}'", f'"password": "{generic}"', f'DB_PASSWORD="{generic}"']),
        ),
        ("SECRET_ASSIGNMENT", prose, f"the password for the admin account is {prose} until friday"),
    ]


def _lookalikes(rng: random.Random) -> list[str]:
    return [
        f"Version {rng.randint(1, 20)}.{rng.randint(0, 9)}.{rng.randint(0, 99)}.{rng.randint(0, 999)} released",
        f"message {rng.randint(10**17, 10**18)} by user {rng.randint(10**17, 10**18)}",  # snowflakes
        f"2026-11-{rng.randint(10, 28)} 12:{rng.randint(10, 59)}:01 took {rng.randint(10**12, 10**13)} ns",
        f"commit {_tok(rng, 40, '0123456789abcdef')} order #{rng.randint(10**9, 10**10)}",
        f"self._cv_token = _cv_app.set(self); token = some_call({rng.randint(1, 9)})",
        "password: ${DB_PASSWORD} secret: {{ secret }} api_key: os.environ['KEY']",
        f"uuid {_tok(rng, 8, '0123456789abcdef')}-4b2c-8d3e-9f40-{_tok(rng, 12, '0123456789abcdef')}",
    ]


def _embed(rng: random.Random, label: str, value: str) -> str:
    return rng.choice(
        [
            f'{{"{label.lower()}": "{value}", "status": "active"}}',
            f"{label}: {value}",
            f"2026-11-29T10:0{rng.randint(0, 9)}:00Z INFO user {label.lower()}={value} updated",
            f"{rng.randint(1, 999)},{label.lower()},{value},ok",
        ]
    )


def _slack_length(token: str) -> str:
    """A Slack configuration token (`xoxe.xoxp-1-…`) as long as real ones (160 characters and
    more; a short one is a stand-in, and not found since 2026-12-04), its tail derived from the
    token itself so that the corpus's other values stay as they were drawn."""
    if not token.startswith("xoxe."):
        return token
    return token + hashlib.sha512(token.encode()).hexdigest()[:120]


def labelled(count: int, seed: int) -> Iterator[Document]:
    from faker import Faker

    rng = random.Random(seed)
    fakers = {}
    for locale in LOCALES:
        fakers[locale] = Faker(locale)
        fakers[locale].seed_instance(seed * 1000 + len(fakers))
    for _ in range(count):
        locale = rng.choice(list(LOCALES))
        fake = fakers[locale]
        region, id_kind, module, method, id_label = LOCALES[locale]
        document = Document("")
        lines: list[str] = []

        def add(
            category: str | None, value: str, line: str, document: Document = document, lines: list[str] = lines
        ) -> None:
            if category is not None:
                document.truth.add((category, value))
            else:
                document.ignore.add(value)
            lines.append(line)

        add("EMAIL", (email := fake.email()), _embed(rng, "email", email))
        phone = fake.phone_number()
        label = rng.choice(["phone", "tel", "Telefon", "téléphone", "teléfono", "telefono", "mobile", "电话", "電話"])
        line = _embed(rng, label, phone) if rng.random() < 0.5 else f"Please call {fake.first_name()} on {phone} today."
        add(_phone_category(phone, region), phone, line)
        prefix = rng.choice(["4", "51", "2221", "34", "6011", "3528", "2131", "62"])
        digits = _luhn_complete(prefix, 15 if prefix in ("34", "2131") else 16, rng)
        card = fake.credit_card_number() if rng.random() < 0.5 else digits
        if rng.random() < 0.4 and len(card) == 16:
            card = " ".join(card[i : i + 4] for i in range(0, 16, 4))
        add("CARD" if luhn.is_valid(card.replace(" ", "")) else None, card, _embed(rng, "card", card))
        account = fake.iban()
        if rng.random() < 0.4:
            account = std_iban.format(account)
        add("IBAN" if std_iban.is_valid(account) else None, account, _embed(rng, "iban", account))
        add("IP_ADDRESS", (ip := fake.ipv4_public()), f"connection from {ip} port {rng.randint(1024, 65535)}")
        add("IP_ADDRESS", (ip6 := fake.ipv6()), f"listen [{ip6}]:443")
        if module is not None and method is not None and id_kind is not None and id_label is not None:
            value = str(getattr(fake, method)())
            add(id_kind if _valid_id(module, value) else None, value, _embed(rng, id_label, value))
        for category, value, line in rng.sample(_secrets(rng), 4):
            add(category, value, line)
        lines.extend(rng.sample(_lookalikes(rng), 3))
        rng.shuffle(lines)
        document.text = "\n".join(lines)
        yield document


def _example(path: Path) -> bool:
    """The privacy code and its tests hold sensitive-looking examples on purpose."""
    return "privacy" in path.name or path.parent.name == "privacy"


def _split(path: str) -> int:
    return hashlib.blake2b(path.encode(), digest_size=2).digest()[0] % 2


def real_text(part: int, limit_bytes: int = 3 << 20) -> Iterator[tuple[str, str]]:
    """(source, text) of real negative text for this part (0: development, 1: held-out)."""
    root = Path(__file__).resolve().parents[2]
    sources: list[tuple[str, Callable[[], Iterator[Path]]]] = [
        (
            "repository source",
            lambda: (
                p for d in ("router", "judge", "tests") for p in sorted((root / d).rglob("*.py")) if not _example(p)
            ),
        ),
        (
            "site-packages",
            lambda: (
                p
                for name in ("pip", "httpx", "starlette", "redis", "yaml")
                for p in sorted(
                    (
                        Path(sys.prefix)
                        / "lib"
                        / f"python{sys.version_info.major}.{sys.version_info.minor}"
                        / "site-packages"
                        / name
                    ).rglob("*.py")
                )
            ),
        ),
        ("system logs", lambda: (p for p in sorted(Path("/var/log").rglob("*.log")) if p.is_file())),
    ]
    for source, paths in sources:
        used = 0
        for path in paths():
            if _split(str(path)) != part or used > limit_bytes:
                continue
            try:
                text = path.read_bytes()[:200_000].decode("utf-8", "replace")
            except OSError:
                continue
            used += len(text)
            yield source, text
    for command in (
        ["ls", "-la", "/usr/lib"],
        ["git", "-C", str(root), "log", "--stat", "-n", "300"],
        [sys.executable, "-m", "pip", "list"],
        ["ps", "aux"],
        ["df", "-h"],
    ):
        if _split(" ".join(command)) != part:
            continue
        try:
            output = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        yield "tool output", output

"""Credentials in the forms agents see them: a labelled evaluation with a development and a
held-out part.

The forms follow public documentation and examples (the MySQL, PostgreSQL, Redis, curl, Docker,
sshpass, netrc and pgpass manuals; `aws sts assume-role`, `aws iam create-access-key`, `aws
secretsmanager get-secret-value`, `az storage account keys list`, Azure SAS URLs and connection
strings, `gcloud auth print-access-token`; Kubernetes Secrets, kubeconfig, docker config, npmrc,
HTTP Authorization headers, GitHub's contents API); every value comes from this module's own
random generator (no Faker, nothing from the project's tests). Each item is labelled with the
secrets it holds and their category: `password`, `cloud`, `base64` (a secret wrapped in
base64) or `token`; negatives are the same forms holding placeholders, references, prompts and
look-alikes (ports, ids, usernames), which must not be findings.

The two parts differ in seed and in the names they use (key names, users, hosts: the
development part takes one half of each pool, the held-out part the other), so that tuning on
the development part cannot fit the held-out one's names. Detection was tuned on the
development part only; the held-out figures are the acceptance figures.

    python -m benchmarks.privacy.agent_forms [--part dev|heldout] [--items 600]
"""

from __future__ import annotations

import argparse
import base64
import collections
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from router.privacy.detect import detect

_SYMBOLS = "!#%&*+-=?@^_~"
_SYLLABLES = ("ka", "lo", "mi", "ter", "vor", "zan", "qu", "bri", "dex", "nol", "sap", "wen", "yor", "fin")


@dataclass
class Item:
    form: str
    text: str
    labels: list[tuple[str, str]] = field(default_factory=list)  # (category, value)


def _alnum(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))


def password(rng: random.Random) -> str:
    style = rng.randrange(3)
    if style == 0:  # memorable: syllables, digits, a symbol
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))).capitalize()
        return word + str(rng.randint(10, 9999)) + rng.choice(_SYMBOLS)
    if style == 1:
        return "".join(rng.choice(string.ascii_letters + string.digits + _SYMBOLS) for _ in range(rng.randint(10, 20)))
    return _alnum(rng, rng.randint(12, 24))


def _b64(raw: bytes | str) -> str:
    return base64.b64encode(raw.encode() if isinstance(raw, str) else raw).decode()


def _rand_bytes(rng: random.Random, n: int) -> bytes:
    return bytes(rng.randrange(256) for _ in range(n))


class Names:
    """Name pools, split between the parts (even positions: development, odd: held-out)."""

    POOLS: ClassVar[dict[str, list[str]]] = {
        "pw_key": [
            "password",
            "passwd",
            "db_password",
            "DB_PASS",
            "dbPassword",
            "adminPassword",
            "ADMINPASSWORD",
            "POSTGRES_PASSWORD",
            "MYSQL_ROOT_PASSWORD",
            "SMTP_PASSWORD",
            "userPassword",
            "DBPASS",
            "redis_password",
            "RABBITMQ_DEFAULT_PASS",
            "ldapBindPassword",
            "KEYSTORE_PASS",
        ],
        "token_key": [
            "accessToken",
            "api_key",
            "AUTH_TOKEN",
            "clientSecret",
            "apiKey",
            "refresh_token",
            "SECRET_KEY",
            "webhookSecret",
            "PRIVATE_TOKEN",
            "authToken",
            "bot_token",
            "signingSecret",
        ],
        "user": ["admin", "deploy", "app", "svc_backup", "root", "ci-bot", "report", "etl", "grafana", "ops"],
        "host": [
            "db.internal",
            "10.0.4.12",
            "pg-prod.example.net",
            "cache.svc.cluster.local",
            "mysql-01",
            "db-replica",
            "registry.example.com",
            "api.example.org",
            "warehouse.corp",
            "172.16.8.20",
        ],
        "secret_key": [
            "DB_PASSWORD",
            "api-key",
            "password",
            "token",
            "REDIS_PASSWORD",
            "client-secret",
            "SMTP_PASS",
            "auth-token",
        ],
    }

    def __init__(self, part: int) -> None:
        self.pools = {name: values[part::2] for name, values in self.POOLS.items()}

    def __call__(self, rng: random.Random, pool: str) -> str:
        return rng.choice(self.pools[pool])


Form = Callable[[random.Random, Names], Item]


def _pw_forms() -> list[Form]:
    def mysql(r: random.Random, n: Names) -> Item:
        pw = password(r).replace("'", "")
        bare = pw if pw.isalnum() else f"'{pw}'"  # as a shell needs it
        flag = r.choice([f"-p'{pw}'", f"-p{bare}" if r.random() < 0.5 else f"--password={bare}"])
        return Item(
            "mysql", f"$ mysql -h {n(r, 'host')} -u {n(r, 'user')} {flag} shop -e 'SELECT 1'", [("password", pw)]
        )

    def pgpassword(r: random.Random, n: Names) -> Item:
        pw = _alnum(r, r.randint(10, 18))
        return Item(
            "pgpassword", f"PGPASSWORD={pw} psql -h {n(r, 'host')} -p 5432 -U {n(r, 'user')} -d app", [("password", pw)]
        )

    def sshpass(r: random.Random, n: Names) -> Item:
        pw = password(r)
        return Item(
            "sshpass", f"sshpass -p '{pw}' ssh -p 2222 {n(r, 'user')}@{n(r, 'host')} uptime", [("password", pw)]
        )

    def redis_cli(r: random.Random, n: Names) -> Item:
        pw = _alnum(r, 16)
        return Item("redis-cli", f"redis-cli -h {n(r, 'host')} -p 6379 -a {pw} INFO replication", [("password", pw)])

    def curl_user(r: random.Random, n: Names) -> Item:
        pw = password(r).replace(":", "").replace("@", "")
        creds = f"{n(r, 'user')}:{pw}" if pw.isalnum() else f"'{n(r, 'user')}:{pw}'"  # as a shell needs it
        return Item("curl-u", f"curl -s -u {creds} https://{n(r, 'host')}/api/v1/health", [("password", pw)])

    def docker_login(r: random.Random, n: Names) -> Item:
        pw = _alnum(r, 20)
        return Item("docker-login", f"docker login -u {n(r, 'user')} -p {pw} {n(r, 'host')}", [("password", pw)])

    def flags(r: random.Random, n: Names) -> Item:
        pw = password(r)
        bare = pw if pw.isalnum() else f"'{pw}'"  # as a shell needs it
        line = r.choice(
            [
                f"mongodump --host {n(r, 'host')} --username {n(r, 'user')} --password '{pw}' --out /backup",
                f"redis-server /etc/redis.conf --requirepass {bare}",
                f"./manage.py createsuperuser --username {n(r, 'user')} --db-password {bare}",
            ]
        )
        return Item("password-flag", line, [("password", pw)])

    def history(r: random.Random, n: Names) -> Item:
        pw = _alnum(r, 14)
        lines = [
            f"  {500 + i}  {cmd}"
            for i, cmd in enumerate(
                ["cd /srv/app", "git pull", f"mysql -u {n(r, 'user')} -p{pw} -e 'show databases'", "ls -la", "exit"]
            )
        ]
        return Item("shell-history", "\n".join(lines), [("password", pw)])

    def netrc(r: random.Random, n: Names) -> Item:
        pw = password(r)
        text = r.choice(
            [
                f"machine {n(r, 'host')} login {n(r, 'user')} password {pw}",
                f"machine {n(r, 'host')}\n  login {n(r, 'user')}\n  password {pw}\n",
            ]
        )
        return Item("netrc", text, [("password", pw)])

    def pgpass(r: random.Random, n: Names) -> Item:
        pw, other = _alnum(r, 16), password(r).replace(":", "")
        text = f"# ~/.pgpass\n{n(r, 'host')}:5432:app:{n(r, 'user')}:{pw}\n*:*:*:replica:{other}"
        return Item("pgpass", text, [("password", pw), ("password", other)])

    def env(r: random.Random, n: Names) -> Item:
        pw = password(r)
        key = n(r, "pw_key")
        sep = r.choice(["=", ": ", " = "])
        quote = r.choice(["", '"'])
        return Item(
            "env/yaml/ini", f"APP_ENV=production\n{key}{sep}{quote}{pw}{quote}\nLOG_LEVEL=info", [("password", pw)]
        )

    def json_key(r: random.Random, n: Names) -> Item:
        pw = password(r)
        doc = {"host": n(r, "host"), "port": 5432, n(r, "pw_key"): pw, "pool": 10}
        return Item("json-key", json.dumps(doc, indent=r.choice([None, 2])), [("password", pw)])

    def terraform(r: random.Random, n: Names) -> Item:
        pw = password(r).replace('"', "")
        text = (
            f'resource "aws_db_instance" "main" {{\n  engine              = "postgres"\n'
            f'  username            = "{n(r, "user")}"\n  password            = "{pw}"\n}}'
        )
        return Item("terraform", text, [("password", pw)])

    def url(r: random.Random, n: Names) -> Item:
        pw = _alnum(r, 16)
        text = r.choice(
            [
                f"REDIS_URL=redis://:{pw}@{n(r, 'host')}:6379/0",
                f"DATABASE_URL=postgresql://{n(r, 'user')}:{pw}@{n(r, 'host')}:5432/app",
            ]
        )
        return Item("url", text, [("password", pw)])

    return [
        mysql,
        pgpassword,
        sshpass,
        redis_cli,
        curl_user,
        docker_login,
        flags,
        history,
        netrc,
        pgpass,
        env,
        json_key,
        terraform,
        url,
    ]


def _cloud_forms() -> list[Form]:
    def aws_sts(r: random.Random, n: Names) -> Item:
        secret = _b64(_rand_bytes(r, 30))
        session = _b64(_rand_bytes(r, 300))
        key_id = r.choice(
            ["[CLOUD_KEY_1]", "ASIA" + "".join(r.choice(string.ascii_uppercase + "234567") for _ in range(16))]
        )
        doc = {
            "Credentials": {
                "AccessKeyId": key_id,
                "SecretAccessKey": secret,
                "SessionToken": session,
                "Expiration": "2026-12-02T05:00:00+00:00",
            },
            "AssumedRoleUser": {
                "AssumedRoleId": "AROA3XFRBF23:" + n(r, "user"),
                "Arn": "arn:aws:sts::123456789012:assumed-role/deploy/" + n(r, "user"),
            },
        }
        labels = [("cloud", secret), ("cloud", session)] + ([("cloud", key_id)] if key_id.startswith("ASIA") else [])
        return Item("aws-sts", json.dumps(doc, indent=4), labels)

    def aws_iam(r: random.Random, n: Names) -> Item:
        secret = _b64(_rand_bytes(r, 30))
        doc = {
            "AccessKey": {
                "UserName": n(r, "user"),
                "AccessKeyId": "[CLOUD_KEY_2]",
                "Status": "Active",
                "SecretAccessKey": secret,
                "CreateDate": "2026-11-30T10:00:00+00:00",
            }
        }
        return Item("aws-iam", json.dumps(doc, indent=4), [("cloud", secret)])

    def aws_files(r: random.Random, n: Names) -> Item:
        secret = _b64(_rand_bytes(r, 30))
        text = r.choice(
            [
                f"[default]\naws_access_key_id = [CLOUD_KEY_1]\naws_secret_access_key = {secret}\nregion = eu-west-1",
                f"export AWS_ACCESS_KEY_ID=[CLOUD_KEY_1]\nexport AWS_SECRET_ACCESS_KEY={secret}",
            ]
        )
        return Item("aws-credentials", text, [("cloud", secret)])

    def secrets_manager(r: random.Random, n: Names) -> Item:
        pw = password(r).replace('"', "").replace("\\", "")
        inner = json.dumps({"username": n(r, "user"), "password": pw, "host": n(r, "host")})
        doc = {
            "ARN": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-AbCdEf",
            "Name": "prod/db",
            "SecretString": inner,
            "VersionStages": ["AWSCURRENT"],
        }
        return Item("secrets-manager", json.dumps(doc, indent=4), [("cloud", pw)])

    def az_keys(r: random.Random, n: Names) -> Item:
        keys = [_b64(_rand_bytes(r, 64)) for _ in range(2)]
        doc = [
            {"creationTime": "2026-01-01T00:00:00+00:00", "keyName": f"key{i + 1}", "permissions": "FULL", "value": key}
            for i, key in enumerate(keys)
        ]
        return Item("az-storage-keys", json.dumps(doc, indent=2), [("cloud", k) for k in keys])

    def az_conn(r: random.Random, n: Names) -> Item:
        key = _b64(_rand_bytes(r, 64))
        return Item(
            "azure-connection-string",
            f"AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=st{_alnum(r, 6).lower()};"
            f"AccountKey={key};EndpointSuffix=core.windows.net",
            [("cloud", key)],
        )

    def sas(r: random.Random, n: Names) -> Item:
        sig = _b64(_rand_bytes(r, 32)).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
        return Item(
            "azure-sas",
            f"https://st{_alnum(r, 6).lower()}.blob.core.windows.net/backups/db.bak?sv=2022-11-02"
            f"&ss=b&srt=o&sp=r&se=2026-12-31T00:00:00Z&spr=https&sig={sig}",
            [("cloud", sig)],
        )

    def gcloud(r: random.Random, n: Names) -> Item:
        token = "ya29.a0" + "".join(
            r.choice(string.ascii_letters + string.digits + "_-") for _ in range(r.randint(120, 200))
        )
        text = r.choice(
            [
                f"$ gcloud auth print-access-token\n{token}",
                f'curl -H "Authorization: Bearer {token}" https://storage.googleapis.com/storage/v1/b',
            ]
        )
        return Item("gcloud-token", text, [("cloud", token)])

    return [aws_sts, aws_iam, aws_files, secrets_manager, az_keys, az_conn, sas, gcloud]


_PEM = "-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\n"


def _pem(r: random.Random) -> str:
    body = _b64(_rand_bytes(r, 180))
    return _PEM.format(body="\n".join(body[i : i + 64] for i in range(0, len(body), 64)))


def _b64_forms() -> list[Form]:
    def k8s_secret(r: random.Random, n: Names) -> Item:
        pw = password(r)
        key = n(r, "secret_key")
        if r.random() < 0.5:
            text = (
                f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-secrets\ntype: Opaque\ndata:\n"
                f"  username: {_b64(n(r, 'user'))}\n  {key}: {_b64(pw)}\n"
            )
        else:
            text = json.dumps(
                {
                    "apiVersion": "v1",
                    "data": {"username": _b64(n(r, "user")), key: _b64(pw)},
                    "kind": "Secret",
                    "metadata": {"name": "app-secrets"},
                },
                indent=4,
            )
        return Item("k8s-secret", text, [("base64", _b64(pw))])

    def kubeconfig(r: random.Random, n: Names) -> Item:
        key = _b64(_pem(r))
        text = (
            f"users:\n- name: {n(r, 'user')}\n  user:\n    client-certificate-data: {_b64('-----BEGIN CERTIFICATE-----')}\n"
            f"    client-key-data: {key}\n"
        )
        return Item("kubeconfig", text, [("base64", key)])

    def tls(r: random.Random, n: Names) -> Item:
        key = _b64(_pem(r))
        text = f"apiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\ndata:\n  tls.crt: {_b64('-----BEGIN CERTIFICATE-----')}\n  tls.key: {key}\n"
        return Item("tls-secret", text, [("base64", key)])

    def dockerconfig(r: random.Random, n: Names) -> Item:
        user, pw = n(r, "user"), password(r)
        config = _b64(
            json.dumps({"auths": {n(r, "host"): {"username": user, "password": pw, "auth": _b64(f"{user}:{pw}")}}})
        )
        return Item("dockerconfigjson", f"data:\n  .dockerconfigjson: {config}\nkind: Secret", [("base64", config)])

    def basic(r: random.Random, n: Names) -> Item:
        encoded = _b64(f"{n(r, 'user')}:{password(r)}")
        text = r.choice(
            [
                f"GET /api HTTP/1.1\nHost: {n(r, 'host')}\nAuthorization: Basic {encoded}\nAccept: */*",
                f'curl -H "Authorization: Basic {encoded}" https://{n(r, "host")}/v2/_catalog',
            ]
        )
        return Item("basic-auth", text, [("base64", encoded)])

    def npmrc(r: random.Random, n: Names) -> Item:
        encoded = _b64(f"{n(r, 'user')}:{password(r)}")
        return Item(
            "npmrc",
            f"registry=https://npm.example.com/\n//npm.example.com/:_auth={encoded}\nalways-auth=true",
            [("base64", encoded)],
        )

    def api_file(r: random.Random, n: Names) -> Item:
        pw = password(r)
        content = _b64(f"# production settings\nDB_HOST={n(r, 'host')}\n{n(r, 'pw_key')}={pw}\nDEBUG=false\n")
        wrapped = "\n".join(content[i : i + 60] for i in range(0, len(content), 60)) + "\n"
        doc = {
            "name": ".env.production",
            "path": "deploy/.env.production",
            "size": 120,
            "type": "file",
            "content": wrapped,
            "encoding": "base64",
        }
        text = json.dumps(doc, indent=2)
        return Item("api-base64-file", text, [("base64", json.dumps(wrapped.strip())[1:-1])])

    return [k8s_secret, kubeconfig, tls, dockerconfig, basic, npmrc, api_file]


def _token_forms() -> list[Form]:
    def bearer(r: random.Random, n: Names) -> Item:
        token = _alnum(r, r.randint(24, 48))
        return Item(
            "bearer", f"curl -H 'Authorization: Bearer {token}' https://{n(r, 'host')}/v1/items", [("token", token)]
        )

    def key(r: random.Random, n: Names) -> Item:
        token = _alnum(r, 32)
        return Item(
            "token-key",
            json.dumps({n(r, "token_key"): token, "endpoint": f"https://{n(r, 'host')}"}),
            [("token", token)],
        )

    return [bearer, key]


def _negative_forms() -> list[Form]:
    texts: list[Callable[[random.Random, Names], str]] = [
        lambda r, n: f"mysql -h {n(r, 'host')} -u {n(r, 'user')} -p shop",
        lambda r, n: f'mysql -u {n(r, "user")} -p"$MYSQL_PWD" -P 3306',
        lambda r, n: f"PGPASSWORD=$PGPASS psql -h {n(r, 'host')} -p 5432 -U {n(r, 'user')}",
        lambda r, n: f"ssh -p 2222 {n(r, 'user')}@{n(r, 'host')}",
        lambda r, n: "docker run -d -p 8080:80 -p 8443:443 nginx:1.27",
        lambda r, n: f"redis-cli -h {n(r, 'host')} -p 6379 ping",
        lambda r, n: f"{n(r, 'pw_key')}: changeme",
        lambda r, n: f'{n(r, "pw_key")} = "<password>"',
        lambda r, n: f"{n(r, 'pw_key')}=${{{n(r, 'pw_key').upper()}}}",
        lambda r, n: f"{n(r, 'token_key')}: xxxxxxxxxxxx",
        lambda r, n: f"{n(r, 'pw_key')}: '********'",
        lambda r, n: "curl -H 'Authorization: Bearer $TOKEN' https://api.example.com",
        lambda r, n: json.dumps(
            {
                "UserId": "[CLOUD_KEY_3]",
                "Account": "123456789012",
                "Arn": f"arn:aws:iam::123456789012:user/{n(r, 'user')}",
            },
            indent=4,
        ),
        lambda r, n: json.dumps({"NextToken": _b64(json.dumps({"start": r.randint(1, 999)})), "Items": []}),
        lambda r, n: f"apiVersion: v1\nkind: ConfigMap\ndata:\n  LOG_LEVEL: info\n  HOST: {n(r, 'host')}\n",
        lambda r, n: (
            f"apiVersion: v1\nkind: Secret\ndata:\n  username: {_b64(n(r, 'user'))}\n  host: {_b64(n(r, 'host'))}\n"
        ),
        lambda r, n: json.dumps(
            {"content": _b64("# Project\n\nRun `make test` to check the build.\n" * 3), "encoding": "base64"}
        ),
        lambda r, n: f"sha256:{''.join(r.choice('0123456789abcdef') for _ in range(64))}  image digest",
        lambda r, n: f"max_tokens=4096 input_tokens={r.randint(1, 9999)} tokens_per_second=41.5",
        lambda r, n: json.dumps({"id": f"{r.getrandbits(64):x}", "keyName": "key1", "permissions": "READ"}),
    ]
    return [lambda r, n, t=t: Item("negative", t(r, n)) for t in texts]


FAMILIES = {
    "password": _pw_forms(),
    "cloud": _cloud_forms(),
    "base64": _b64_forms(),
    "token": _token_forms(),
    "negative": _negative_forms(),
}


def items(count: int, part: int) -> list[Item]:
    """`count` items per family of the part (0: development, 1: held-out)."""
    rng = random.Random(1000 + part)
    names = Names(part)
    return [rng.choice(forms)(rng, names) for forms in FAMILIES.values() for _ in range(count)]


def score(part: int, count: int) -> tuple[dict[str, list[int]], dict[str, int], list[tuple[str, str]]]:
    """Per category [caught, missed]; findings {tp, fp}; the missed (form, value) pairs."""
    recall: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    precision = {"tp": 0, "fp": 0}
    missed: list[tuple[str, str]] = []
    for item in items(count, part):
        findings = [f for f in detect(item.text) if f.type not in ("IP_ADDRESS", "EMAIL", "PHONE")]
        spans = []
        for category, value in item.labels:
            at = item.text.find(value)
            spans.append((at, at + len(value)))
            caught = any(f.start <= at and at + len(value) <= f.end for f in findings)
            recall[category][0 if caught else 1] += 1
            if not caught:
                missed.append((item.form, value))
        for finding in findings:
            hit = any(finding.start < end and start < finding.end for start, end in spans)
            precision["tp" if hit else "fp"] += 1
            if not hit:
                missed.append((item.form + " (false positive)", finding.value))
    return dict(recall), precision, missed


TARGETS = {"password": 0.90, "cloud": 0.95, "base64": 0.90, "token": 0.95}


def report(part: str, count: int, show_missed: bool = False) -> None:
    recall, precision, missed = score(1 if part == "heldout" else 0, count)
    print(f"agent forms, {part} part ({count} items a family, one negative family)")
    print(f"{'category':12} {'caught':>6} {'missed':>6} {'recall':>7}  target")
    caught_all = missed_all = 0
    for category, (caught, miss) in sorted(recall.items()):
        caught_all += caught
        missed_all += miss
        print(f"{category:12} {caught:>6} {miss:>6} {caught / (caught + miss):>7.3f}  {TARGETS.get(category, 0):.2f}")
    total = caught_all + missed_all
    tp, fp = precision["tp"], precision["fp"]
    print(f"{'credentials':12} {caught_all:>6} {missed_all:>6} {caught_all / total:>7.3f}  0.95")
    print(f"precision (findings on labels / all findings): {tp}/{tp + fp} = {tp / (tp + fp):.3f} (target 0.95)")
    if show_missed:
        for form, value in missed[:60]:
            print(f"  missed: {form}: {value[:60]!r}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--part", choices=["dev", "heldout"], default="heldout")
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--missed", action="store_true", help="list what was missed (development part only)")
    args = parser.parse_args(argv)
    report(args.part, args.items, args.missed and args.part == "dev")


if __name__ == "__main__":
    main()

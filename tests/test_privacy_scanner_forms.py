"""Forms of secrets that secret scanners' public test suites write and Tandem's rules missed as
classes: tokens known by a prefix at other lengths than the documented one, flags and names
glued or dotted, a Dockerfile's `ENV` with a space, XML names in the plural, declarations with a
default, lists under a plural name, PuTTY key files, literals an environment lookup falls back
on, map pairs, C++ strings, parallel assignments, unsigned JWTs, unquoted passwords of symbols
and more webhook URLs. Every value here is made up for these tests; placeholders, references and
look-alikes stay non-findings."""

from __future__ import annotations

import json

import pytest

from router.privacy.detect import detect_uncached

_FCM = (
    "AAAAze30aJc:APA91b4qn91DU6vBFiai8MyDu7U8WKNQwGtYMFxyB1PkNyg7nwDkQuyAegOBjl_uD6g5Twsrx5lT0BVGxWP5bZ"
    "czrDHUWQS_0o9wnOh4iM0Mk8KsXm1NWZ-H34xGqazCIMSe-LWGzRBkSs5yzQ"
)

# (text, the secret it holds: a finding must overlap it)
FOUND = [
    # Tokens by a vendor's prefix, bodies longer than the documented length included.
    ("newrelic:\n  insert: NRII-9jYg7SjjPvttfbfMLZuPjII4OoaQmzBinnpy\n", "NRII-9jYg7SjjPvttfbfMLZuPjII4OoaQmzBinnpy"),
    ("NR_ADMIN='NRAA-ff8c48981335307b30cc252f50aa1B2'", "NRAA-ff8c48981335307b30cc252f50aa1B2"),
    ("rest: NRRA-fac42187a2492c944c3f1e5a41541c4568ab08bd4c", "NRRA-fac42187a2492c944c3f1e5a41541c4568ab08bd4c"),
    (
        "cma: CFPAT-CLSdU0c6vlcOhpRsIXH6qEzVFSU7zT6kSyOdEpbNf2MnLib3",
        "CFPAT-CLSdU0c6vlcOhpRsIXH6qEzVFSU7zT6kSyOdEpbNf2MnLib3",
    ),
    (
        "Authorization: lin_oauth_db7ba53a1b88aa8a29c1124a32e3d2cdae9f333b92bb5491daf3f7c1e200673a",
        "lin_oauth_db7ba53a1b88aa8a29c1124a32e3d2cdae9f333b92bb5491daf3f7c1e200673a",
    ),
    (
        "MAPBOX=sk.eyJ1IjoiYWNtZSIsImEiOiJjbHgxMjM0In0.puCbMDIH0BXrP3Ix8WSq8p",
        "sk.eyJ1IjoiYWNtZSIsImEiOiJjbHgxMjM0In0.puCbMDIH0BXrP3Ix8WSq8p",
    ),
    ("flw: FLWSECK-d681fdadb3d1c237115ca8252d074a33-X", "FLWSECK-d681fdadb3d1c237115ca8252d074a33-X"),
    ("mws: amzn.mws.7600f176-f16c-1be5-1d92-826b6641f4c4", "amzn.mws.7600f176-f16c-1be5-1d92-826b6641f4c4"),
    ("gp: skapi_cert_zh0KMvzcHWN4SaVyT7DZ3jHOO1s7t3w6", "skapi_cert_zh0KMvzcHWN4SaVyT7DZ3jHOO1s7t3w6"),
    (
        "the upload credential pypi-AgENdGVzdC5weXBpLm9yZwDWIKv2JMvEzHmWQl3s5oswRmff2pvsoflkyeYTMsGo0R4FJpy02YS was rotated",
        "pypi-AgENdGVzdC5weXBpLm9yZwDWIKv2JMvEzHmWQl3s5oswRmff2pvsoflkyeYTMsGo0R4FJpy02YS",
    ),
    (
        "postman: PMAK-a82c822b3d6e01be3a785801-7545c62f3d5c10acc50bd9d406394bd5670fdbc9",
        "PMAK-a82c822b3d6e01be3a785801-7545c62f3d5c10acc50bd9d406394bd5670fdbc9",
    ),
    (
        "mail: SG.Wol5yDCJTsulRGvERlRi1u.8QjGKXoe7Z6jCuJDp6ELDQUnIrPUDmQouzsIxEdqXBTCyaFP",
        "SG.Wol5yDCJTsulRGvERlRi1u.8QjGKXoe7Z6jCuJDp6ELDQUnIrPUDmQouzsIxEdqXBTCyaFP",
    ),
    (f'{{"to": "{_FCM}", "notification": {{"title": "build done"}}}}', _FCM),
    (
        "tf: tUPKfCCBfF.atlasv1.gZnUQjaRf7u5KE0k6DBPG02oD3BEGc3O43yfMvvcVNDUCnMyXnNTTlur2ZujqhbaEG",
        "tUPKfCCBfF.atlasv1.gZnUQjaRf7u5KE0k6DBPG02oD3BEGc3O43yfMvvcVNDUCnMyXnNTTlur2ZujqhbaEG",
    ),
    ("edge: akab-Qw3rTy7uI9oP1aSd-Fg4hJk6lZx8cV2bN", "akab-Qw3rTy7uI9oP1aSd-Fg4hJk6lZx8cV2bN"),
    # Flags glued to the word before the secret's, and curl's proxy credentials.
    ("curl --tlspassword Vq7-mT2k9Lp https://api.internal", "Vq7-mT2k9Lp"),
    ("curl --proxy-tlspassword 'Nw4!zR8qYc' https://api.internal", "Nw4!zR8qYc"),
    ("deploy-tool --apitoken Qz8mK3vL9pX2w --region eu", "Qz8mK3vL9pX2w"),
    ("curl -sS \\\n  --proxy-user ops:Hb6^kW3pLz \\\n  https://api.internal", "Hb6^kW3pLz"),
    ("curl -U ops:Hb6^kW3pLz -x http://proxy:3128 https://api.internal", "Hb6^kW3pLz"),
    # Key names dotted (a properties file) or glued to a name in capitals.
    ("payments.api.key=Rk2vT9qLm4Xc8Zp1Wb6N", "Rk2vT9qLm4Xc8Zp1Wb6N"),
    ("aws.secret.key = Rk2vT9qLm4Xc8Zp1Wb6N/Ha3e", "Rk2vT9qLm4Xc8Zp1Wb6N/Ha3e"),
    ("- MAPSKEY=Rk2vT9qLm4Xc8Zp1Wb6Nq", "Rk2vT9qLm4Xc8Zp1Wb6Nq"),
    # A Dockerfile's ENV with a space between the name and the value.
    ("FROM alpine:3.20\nENV REGISTRY_TOKEN Pz8kW2mQ4vLx7Tn3Rb\nRUN make\n", "Pz8kW2mQ4vLx7Tn3Rb"),
    ("ENV DB_PASSWORD Qm7#x9Lv2!", "Qm7#x9Lv2!"),
    # XML elements: a passphrase, names in the plural.
    ("<signing>\n  <passphrase>Tr4v!s0n-92</passphrase>\n</signing>", "Tr4v!s0n-92"),
    ("<legacy_passwords>Wd8$kq2Lm</legacy_passwords>", "Wd8$kq2Lm"),
    # A declaration's default in JSON (CloudFormation's Parameters).
    (
        '{"Parameters": {"AdminPassword": {\n  "Type": "String",\n  "Default": "Kp3!vZ8qWn"\n}}}',
        "Kp3!vZ8qWn",
    ),
    # Items of a list under a plural name.
    ("fallback_passwords:\n  - 'Hy6%qT2mXe'\n  - Lr9*wB4nZs\n", "Hy6%qT2mXe"),
    ("fallback_passwords:\n  - 'Hy6%qT2mXe'\n  - Lr9*wB4nZs\n", "Lr9*wB4nZs"),
    ('{"api_keys": [\n  "Jw5pXr8TqL2mZc7Vb4Nk",\n  "Ua3sYd6GhF9jKl2Qw8Er"\n]}', "Ua3sYd6GhF9jKl2Qw8Er"),
    # A PuTTY key file's private lines.
    (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: ops\nPublic-Lines: 1\n"
        "AAAAC3NzaC1lZDI1NTE5AAAAIPq7Zx2Lm9Wc4Rt6Yb8Nd3Kf5Hg1Js0Qa7Ew\nPrivate-Lines: 1\n"
        "AAAAIFz3Wq8Lp2Mx7Rc5Vb9Nk4Ht6Jd1Gs0Ya8Ue2Io3Pa\nPrivate-MAC: 4c1f0e9d8b7a6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d\n",
        "AAAAIFz3Wq8Lp2Mx7Rc5Vb9Nk4Ht6Jd1Gs0Ya8Ue2Io3Pa",
    ),
    # The literal an environment lookup falls back on, in typed and macro declarations.
    ('val API_TOKEN: String = System.getenv("API_TOKEN") ?: "Gm3kQz8vLw2Xr7Tp5Nb9"', "Gm3kQz8vLw2Xr7Tp5Nb9"),
    (
        'static const char *api_token = getenv("API_TOKEN") ? getenv("API_TOKEN") : "Gm3kQz8vLw2Xr7Tp5Nb9";',
        "Gm3kQz8vLw2Xr7Tp5Nb9",
    ),
    ("define('API_SECRET', getenv('API_SECRET') ?: 'Gm3kQz8vLw2Xr7Tp5Nb9');", "Gm3kQz8vLw2Xr7Tp5Nb9"),
    ("API_TOKEN = ENV['API_TOKEN'] || 'Gm3kQz8vLw2Xr7Tp5Nb9'", "Gm3kQz8vLw2Xr7Tp5Nb9"),
    ('var apiKey = Environment.GetEnvironmentVariable("API_KEY") ?? "Gm3kQz8vLw2Xr7Tp5Nb9";', "Gm3kQz8vLw2Xr7Tp5Nb9"),
    # Map pairs: Kotlin's `to`, Scala's `->`.
    ('val headers = mapOf("auth_token" to "Fq2Wx8Lm5Zp3Vr9Kt")', "Fq2Wx8Lm5Zp3Vr9Kt"),
    ('val headers = Map("api_key" -> "Fq2Wx8Lm5Zp3Vr9Kt")', "Fq2Wx8Lm5Zp3Vr9Kt"),
    # C++ strings constructed or assigned with the literal.
    ('std::string db_password("Xn4$Lq8zWm");', "Xn4$Lq8zWm"),
    ('QString apiToken{"Xn4Lq8zWmT2pRv"};', "Xn4Lq8zWmT2pRv"),
    ('session_secret.assign("Xn4$Lq8zWm");', "Xn4$Lq8zWm"),
    # Parallel assignments: the second name a secret's.
    ('user, password = "deploy", "Zk7!mQ2xWp"', "Zk7!mQ2xWp"),
    ('clientID, clientSecret := "web-app", "Zk7mQ2xWpL9v"', "Zk7mQ2xWpL9v"),
    # A JWT with no signature part (the claims hold who it is for).
    (
        "the claims eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJvcHMtYm90Iiwic2NvcGUiOiJhZG1pbiJ9 came unsigned",
        "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJvcHMtYm90Iiwic2NvcGUiOiJhZG1pbiJ9",
    ),
    # An unquoted password whose brackets do not nest.
    ("DB_PASSWORD=k8]Pq(3x{Lm)", "k8]Pq(3x{Lm)"),
    ("redis_pass: w{Q7)z[Kp2}", "w{Q7)z[Kp2}"),
    ("smtp_password_main := R(t5}Yq]8w", "R(t5}Yq]8w"),
    # Webhook URLs: Zapier's catch hooks, Office 365's older connector URLs, Discord's shorter tokens.
    (
        "notify: https://hooks.zapier.com/hooks/catch/4821937/b7q2kxm/",
        "https://hooks.zapier.com/hooks/catch/4821937/b7q2kxm/",
    ),
    (
        "url: https://outlook.office.com/webhook/5f2c9a1e-7b3d-4e8f-a6c2-9d1b3e5f7a2c@0c8e4a6b-2d1f-4b3a-9e7c-5a2d8f6b1e4c/"
        "IncomingWebhook/8c2e4a6b0d1f3e5a7c9b2d4f6a8c0e1b/3a5c7e9b-1d2f-4a6c-8e0b-2c4e6a8d0f1b",
        "https://outlook.office.com/webhook/5f2c9a1e-7b3d-4e8f-a6c2-9d1b3e5f7a2c@",
    ),
    ("https://discord.com/api/webhooks/1190358247716655104/Qx7-Lm2pZk9RwT4vBn8c", "Qx7-Lm2pZk9RwT4vBn8c"),
]

# Placeholders, references, public values and look-alikes of these forms.
NOT_FOUND = [
    "NRII-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "nr_browser: NRJS-4c9a2e7b1d3f5a6c8e0",
    "CFPAT-EXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLE",
    "map: pk.eyJ1IjoiYWNtZSIsImEiOiJjbHgxMjM0In0.puCbMDIH0BXrP3Ix8WSq8p",
    "flw_public: FLWPUBK-d681fdadb3d1c237115ca8252d074a33-X",
    "curl --tlspassword https://api.internal/health",
    "git clone --bypass Zq81abc",
    "llm --max-tokens 1024 --maxtokens 2048",
    "cache.key=Rk2vT9qLm4Xc8Zp1Wb6N",
    "PRIMARYKEY=Rk2vT9qLm4Xc8Zp1Wb6N",
    "MONKEY=banana HOTKEY=ctrl+shift+k",
    "payments.api.key=${PAYMENTS_API_KEY}",
    "FROM alpine\nENV REGISTRY_TOKEN $REGISTRY_TOKEN\nENV REGISTRY_TOKEN {{ registry_token }}\nENV TOKEN_URL https://id.internal/token\n",
    "<legacy_passwords>\n  <item>${OLD}</item>\n</legacy_passwords>",
    '{"DBPassword": {"Type": "String", "Default": "changeme"}}',
    "special_tokens:\n  - '<s>'\n  - '</s>'\n  - '<pad>'\n",
    "passwords:\n  - DB_PASSWORD\n  - ${ADMIN_PASSWORD}\n",
    "secrets:\n  - db_password_2\n  - api_token_v3\n",
    'base_url = os.environ["BASE_URL"]\nprint("Gm3kQz8vLw2Xr7Tp5Nb9")\n',
    'val host: String = System.getenv("HOST") ?: "Gm3kQz8vLw2Xr7Tp5Nb9"',
    'listOf("password" to "username")',
    'std::string password(getenv("DB_PASSWORD"));',
    "a, token = fetch_token(), refresh()",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ",
    'password = get_password(cfg["db"])',
    "password_pattern: ^(?=.*[a-z])(?=.*\\d)$",
    "token = build({a: [b]})",
    "see https://discord.com/api/webhooks/1190358247716655104 for the webhook's settings",
]


@pytest.mark.parametrize(("text", "secret"), FOUND)
def test_the_secret_is_found(text: str, secret: str) -> None:
    start = text.index(secret)
    end = start + len(secret)
    findings = detect_uncached(text)
    assert any(f.start < end and f.end > start for f in findings), [(f.rule, f.value) for f in findings]


@pytest.mark.parametrize("text", NOT_FOUND)
def test_no_finding(text: str) -> None:
    assert [(f.rule, f.value) for f in detect_uncached(text)] == []


@pytest.mark.parametrize(("text", "secret"), FOUND)
def test_the_secret_is_found_in_a_json_tool_result(text: str, secret: str) -> None:
    wrapped = json.dumps({"output": text})
    escaped = json.dumps(secret)[1:-1]
    start = wrapped.index(escaped)
    end = start + len(escaped)
    findings = detect_uncached(wrapped)
    assert any(f.start < end and f.end > start for f in findings), [(f.rule, f.value) for f in findings]


@pytest.mark.parametrize("text", NOT_FOUND)
def test_no_finding_in_a_json_tool_result(text: str) -> None:
    assert [(f.rule, f.value) for f in detect_uncached(json.dumps({"output": text}))] == []

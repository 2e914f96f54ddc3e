"""Keys of services no provider rule knows, found by the name they are given (`…_key`,
`…Key`, a log's `Key=`, a URL's `?key=`), secrets passed as a call's arguments, numbered and
subscripted secret names, AI services' prefixed keys; and the look-alikes that are no secrets.
Forms as trufflehog's detector tests write them (AGPL-3.0, read as data by
`benchmarks.privacy.trufflehog_patterns`); the values are this file's own."""

from __future__ import annotations

import json

import pytest

from router.privacy.detect import detect

MIXED = "jfbda4Nfkws0Nx2sgE6rc5RDz3kwzXJeZJxQEIJj"
SHORTER = "YRxVEArDAVslJRmHGrkge2gAGEPw"
HEX = "754470b5e2a8175c2e75c65454fa61f1"
LOWER = "up21pvqrpnn0l1gwvnk9zhpjdc2b3tzi"
UUID = "0321d727-5db2-4d23-9e79-0162d42b290e"
SHA256 = "f5e458a064e088bcdcaa7ec3e1ffb1f7662dfd848a31bc63bb2039a999bdc958"


def _values(text: str) -> set[str]:
    return {f.value for f in detect(text)}


def _credentials(text: str) -> set[str]:
    return {f.value for f in detect(text) if f.type in ("SECRET_ASSIGNMENT", "AI_KEY", "API_KEY", "CLOUD_KEY")}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (f'api:\n  base_url: "https://api.example.com/v1"\n  cloudconvert_key: "{MIXED}"\n', MIXED),
        (f'{{"test_secrets": {{"getemails_key": "{LOWER}"}}}}', LOWER),
        (f'  "godaddyKey": "{SHORTER}",', SHORTER),
        (f'func main() {{\n\tboostnoteKey := "{HEX}"\n}}', HEX),
        (f"SALESFORCE_KEY1={MIXED}", MIXED),
        (f"[INFO] Sending request to the API\n[DEBUG] Using Key={LOWER}\n", LOWER),
        (f'url := "https://api.example.com/v1/users?key={LOWER}"', LOWER),
        (f"GET /v1/user?format=json&key={UUID} HTTP/1.1", UUID),
        (f"https://download.example.com/geoip?edition_id=City&license_key={SHORTER}&suffix=tar.gz", SHORTER),
        (f"typeform_token1 = '{MIXED}'", MIXED),
        (f"os.environ[\"OPENAI_API_KEY\"] = '{HEX}'", HEX),
        (f"process.env['SERVICE_TOKEN'] = \"{MIXED}\";", MIXED),
        (f'req.Header.Set("Beamer-Api-Key", "{SHORTER}")', SHORTER),
        (f'os.Setenv("DEPLOY_TOKEN", "{MIXED}")', MIXED),
        (f"headers.put('X-Secret', '{HEX}');", HEX),
        (f"SECRET_KEY_BASE={HEX}{HEX}", HEX + HEX),  # Rails' secret, named at the start
    ],
)
def test_a_key_named_for_what_it_is_is_found(text: str, value: str) -> None:
    assert value in _credentials(text)
    # The same line inside a JSON tool result: found as written there.
    assert value in _credentials(json.dumps({"output": text}))


@pytest.mark.parametrize(
    "text",
    [
        f'cache_key: "{MIXED}"',
        f'"primaryKey": "{SHORTER}"',
        f'publicKey = "{MIXED}"',
        f'"partition_key": "{HEX}"',
        '"bucket_key": "SalesResults-1.2"',
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        f"Cache restored from key: Linux-node-{SHA256}",  # `key:` is a map's field, not a secret's
        f"  - key: node-role.kubernetes.io/{LOWER}",
        '{"Key": "photos/2024/img_0042.jpg", "Size": 52311}',  # an object listing's field
        f"object key={SHA256} size=4096",  # a digest under a bare `key=`: an object's
        f"lock key={UUID} held",
        "I PhoneStatusBar: addNotification key=0|com.example.chat|4097|null|10112",
        "items.sort(key=lambda item: item.priority_level_2)",
        "monkey=Banana1234567890ab donkey=Carrot9876543210cd",
        'for name in ("edge-password", "query-secret", "probe-token"):',
        'config.get("password", "default")',
        'cache.set("session_key", "a1b2c3d4e5f6a7b8")',  # a call's key that names no secret
        'pick("monkey", "Banana1234567890")',
        '"token": "xoxp-572370529330-573807301142-572331691188-####################"',
    ],
)
def test_a_look_alike_is_no_secret(text: str) -> None:
    assert _credentials(text) == set()


@pytest.mark.parametrize(
    "key",
    [
        "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",
        "xai-k4bIwKJM0ZBXOtrS0cIOwGguv671HszFBUah4BmvHk29DhBJ7cMtxxAHRzjhu5kEZCqvsKbtI73r81B1",
        "r8_I08bSufRUMhJzxl9qXsB086zsemJvf0p9MWft",
        "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",
        "pcsk_dsxm6_lg2eTZZz8xJLJrRsxu43HhwbyAz1BSvt4eCEFbkJu7GUNsuc6V6zauj9oWJ1Yqg",
        "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",
        "sk_f9424986a1b8aa479ee43ddab035ae0358102900733e8935",
        "fc-85b588b955adb7157f219deb98d5e03c",
    ],
)
def test_an_ai_service_key_is_found_by_its_prefix_anywhere(key: str) -> None:
    findings = detect(f"client = Client({key!r})\nprint('ready')")
    assert [(f.type, f.value) for f in findings] == [("AI_KEY", key)]
    # A stand-in in the same shape is not one.
    stand_in = key[: key.index("_" if "_" in key[:5] else "-") + 1] + "x" * (len(key) - 5)
    assert not [f for f in detect(f"KEY={stand_in}") if f.type == "AI_KEY"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (f"twitch token - '{LOWER}'", LOWER),
        (f"Here is the API key - {MIXED}", MIXED),
        (f"the access key is {SHORTER}, rotate it monthly", SHORTER),
        (f"Your token was {MIXED}.", MIXED),
        (f"webex token — {HEX}", HEX),
        (f'license key is now "{UUID}"', UUID),
    ],
)
def test_a_token_named_in_a_sentence_is_found(text: str, value: str) -> None:
    """A key's or token's name, then ` - `, `is` or `was`, then a value that looks generated."""
    assert value in _credentials(text)
    assert value in _credentials(json.dumps({"output": text}))


@pytest.mark.parametrize(
    "text",
    [
        "the token is stored in the vault and rotated by the operator",
        "token - see the runbook for how to rotate it",
        f"next token - {MIXED}",  # a page's token
        f"pagination token is {MIXED}",
        "the secret is out: everyone knows",
        "API key is missing-or-invalid-for-this-account",
    ],
)
def test_a_sentence_about_a_token_is_no_secret(text: str) -> None:
    assert not _credentials(text)

"""Secrets in tool output as agents receive it wrapped: a tool's JSON output inside another JSON
string (an MCP result: its quotes escaped twice), JSON lines after a line of text or among log
lines (a value after an escaped line break), and a Twilio auth token passed by position beside
its account SID."""

from __future__ import annotations

import orjson
import pytest

from router.privacy.detect import detect

PASSWORD = "dJ_MrxbeSby9"
SECRET_KEY = "q8Ht3mZ0vR7pL2xK9wN4bF6yC1sD5gJ0aQ3eT7uW"
TOKEN = "ya29.a0AfB_byD3vR7pL2xK9wN4bF6yC1sD5gJ0aQ3eT7uWq8Ht3mZ0"
TWILIO = "b915bd2c2fd9c4a72227c6c9c2185998"


def mcp(output: dict[str, object]) -> str:
    """A tool's JSON output as an MCP server returns it: JSON text inside a JSON string."""
    return orjson.dumps({"content": [{"type": "text", "text": orjson.dumps(output).decode()}]}).decode()


KAFKA = (
    "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
    f'username="svc-orders" password="{PASSWORD}";\n'
)
CASES = {
    "mcp, a Kafka client's config printed": (mcp({"stdout": KAFKA, "exit_code": 0}), PASSWORD),
    "mcp, aws sts output": (
        mcp({"Credentials": {"AccessKeyId": "ASIA4RT7QWE9XZP2LMN3", "SecretAccessKey": SECRET_KEY}}),
        SECRET_KEY,
    ),
    "a JSON document after a line of text": (
        'Output:\n{"stdout": "$ gcloud auth print-access-token\\n' + TOKEN + '\\n", "exit_code": 0}',
        TOKEN,
    ),
    "JSON log lines": (
        '{"level": "info", "msg": "refreshed"}\n{"level": "debug", "msg": "token:\\n' + TOKEN + '"}\n',
        TOKEN,
    ),
    "Twilio's client by position": (f'client = Client("AC1d6830405f2e9268cee6d84894960554", "{TWILIO}")', TWILIO),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_secret_in_wrapped_output_is_found(name: str) -> None:
    text, value = CASES[name]
    found = detect(text)
    assert any(value in f.value or (len(f.value) > 8 and f.value.strip('"\\') in value) for f in found), found


LOOK_ALIKES = {
    "source with dict lines holding line breaks": '    {"role": "user", "content": "hi\\nthere"},\n    {"x": 1}\n',
    "JSON log lines without secrets": '{"level": "info", "msg": "started\\nport 8080"}\n{"level": "info", "msg": "ok"}\n',
    "a list of Twilio SIDs": '["AC1d6830405f2e9268cee6d84894960554", "AC2d6830405f2e9268cee6d84894960555"]',
    "mcp output without secrets": mcp({"stdout": 'name="orders" replicas="3"\nstatus="ok"\n', "exit_code": 0}),
}


@pytest.mark.parametrize("name", list(LOOK_ALIKES))
def test_wrapped_output_without_secrets_has_no_finding(name: str) -> None:
    assert detect(LOOK_ALIKES[name]) == []


# A password holding a quote, as a JSON document writes it (`\"` inside the value).
QUOTED_PASSWORDS = ['p@ss"w0rd!x9', 'Tr0ub4dor"&3', 'a"b"c-91xZq', 'k7#"Qm!2vL']


@pytest.mark.parametrize("password", QUOTED_PASSWORDS)
@pytest.mark.parametrize("wrap", ["document", "nested", "code"])
def test_a_password_holding_a_quote_is_found_whole(password: str, wrap: str) -> None:
    if wrap == "document":
        text = orjson.dumps({"db": {"host": "db.internal", "password": password}}).decode()
    elif wrap == "nested":
        text = orjson.dumps({"stdout": orjson.dumps({"password": password}).decode() + "\n"}).decode()
    else:
        text = "password = " + orjson.dumps(password).decode() + "\n"
    assert [unescaped(f.value) for f in detect(text)] == [password], (text, detect(text))


def unescaped(value: str) -> str:
    """A finding's value as the JSON that wrote it (once or twice) means it; a rule's own
    quotes around it (gitleaks' `hashicorp-tf-password` takes them) dropped."""
    value = value.removeprefix('"').removesuffix('"')
    while "\\" in value:
        value = str(orjson.loads('"' + value + '"'))
    return value


def test_escaped_quotes_around_words_still_close_values() -> None:
    """Quotes escaped around names and values (`\\"a\\":\\"b\\"`) open and close them as before."""
    text = orjson.dumps({"stdout": '{"user":"svc","password":"Zq8kLm2xT9","mode":"ro"}'}).decode()
    assert [unescaped(f.value) for f in detect(text)] == ["Zq8kLm2xT9"]

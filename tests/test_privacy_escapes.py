"""Values inside tool-call arguments (JSON text in JSON) are scanned and redacted as the tool reads
them, decoded: a value followed by an escape never reaches the cloud in clear."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import orjson

from benchmarks.privacy.corpus import generate
from benchmarks.privacy.public import labelled
from router.privacy import detect as detection
from router.privacy.redact import Redactor, argument_strings
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

MakeGateway = Callable[..., GatewayServer]
PASSWORD, API_KEY, QUOTED = "S3cr3t-Pa55w0rd!", "q8Zr2LmX7vTp4N", "Xk9#mQ2vL7pz"
LONG_EMAIL = "firstname.lastname.billing@example.com"  # 26 characters before the `@`
# Written by hand so that each value is followed by an escape: \n, \t, \" and \u00e9.
ARGUMENTS = (
    '{"command": "export DB_PASSWORD=' + PASSWORD + '\\n./deploy.sh",'
    ' "env": "API_KEY=' + API_KEY + '\\tNEXT=1",'
    ' "mysql": "mysql --password=\\"' + QUOTED + '\\" -h db",'
    ' "note": "mail ' + LONG_EMAIL + '\\u00e9 now"}'
)
HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": "deploy the app"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": ARGUMENTS}}],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "deployed"},
]


def _forms(value: str) -> list[bytes]:
    """How a value could appear in the bytes sent: plain, JSON-escaped, escaped twice."""
    once = orjson.dumps(value)[1:-1]
    twice = orjson.dumps(once.decode())[1:-1]
    return [value.encode(), once, twice]


def test_arguments_are_scanned_decoded() -> None:
    assert argument_strings(ARGUMENTS) == [
        "command",
        f"export DB_PASSWORD={PASSWORD}\n./deploy.sh",
        "env",
        f"API_KEY={API_KEY}\tNEXT=1",
        "mysql",
        f'mysql --password="{QUOTED}" -h db',
        "note",
        f"mail {LONG_EMAIL}é now",
    ]
    found = {f.value for text in argument_strings(ARGUMENTS) for f in detection.detect(text)}
    assert found == {PASSWORD, API_KEY, QUOTED, LONG_EMAIL}
    assert argument_strings("not json: token=abc") == ["not json: token=abc"]


def test_redact_route_sends_no_escaped_value_in_clear(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "cloud", "privacy": "redact"}})
    response = client.post(
        f"{server.url}/v1/chat/completions",
        json={"model": "tandem", "messages": HISTORY},
        headers={"X-Session-ID": "esc"},
    )
    assert response.status_code == 200
    received = cloud.received[0]
    for value in (PASSWORD, API_KEY, QUOTED, LONG_EMAIL):
        for form in _forms(value):
            assert form not in received.raw, (value, form)
    # Byte for byte: the arguments re-encoded from the redacted decoded strings.
    expected = orjson.dumps(
        {
            "command": "export DB_PASSWORD=[SECRET_ASSIGNMENT_1]\n./deploy.sh",
            "env": "API_KEY=[SECRET_ASSIGNMENT_2]\tNEXT=1",
            "mysql": 'mysql --password="[SECRET_ASSIGNMENT_3]" -h db',
            "note": "mail [EMAIL_1]é now",
        }
    ).decode()
    sent = received.body["messages"]
    assert sent[1]["tool_calls"][0]["function"]["arguments"] == expected
    assert sent[0] == HISTORY[0] and sent[2] == HISTORY[2]
    detail = client.get(f"{server.url}/v1/trajectories/esc").json()
    assert detail["privacy"]["seen"] == {"SECRET_ASSIGNMENT": 3, "EMAIL": 1}
    assert detail["privacy"]["exposed"] == {} and detail["records"][0]["redacted"] == 4


def test_block_route_refuses_a_quoted_password_in_arguments(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "cloud", "privacy": "block"}})
    arguments = '{"cmd": "psql --password=\\"' + QUOTED + '\\""}'
    messages = [
        HISTORY[0],
        {
            **HISTORY[1],
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "sh", "arguments": arguments}}],
        },
        HISTORY[2],
    ]
    response = client.post(f"{server.url}/v1/chat/completions", json={"model": "tandem", "messages": messages})
    assert response.status_code == 403 and "SECRET_ASSIGNMENT" in response.json()["error"]["message"]
    assert not cloud.received


def test_redactor_replaces_values_in_keys_too() -> None:
    redactor = Redactor({LONG_EMAIL: "[EMAIL_1]"})
    out, count = redactor.arguments(orjson.dumps({LONG_EMAIL: "owner"}).decode())
    assert (out, count) == ('{"[EMAIL_1]":"owner"}', 1)


EDGE_CASES = [
    "contact abcdefghijklmnopqrstu.vwxyz@example.com now",
    "x" * 20 + "@example.com",
    "a.very.long.local.part.with.many.dots.in.it.for.sure@sub.example.org",
    "y" * 64 + "@example.com and " + "z" * 65 + "@example.com",
    "postgresql+psycopg2://user:pa55word@db.internal:5432/app",
    "fe80::1ff:fe23:4567:890a and 1:2:3:4:5:6:7::",
    "card 4111 1111 1111 1111 1111 1111 1111 and " + "4" * 300,
    "+1 415 555 2671, (415) 555-2671, 415.555.2671",
    "token = " + "Ab1" * 90,
    # Labels of national ids with and without a number after them (the label-only detectors'
    # gate: a run of eight digits or more, spaces, dots or hyphens within): every separator.
    "SSN, SIN, BSN, PESEL, CPF, TFN, NHS and DNI are the labels; none has a number here",
    "ssn: 078-05-1120; sin 046 454 286; bsn 1112.22.333; pesel 44051401359; tfn 123 456 782",
    "NHS number 943-476-5919 and NHS number 943 476 5919, Steuer-ID 12 345 678 903",
    "CPR 070761-4285, fødselsnummer 010190 12345, CNP 1800101221144, My Number 1234 5678 9012",
    "SSN:\n078051120 (next line) and SSN 07805112 (short) and SSN 0780511200000 (long)",
]


def test_fast_and_slow_paths_find_the_same_values() -> None:
    assert detection._ENGINE is not None, "hyperscan is a dependency: the fast path must be there"
    # Generated tool output, Faker records in 17 locales (non-ASCII: the byte-to-character offset
    # mapping) and the edge cases above.
    texts = [d.text for d in generate(300, 11)] + [d.text for d in labelled(60, 5)] + EDGE_CASES
    for text in texts:
        fast = [(f.type, f.value, f.start) for f in detection.detect(text)]
        slow = [(f.type, f.value, f.start) for f in detection._detect_all(text)]
        assert fast == slow, text[:200]
    assert [f.value for f in detection.detect(EDGE_CASES[0])] == ["abcdefghijklmnopqrstu.vwxyz@example.com"]


def test_letters_json_escaped_as_ascii_are_read_as_letters() -> None:
    # Python's json.dumps writes `Fernández` as `Fern\u00e1ndez`: a name, an e-mail address or a
    # street read only up to the escape sent its rest to the cloud.
    record = {
        "author": "Maria Fernández",
        "email": "jürgen.müller@bücher.de",
        "street": "12 Åsgatan",
        "note": "it’s 20 °C",  # escaped too, but no letters: nothing changes there
    }
    text = orjson.dumps(record).decode()  # UTF-8, as APIs write it
    escaped = json.dumps(record)  # ASCII only, as Python writes it
    assert "\\u00e1" in escaped
    people = frozenset({"person", "address"})
    for written in (text, escaped):
        found = {(f.type, f.value) for f in detection.detect(written, people)}
        kinds = {kind for kind, _ in found}
        assert {"PERSON", "EMAIL", "ADDRESS"} <= kinds, (written, found)
    by_kind = {f.type: f.value for f in detection.detect(escaped, people)}
    assert by_kind["PERSON"] == "Maria Fern\\u00e1ndez"
    assert by_kind["EMAIL"] == "j\\u00fcrgen.m\\u00fcller@b\\u00fccher.de"
    assert by_kind["ADDRESS"] == "12 \\u00c5sgatan"
    # Redacted whole, and restored byte for byte.
    redactor = Redactor({value: f"[{kind}_1]" for kind, value in by_kind.items()})
    redacted, count = redactor.text(escaped)
    assert count == 3 and "Fern" not in redacted and "sgatan" not in redacted
    assert redactor.restore_text(redacted) == escaped


def test_an_escaped_backslash_before_u_is_no_letter() -> None:
    # `\\u00e1` is a backslash and the text `u00e1`, not `á`.
    text = '{"path": "C:\\\\u00e1bc\\\\Maria", "user": "Maria Fern\\u00e1ndez"}'
    found = {f.value for f in detection.detect(text, frozenset({"person"})) if f.type == "PERSON"}
    assert "Maria Fern\\u00e1ndez" in found
    assert not any("u00e1bc" in value for value in found)


def test_a_text_of_many_escaped_letters_is_read_in_linear_time() -> None:
    # A non-Latin script written ASCII-only is an escape a letter (`\u0416…`): each escape's
    # check of the backslashes before it once copied the text before it (quadratic).
    import time

    from router.privacy.escaped_letters import with_letters

    text = json.dumps({"note": "Жанна " * 40_000})  # ~1.4 MB, 200,000 escapes
    started = time.process_time()
    found = with_letters(text, lambda view: [])
    assert found == [] and time.process_time() - started < 2.0
    assert with_letters('"C:\\\\u0416"', lambda view: []) is None  # an escaped backslash, no letter

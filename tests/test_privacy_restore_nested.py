"""Values put back inside JSON text that tool-call arguments hold (a JSON file a tool writes):
escaped once per string they stand in, so that the file the agent writes holds the real value
and stays JSON; text that merely holds quotes (a shell line, Markdown, code) is one level, as
before. Whole answers, streams cut anywhere, and through the engine."""

from __future__ import annotations

import orjson
import pytest

from router.privacy.json_depth import Depths, escaped
from router.privacy.redact import Redactor, StreamRestorer
from router.result import Answer, Stream
from router.settings import Settings
from tests.inprocess import drain, engine_settings, events, in_process

# A password with a quote and a backslash, as `export` lines hold it (found by the default rules).
PASSWORD = 'Kx9"mQ\\2vL7p'
TASK = {"role": "user", "content": f"Deploy with this: export PGPASSWORD='{PASSWORD}'"}
HOLDER = "[SECRET_ASSIGNMENT_1]"


def json_file(value: str) -> str:
    """Tool-call arguments that write a pretty-printed JSON file holding `value`."""
    content = orjson.dumps({"db": {"user": "app", "password": value}}, option=orjson.OPT_INDENT_2).decode()
    return orjson.dumps({"path": "config.json", "content": content}).decode()


def depth_at_end(text: str) -> int:
    depths = Depths()
    depths.feed(text)
    return depths.here()


@pytest.mark.parametrize(
    ("text", "levels"),
    [
        ('{"a": ', 0),
        ('{"a": "', 1),
        ('{"a": "x", "b": 2}', 0),
        ('{"path": "a.json", "content": "{\\"password\\": \\"', 2),
        ('{"content": "{\\n  \\"db\\": {\\"password\\": \\"', 2),
        ('{"content": "[1, 2.5e3, true, null, \\"', 2),
        ('{"content": "{\\"done\\": \\"x\\", \\"n\\": 1} and more', 1),
        ('{"content": "{\\"inner\\": \\"{\\\\\\"deep\\\\\\": \\\\\\"', 3),
        # Quotes in text that is no JSON: one level, as before.
        ('{"command": "echo \\"', 1),
        ('{"content": "[link](https://x.example) \\"', 1),
        ('{"content": "config = {\\"password\\": \\"', 1),
        ('{"content": "{\\"k\\": 123 x \\"', 1),
        ("not JSON at all", 0),
    ],
)
def test_depth_counts_the_strings_a_point_stands_in(text: str, levels: int) -> None:
    assert depth_at_end(text) == levels
    # Fed in pieces (a stream), cut anywhere, the reading is the same.
    for cut in range(1, len(text)):
        depths = Depths()
        depths.feed(text[:cut])
        depths.here()
        depths.feed(text[cut:])
        assert depths.here() == levels, cut


def test_a_long_run_of_digits_that_is_no_json_is_read_at_once() -> None:
    # No token is split to try another reading: a pathological run costs one pass.
    assert depth_at_end('{"content": "{\\"k\\": ' + "1" * 20_000 + ' x \\"') == 1


def test_escaped_writes_a_value_as_deep_as_asked() -> None:
    assert escaped(PASSWORD, 1) == 'Kx9\\"mQ\\\\2vL7p'
    assert orjson.loads('"' + escaped(PASSWORD, 2) + '"') == escaped(PASSWORD, 1)


def test_a_value_inside_a_json_file_a_tool_writes_is_escaped_for_both_levels() -> None:
    redactor = Redactor({PASSWORD: HOLDER})
    restored = redactor.restore_text(json_file(HOLDER), json_escaped=True)
    written = orjson.loads(restored)
    assert orjson.loads(written["content"]) == {"db": {"user": "app", "password": PASSWORD}}
    # The file keeps the model's layout: only the placeholder changed.
    assert written["content"] == orjson.loads(json_file(HOLDER))["content"].replace(HOLDER, escaped(PASSWORD, 1))
    # One level where the text holding it is no JSON, as before.
    shell = orjson.dumps({"command": f'psql "password={HOLDER}"'}).decode()
    assert orjson.loads(redactor.restore_text(shell, json_escaped=True))["command"] == f'psql "password={PASSWORD}"'


def test_hundreds_of_values_in_one_large_json_file_are_all_put_back() -> None:
    redactor = Redactor({PASSWORD: HOLDER})
    users = [{"name": f"user {n}", "password": HOLDER, "notes": "x" * 300} for n in range(300)]
    content = orjson.dumps(users, option=orjson.OPT_INDENT_2).decode()
    arguments = orjson.dumps({"path": "users.json", "content": content}).decode()
    written = orjson.loads(orjson.loads(redactor.restore_text(arguments, json_escaped=True))["content"])
    assert [user["password"] for user in written] == [PASSWORD] * 300


def test_a_streamed_json_file_is_restored_wherever_the_stream_cuts_it() -> None:
    redactor = Redactor({PASSWORD: HOLDER})
    arguments = json_file(HOLDER)
    for cut in range(1, len(arguments)):
        restorer = StreamRestorer(redactor)
        out = b""
        for part, finish in ((arguments[:cut], None), (arguments[cut:], "tool_calls")):
            call = {"index": 0, "function": {"arguments": part}}
            event = {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": finish}]}
            out += restorer.feed(b"data: " + orjson.dumps(event) + b"\n\n")
        pieces = [
            call["function"]["arguments"]
            for line in out.split(b"\n\n")
            if line
            for call in orjson.loads(line[6:])["choices"][0]["delta"].get("tool_calls", [])
        ]
        written = orjson.loads("".join(pieces))
        assert orjson.loads(written["content"])["db"]["password"] == PASSWORD, cut


def route() -> Settings:
    return engine_settings(routes={"tandem": {"strategy": "cloud", "privacy": "redact"}})


async def test_the_gateway_restores_a_json_file_the_cloud_writes_plain_and_streamed() -> None:
    async with in_process(route()) as env:
        env.cloud.push({"kind": "tool_call", "name": "write_file", "arguments": json_file(HOLDER)})
        result = await env.run(messages=[TASK])
        assert PASSWORD not in orjson.dumps(env.cloud.received[0].body).decode()
        assert HOLDER in env.cloud.received[0].body["messages"][0]["content"]
        assert isinstance(result, Answer)
        call = result.completion["choices"][0]["message"]["tool_calls"][0]
        written = orjson.loads(call["function"]["arguments"])
        assert orjson.loads(written["content"])["db"]["password"] == PASSWORD

        env.cloud.push({"kind": "tool_call", "name": "write_file", "arguments": json_file(HOLDER)})
        streamed = await env.run(messages=[TASK], stream=True)
        assert isinstance(streamed, Stream)
        data = await drain(streamed)
        deltas = [d for c in events(data)[:-1] for ch in c["choices"] for d in ch["delta"].get("tool_calls", [])]
        written = orjson.loads("".join(d["function"].get("arguments", "") for d in deltas))
        assert orjson.loads(written["content"])["db"]["password"] == PASSWORD


# A service account's key file as a tool printed it: the key's line breaks are `\n` escapes there,
# and the key is found (and held) as the file writes it.
KEY_BODY = "\n".join("".join(chr(65 + (n * 7 + i) % 26) for i in range(64)) for n in range(6))
KEY = f"-----BEGIN PRIVATE KEY-----\n{KEY_BODY}\n-----END PRIVATE KEY-----\n"
ACCOUNT = {"type": "service_account", "client_email": "ci@proj.iam.gserviceaccount.com", "private_key": KEY}


async def test_a_key_found_in_a_json_file_is_written_back_into_a_json_file_as_it_was() -> None:
    printed = orjson.dumps(ACCOUNT).decode()
    async with in_process(route()) as env:
        messages = [
            {"role": "user", "content": "Copy the service account file to deploy/sa.json"},
            {"role": "assistant", "content": None, "tool_calls": [_call("c1", {"cmd": "cat sa.json"})]},
            {"role": "tool", "tool_call_id": "c1", "content": printed},
        ]
        await env.run(messages=messages)
        seen = env.cloud.received[0].body["messages"][2]["content"]
        assert KEY_BODY.split("\n")[0] not in seen
        # The cloud writes the file back from what it saw: the same document, placeholders and all.
        write = orjson.dumps({"path": "deploy/sa.json", "content": seen}).decode()
        for stream in (False, True):
            env.cloud.push({"kind": "tool_call", "name": "write_file", "arguments": write})
            result = await env.run(messages=messages, stream=stream)
            if isinstance(result, Stream):
                data = await drain(result)
                deltas = [
                    d for c in events(data)[:-1] for ch in c["choices"] for d in ch["delta"].get("tool_calls", [])
                ]
                arguments = "".join(d["function"].get("arguments", "") for d in deltas)
            else:
                assert isinstance(result, Answer)
                arguments = result.completion["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
            content = orjson.loads(arguments)["content"]
            assert content == printed, stream
            assert orjson.loads(content)["private_key"] == KEY


def test_a_password_with_a_backslash_found_in_json_is_written_back_into_json_as_it_was() -> None:
    document = orjson.dumps({"db": {"password": "Rk4\\pQ9!zW2m"}}).decode()  # the file: `Rk4\\pQ9!zW2m`
    written = document[document.index("Rk4") : document.index('"}}')]
    redactor = Redactor({written: HOLDER})
    arguments = orjson.dumps({"path": "db.json", "content": document.replace(written, HOLDER)}).decode()
    content = orjson.loads(redactor.restore_text(arguments, json_escaped=True))["content"]
    assert content == document
    # One level deep (an argument of its own, which a tool may write into code) as written, escaped once.
    alone = redactor.restore_text(orjson.dumps({"password": HOLDER}).decode(), json_escaped=True)
    assert orjson.loads(alone)["password"] == written


def _call(call_id: str, arguments: dict[str, str]) -> dict[str, object]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "bash", "arguments": orjson.dumps(arguments).decode()},
    }

"""A step's record carries the error signals of its new tool results, read off the answer's
path: by the recorder before it writes the record, or at once where the audit log writes it."""

from __future__ import annotations

from pathlib import Path

import orjson

from router.result import Answer
from tests.inprocess import engine_settings, in_process

FAILED_RUN = [
    {"role": "user", "content": "fix the test"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"cmd": "pytest"}'}}
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "Traceback (most recent call last):\n  File 'x'\nKeyError: 'a'\n" + "log line\n" * 400,
    },
]


async def test_the_recorder_reads_the_signals_into_the_record() -> None:
    async with in_process() as env:
        result = await env.run(messages=FAILED_RUN)
        assert isinstance(result, Answer)
        (record,) = await env.records("s1")
        assert record.error_signals == ["error", "traceback"]
        await env.run(
            messages=[*FAILED_RUN, {"role": "assistant", "content": "done"}, {"role": "user", "content": "ok"}]
        )
        assert (await env.records("s1"))[1].error_signals == []


async def test_an_audit_log_gets_the_signals_in_its_line(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    settings = engine_settings(audit={"mode": "metadata", "path": str(path)})
    async with in_process(settings) as env:
        await env.run(messages=FAILED_RUN)
        (record,) = await env.records("s1")
        assert record.error_signals == ["error", "traceback"]
    lines = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    assert [line["error_signals"] for line in lines] == [["error", "traceback"]]

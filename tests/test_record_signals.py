"""A step's record carries the error signals of its new tool results, read off the answer's
path: by the recorder before it writes the record, or at once where the audit log writes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from judge.actions import ActionType
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


async def test_the_recorder_labels_the_previous_action_and_the_trajectory_keeps_its_record() -> None:
    from judge.record import RunRecord

    def call(number: int) -> dict[str, Any]:
        function = {"name": "bash", "arguments": '{"cmd": "pytest"}'}
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": f"c{number}", "type": "function", "function": function}],
        }

    failed = {"role": "tool", "tool_call_id": "c1", "content": "F\n=== 1 failed, 2 passed in 0.12s ==="}
    passed = {"role": "tool", "tool_call_id": "c2", "content": "...\n=== 3 passed in 0.10s ==="}
    async with in_process() as env:
        await env.run(messages=FAILED_RUN[:1])
        await env.run(messages=[FAILED_RUN[0], call(1), failed])  # the tests failed: step 1 did
        await env.run(messages=[FAILED_RUN[0], call(1), failed, call(2), passed])
        records = await env.records("s1")
        assert [(r.failed_before, r.failed_before_action) for r in records] == [(None, None), (1, "test"), (0, "test")]
        trajectory = await env.engine.tracker.store.get("s1")
        assert trajectory is not None
        kept = RunRecord.from_counts(trajectory.counts)
        assert kept.type_values(ActionType.TEST)[1] == 0.5 and sum(kept.labelled) == 2

"""The audit queue holds no more memory than `audit.max_queue_bytes`: while the disk is full,
lines wait in it, and what they really hold (measured with tracemalloc, as the objects a step
leaves behind once its request is gone) stays within the bound; what does not fit is dropped
and counted. The full disk is real: the audit path is a link to /dev/full."""

from __future__ import annotations

import gc
import time
import tracemalloc
from pathlib import Path
from typing import Any

import orjson

from router.audit import AuditLog
from router.config.stores import AuditSettings
from router.ledger import InnerCall, StepRecord, Usage
from router.metrics.core import Metrics
from tests.gateway_server import wait_until

BOUND = 4 * 1024 * 1024


def history(step: int) -> list[dict[str, Any]]:
    """An agent's messages as a parsed request holds them: a system prompt, turns of tool calls
    and their output (some of it not ASCII, as terminals print), growing with the step."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful engineer. " * 60}]
    for turn in range(3 + step % 5):
        call = {"id": f"call_{turn}", "type": "function", "function": {"name": "bash", "arguments": '{"cmd": "ls"}'}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        output = f"test_{turn}.py ✓ passed in 0.{turn}s — ok\n" * (20 + turn * 7)
        messages.append({"role": "tool", "tool_call_id": f"call_{turn}", "content": output})
    return orjson.loads(orjson.dumps(messages))  # fresh objects, as parsing a body makes them


def record(step: int, messages: list[dict[str, Any]]) -> StepRecord:
    size = len(orjson.dumps(messages))
    return StepRecord(
        trajectory_id=f"ns:run-{step % 7}",
        step=step,
        route="tandem",
        target="cloud",
        reason="judge_score",
        score=0.7,
        model="cloud-model",
        at=time.time(),
        usage=Usage(size // 4, 0, 40),
        inner=[InnerCall("judge", "edge", Usage(300, 0, 2), 0.0001)],
        features=[float(i) / 7 for i in range(48)],
        tools=["bash"],
    )


def test_the_queue_holds_no_more_than_its_bound_and_counts_what_it_drops(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.symlink_to("/dev/full")
    metrics = Metrics()
    audit = AuditLog(AuditSettings(mode="content", path=path, max_queue_bytes=BOUND), metrics)
    audit.start()
    try:
        # The writer takes a first line and keeps retrying it on the full disk: what follows
        # waits in the queue.
        first = history(0)
        audit.submit(record(0, first), {"input": first, "output": "ok", "output_tools": []})
        del first
        assert wait_until(lambda: audit.state == "failing", timeout=5)
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            steps = 400
            for step in range(1, steps + 1):
                messages = history(step)
                content = {"input": messages, "output": "done " * 30, "output_tools": ["bash"]}
                audit.submit(record(step, messages), content)
                del messages, content
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        dropped = audit.lines_dropped
        print(f"\nqueue bound {BOUND} bytes: {held} bytes held ({held / BOUND:.2f}x), {dropped} of {steps} dropped")
        assert dropped > 0  # the bound was reached: the rest were dropped, not kept
        assert held <= BOUND * 1.05, f"the queue holds {held / BOUND:.2f}x its bound"
        exposition = metrics.exposition().decode()
        assert f'tandem_audit_lines_total{{outcome="dropped"}} {float(dropped)}' in exposition
    finally:
        path.unlink()  # the disk frees: close() writes what is queued
        audit.close()
    written = (tmp_path / "audit.jsonl").read_bytes().count(b"\n")
    assert written + audit.lines_dropped == 401  # every line written or counted as dropped

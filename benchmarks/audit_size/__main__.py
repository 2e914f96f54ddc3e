"""The content audit log's size for long all-cloud runs against their transcript.

    python -m benchmarks.audit_size [--steps 188] [--runs 5]

Writes each run through the real audit writer (content mode, deltas) with the step records a
cloud step gets, and prints per run: the transcript (bytes of its distinct messages), the audit
file, their ratio, and what the whole-input-per-line format wrote before (issue 16: 37 MB for a
188-step run of real size). Target: audit ≤ 2 × transcript.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from benchmarks.audit_size.workload import first_messages, tool_call, tool_result, transcript_bytes
from router.audit import AuditLog
from router.config.stores import AuditSettings
from router.ledger import StepRecord, Usage


def one_run(folder: Path, steps: int, seed: int) -> tuple[int, int, int, float]:
    path = folder / f"audit-{seed}.jsonl"
    audit = AuditLog(AuditSettings(mode="content", path=path))
    audit.start()
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = first_messages()
    full_history = 0
    started = time.perf_counter()
    for index in range(steps):
        name, arguments = tool_call(rng)
        size = len(orjson.dumps(messages))
        full_history += size
        record = StepRecord(
            trajectory_id=f"run-{seed}",
            step=index + 1,
            route="tandem/cloud",
            target="cloud",
            reason="route_fixed",
            score=None,
            model="gpt-5.4",
            at=time.time(),
            usage=Usage(size // 4, size // 5, 60),
            cost_usd=0.01,
            counterfactual_usd=0.01,
            latency_s=1.2,
            ttft_s=0.8,
            tools=[name],
        )
        audit.submit(record, {"input": messages, "output": arguments, "output_tools": [name]})
        call = {"id": f"call_{index}", "type": "function", "function": {"name": name, "arguments": arguments}}
        messages = [
            *messages,
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{index}", "content": tool_result(rng)},
        ]
    audit.close()
    elapsed = time.perf_counter() - started
    return transcript_bytes(messages), path.stat().st_size, full_history, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=188)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"{'run':>4} {'transcript':>12} {'audit':>12} {'ratio':>6} {'whole input/line':>17} {'write s':>8}")
    with tempfile.TemporaryDirectory() as folder:
        for seed in range(args.runs):
            transcript, audit, full, elapsed = one_run(Path(folder), args.steps, seed)
            print(f"{seed:>4} {transcript:>12,} {audit:>12,} {audit / transcript:>6.2f} {full:>17,} {elapsed:>8.2f}")


if __name__ == "__main__":
    main()

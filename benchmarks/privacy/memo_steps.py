"""The privacy stage's memory at long-run steps, in process: the time `PrivacyMemo.learned` takes
per cloud step of a long-run-shaped trajectory (benchmarks/longrun/trajectory.py: bodies growing
to ~420 KB, a dump of `--vault-values` values in the first message, a few hundred more in the
tool outputs), and the whole privacy stage's (scan, learned, redaction), over the last 10 steps.

    python -m benchmarks.privacy.memo_steps [--steps 100] [--vault-values 5000] [--seed 1]

Two ways a step's messages arrive: `parsed` (every request parsed anew: equal objects, not the
same ones) and `reused` (the unchanged prefix handed as the same objects, as a parser that reuses
its last parse does).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

import orjson

from benchmarks.longrun.trajectory import RunShape, run_messages
from router.metrics.core import Metrics
from router.privacy.guard import PrivacyGuard
from router.privacy.memo import PrivacyMemo
from router.privacy.vault import VaultCipher
from router.trajectory.state import StepStart
from router.trajectory.store import MemoryStore


async def replay(shape: RunShape, seed: int, reuse: bool) -> tuple[list[float], list[float], int]:
    """Per step: ms in `learned`, ms in the whole privacy stage; and the vault's size at the end."""
    store, memo, metrics = MemoryStore(), PrivacyMemo(), Metrics()
    cipher = VaultCipher(b"k" * 32)
    learned_ms: list[float] = []
    stage_ms: list[float] = []
    previous: list[dict[str, Any]] = []
    guard: PrivacyGuard | None = None
    for step, messages in enumerate(run_messages(seed, shape), start=1):
        if reuse:
            # The prefix as the same objects; only the new messages parsed.
            fresh = orjson.loads(orjson.dumps(messages[len(previous) :]))
            messages = previous + fresh
        else:
            messages = orjson.loads(orjson.dumps(messages))
        previous = messages
        slot = await store.begin_step(StepStart("t", f"fp{step}", False, "task", "redact", "", float(step)))
        assert slot.trajectory is not None
        guard = PrivacyGuard(
            "redact",
            "t",
            slot.trajectory.notes,
            store,
            metrics,
            cipher=cipher,
            memo=memo,
            born=slot.trajectory.created_at,
            vault_size=slot.trajectory.vault_size,
        )
        started = time.perf_counter()
        await guard.scan(messages)
        before = time.perf_counter()
        guard.learned(messages)
        learned_ms.append((time.perf_counter() - before) * 1000)
        guard.outgoing(messages)  # the step's redaction: `learned` again, all remembered
        stage_ms.append((time.perf_counter() - started) * 1000)
    return learned_ms, stage_ms, len(guard.vault) if guard else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--vault-values", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    shape = RunShape(steps=args.steps, dump_values=args.vault_values)
    print(f"{'messages':>8}  {'learned p50 ms':>14}  {'max':>6}  {'stage p50 ms':>12}  {'max':>6}  (last 10 steps)")
    for reuse in (False, True):
        learned, stage, values = asyncio.run(replay(shape, args.seed, reuse))
        last_learned, last_stage = learned[-10:], stage[-10:]
        print(
            f"{'reused' if reuse else 'parsed':>8}  {statistics.median(last_learned):14.3f}  {max(last_learned):6.3f}"
            f"  {statistics.median(last_stage):12.3f}  {max(last_stage):6.3f}  vault {values}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What a step holding many new sensitive values costs the privacy stage, with the vault in a
real Redis: one redact scan of a message listing `N` distinct e-mail addresses (detection, the
values' placeholders and their sealed originals written to the vault), timed in one process,
beside the detection alone; and the round trips it made to Redis.

    python -m benchmarks.privacy.vault_writes [--values 100 1000 5000] [--repeat 3]

Needs `redis-server` on the PATH (the benchmark starts its own, on a free port, no persistence).
The scan writes a step's new values in two round trips whatever their number (their
placeholders, then their sealed values); before issue 16's sixth turn it made two per value.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from typing import Any

from benchmarks.overhead.procs import free_port
from router.metrics.core import Metrics
from router.privacy.detect import detect
from router.privacy.guard import PrivacyGuard
from router.privacy.vault import VaultCipher
from router.trajectory.redis_store import RedisStore
from router.trajectory.state import StepStart


class _Counted:
    """Counts the Redis round trips a store makes: direct script calls and pipeline runs."""

    def __init__(self, store: RedisStore) -> None:
        self.trips = 0
        script, pipeline = store._vault_note, store._redis.pipeline

        async def counted_script(*args: Any, **kwargs: Any) -> Any:
            self.trips += kwargs.get("client") is None
            return await script(*args, **kwargs)

        def counted_pipeline(*args: Any, **kwargs: Any) -> Any:
            pipe = pipeline(*args, **kwargs)
            execute = pipe.execute

            async def counted_execute(*a: Any, **k: Any) -> Any:
                self.trips += 1
                return await execute(*a, **k)

            pipe.execute = counted_execute
            return pipe

        store._vault_note = counted_script  # type: ignore[method-assign]
        store._redis.pipeline = counted_pipeline  # type: ignore[method-assign]


async def _one(url: str, values: int, run: int) -> tuple[float, float, int]:
    store = RedisStore(url)
    counted = _Counted(store)
    try:
        trajectory = f"dump-{values}-{run}"
        await store.begin_step(StepStart(trajectory, "fp", False, "task", "r", "", time.time()))
        text = "the export:\n" + "\n".join(f"customer{n}.run{run}@example{n % 7}.org" for n in range(values))
        messages = [{"role": "user", "content": text}]
        started = time.perf_counter()
        detect(text[:-1] + " ")  # the detection alone (a text not seen before: no cached result)
        detection = time.perf_counter() - started
        guard = PrivacyGuard("redact", trajectory, {}, store, Metrics(), cipher=VaultCipher(os.urandom(32)))
        await guard.load()
        counted.trips = 0
        started = time.perf_counter()
        await guard.scan(messages)
        scan = time.perf_counter() - started
        if len(guard.vault) != values:
            raise RuntimeError(f"{len(guard.vault)} values in the vault, expected {values}")
        return scan, detection, counted.trips
    finally:
        await store.aclose()


async def main_async(args: argparse.Namespace, url: str) -> int:
    print("one redact scan of N new e-mail addresses, the vault in a local redis-server")
    print("| values | scan, ms (median) | of which detection, ms | vault round trips |")
    print("|---|---|---|---|")
    for values in args.values:
        runs = [await _one(url, values, run) for run in range(args.repeat)]
        scan = statistics.median(r[0] for r in runs) * 1000
        detection = statistics.median(r[1] for r in runs) * 1000
        print(f"| {values} | {scan:.1f} | {detection:.1f} | {runs[0][2]} |")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values", type=int, nargs="+", default=[100, 1000, 5000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    binary = shutil.which("redis-server")
    if binary is None:
        print("redis-server is not installed (apt-get install redis-server): nothing measured")
        return 1
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        server = subprocess.Popen(command, cwd=folder, stdout=subprocess.DEVNULL)
        try:
            time.sleep(0.5)
            return asyncio.run(main_async(args, f"redis://127.0.0.1:{port}/0"))
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    raise SystemExit(main())

"""Loaded by a profiled gateway only (its PYTHONPATH names this folder): records how long each
garbage collection pauses the process, which a sampling profiler cannot see.

The pauses go to the JSON file named by TANDEM_BENCH_GC_OUT, rewritten twice a second by a
daemon thread (uvicorn ends on a re-raised SIGTERM, so an exit hook would never run).
"""

from __future__ import annotations

import gc
import json
import os
import threading
import time

_OUT = os.environ.get("TANDEM_BENCH_GC_OUT")
_LONG_S = 0.001  # pauses at least this long are kept one by one, with when they ended
_counts = [0, 0, 0]
_totals = [0.0, 0.0, 0.0]
_long: list[tuple[float, int, float]] = []
_started = 0.0


def _callback(phase: str, info: dict[str, int]) -> None:
    global _started
    if phase == "start":
        _started = time.perf_counter()
        return
    pause = time.perf_counter() - _started
    generation = info["generation"]
    _counts[generation] += 1
    _totals[generation] += pause
    if pause >= _LONG_S and len(_long) < 100_000:
        _long.append((time.time(), generation, pause))


def _writer(path: str) -> None:
    while True:
        time.sleep(0.5)
        data = {"counts": _counts, "totals_s": _totals, "long": _long[:]}
        with open(path + ".tmp", "w") as handle:
            json.dump(data, handle)
        os.replace(path + ".tmp", path)


if _OUT:
    gc.callbacks.append(_callback)
    threading.Thread(target=_writer, args=(_OUT,), name="gc-probe", daemon=True).start()

"""Run with PROMETHEUS_MULTIPROC_DIR set (before anything imports prometheus-client): two worker
processes fill the same series, then this process compares Tandem's exposition of their files
with prometheus-client's and prints what it found as JSON."""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from benchmarks.metrics.workload import fill_worker
from router.metrics.core import MULTIPROC_ENV, Metrics, multiprocess_active


def samples(text: bytes) -> dict[str, float]:
    found = {}
    for family in text_string_to_metric_families(text.decode()):
        for sample in family.samples:
            found[f"{sample.name}{sorted(sample.labels.items())}"] = sample.value
    return found


def main() -> int:
    assert multiprocess_active()
    context = multiprocessing.get_context("spawn")
    for _ in range(2):
        process = context.Process(target=fill_worker, args=(5,))
        process.start()
        process.join()
        assert process.exitcode == 0
    metrics = Metrics()
    metrics.active_trajectories.set(3)
    ours, library = samples(metrics.exposition()), samples(metrics.library_exposition())
    folder = Path(os.environ[MULTIPROC_ENV])
    print(
        json.dumps(
            {
                "equal": ours == library,
                "only_ours": sorted(set(ours) - set(library))[:5],
                "only_library": sorted(set(library) - set(ours))[:5],
                "steps_one_series": ours[
                    "tandem_steps_total[('reason', 'random_draw'), ('route', 'route-000'), "
                    "('status', 'ok'), ('target', 'edge')]"
                ],
                "active": ours["tandem_active_trajectories[]"],
                "live_gauge_files": sorted(p.name.split("_")[1] for p in folder.glob("gauge_live*.db")),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

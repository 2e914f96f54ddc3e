"""prometheus-client's multiprocess mode for `tandem serve --workers N`: the shared folder
and the sweep of dead workers' live gauges (see router/metrics/core.py)."""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
from pathlib import Path

from prometheus_client import values
from prometheus_client.multiprocess import mark_process_dead

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
_PID_OF_FILE = re.compile(r"_(\d+)\.db$")


def multiprocess_active() -> bool:
    """Whether prometheus-client keeps values in shared files: decided once, when it was
    imported, by whether PROMETHEUS_MULTIPROC_DIR was set then."""
    return values.ValueClass is not values.MutexValue


def prepare_multiprocess(workers: int) -> Path | None:
    """Set up multiprocess mode before uvicorn starts its workers; returns the folder, or None
    when one process serves and nothing needs sharing.

    A folder the operator named in PROMETHEUS_MULTIPROC_DIR is used (and created); otherwise,
    with more than one worker, a fresh temporary folder is made and removed at exit. Files
    left by an earlier run are wiped: they would add a dead process's counts to this one's.
    """
    named = os.environ.get(MULTIPROC_ENV)
    if named:
        folder = Path(named)
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.glob("*.db"):
            stale.unlink(missing_ok=True)
        return folder
    if workers <= 1:
        return None
    folder = Path(tempfile.mkdtemp(prefix="tandem-metrics-"))
    os.environ[MULTIPROC_ENV] = str(folder)
    atexit.register(shutil.rmtree, folder, True)
    return folder


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_dead_workers(folder: Path) -> list[int]:
    """Drop the live-only gauges of workers that are gone (uvicorn restarts a dead worker under
    a new pid). Their counters and histograms stay: those counts happened."""
    pids = {int(m.group(1)) for f in folder.glob("gauge_live*.db") if (m := _PID_OF_FILE.search(f.name))}
    dead = sorted(pid for pid in pids if not _alive(pid))
    for pid in dead:
        mark_process_dead(pid, str(folder))  # type: ignore[no-untyped-call]
    return dead

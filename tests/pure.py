"""Tests that read the gateway's Python frames or replace one of its functions: in a process whose
hot modules are compiled (router/native.py) those frames do not exist and a compiled caller
calls the compiled function directly, so such a test runs again in a process of plain Python
modules and passes or fails there, with its output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from router import native

ROOT = Path(__file__).resolve().parent.parent


def compiled() -> bool:
    """Whether this process runs any compiled module."""
    return bool(native.state().modules)


def rerun_pure(nodeid: str) -> None:
    """Run the test `nodeid` in a pytest of its own with `TANDEM_PURE=1`; fail if it fails there."""
    env = {**os.environ, native.PURE_ENV: "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", nodeid]
    result = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{nodeid} failed in pure Python:\n{result.stdout[-6000:]}{result.stderr[-2000:]}"

"""benchmarks.judge_latency measures the modules the gateway runs: the compiled judge where a fresh
build exists (loaded at `import router`), and says which mode ran."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _mode(code: str, **env: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip()


def test_the_benchmark_loads_the_judge_as_the_gateway_does() -> None:
    # The benchmark's entry imports router before any judge module: the mode is the gateway's.
    code = (
        "import benchmarks.judge_latency.__main__ as bench; from router.native import state;"
        "print(bench.measuring.mode()); print(bool(state().modules))"
    )
    mode, built = _mode(code, TANDEM_PURE="0").splitlines()
    if built == "True":
        assert mode.startswith("compiled: ") and "judge.features" in mode and "__mypyc" not in mode
    else:
        assert mode.startswith("pure Python (")


def test_the_mode_says_pure_when_it_is() -> None:
    code = "import benchmarks.judge_latency.__main__ as bench; print(bench.measuring.mode())"
    assert _mode(code, TANDEM_PURE="1") == "pure Python (TANDEM_PURE=1)"
    # The judge imported before router: its Python modules, whatever was built.
    code = "import judge.features, router; from benchmarks.judge_latency import measure; print(measure.mode())"
    assert _mode(code, TANDEM_PURE="0").startswith("pure Python (")


def test_the_baseline_is_measured_in_a_process_of_its_own(tmp_path: Path) -> None:
    # --baseline runs measure.py as a script against a checkout: here this one, twice.
    done = subprocess.run(
        [
            *(sys.executable, "-m", "benchmarks.judge_latency", "--steps", "6", "--passes", "1"),
            *("--baseline", str(ROOT), "--rounds", "1", "--json", str(tmp_path / "r.json")),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "this checkout" in done.stdout and "baseline" in done.stdout
    assert "; before " in (tmp_path / "r.json").read_text()

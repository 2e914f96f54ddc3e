"""The long commands say how far they are on standard error (standard output keeps their
result): `demo` per strategy x task run, `judge import` per file, `judge train` per stage,
`judge evaluate` before it scores, `trajectories export` with the count it wrote; `serve` logs
one line per request only with --access-log."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

from sim.strategies import STRATEGIES
from tests.fake_upstream import free_port
from tests.test_serve_open_proxy import config_file, environment, serve_until_up

ROOT = Path(__file__).resolve().parents[1]


def tandem(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TANDEM_")}
    return subprocess.run(
        [sys.executable, "-m", "router.cli", *args], capture_output=True, text=True, timeout=300, env=env, cwd=ROOT
    )


def test_demo_shows_its_runs_on_stderr_and_keeps_stdout_for_the_tables() -> None:
    done = tandem("demo", "--tasks", "1")
    assert done.returncode == 0, done.stderr
    runs = len(STRATEGIES)
    assert f"strategy x task runs [##############################] {runs}/{runs}" in done.stderr
    assert "strategy x task runs" not in done.stdout and "please wait" in done.stdout


def test_judge_import_train_and_evaluate_say_where_they_are(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl.gz"
    done = tandem("judge", "import", str(ROOT / "tests" / "judge" / "trajectories"), "--out", str(rows), "--keep-going")
    assert done.returncode == 0, done.stderr
    assert "importing trajectories [" in done.stderr
    with gzip.open(ROOT / "judge" / "data" / "real-runs.jsonl.gz", "rt") as source:
        sample = [next(source) for _ in range(3000)]
    data = tmp_path / "sample.jsonl"
    data.write_text("".join(sample))
    model = tmp_path / "judge.onnx"
    done = tandem("judge", "train", "--data", str(data), "--out", str(model), "--model", "logreg")
    assert done.returncode == 0, done.stderr
    assert "labels: failed (read from the data" in done.stderr
    for stage in ("rows with failed labels", "fitting logreg", "exporting to ONNX", "evaluating on the held-out"):
        assert stage in done.stderr, done.stderr
    assert "wrote" in done.stdout
    done = tandem("judge", "evaluate", "--model", str(model), "--data", str(data))
    assert done.returncode == 0, done.stderr
    assert "labels: failed (read from the data" in done.stderr and "evaluate: scoring 3,000 rows" in done.stderr


def test_access_log_only_when_asked_for(tmp_path: Path) -> None:
    config = config_file(tmp_path)
    quiet = serve_until_up(["--config", str(config)], environment(), free_port())
    assert '"GET /healthz HTTP/1.1" 200' not in quiet and "access log off" in quiet
    logged = serve_until_up(["--config", str(config), "--access-log"], environment(), free_port())
    assert '"GET /healthz HTTP/1.1" 200' in logged and "access log on" in logged

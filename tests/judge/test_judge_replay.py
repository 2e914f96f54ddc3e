"""`python -m benchmarks.judge_replay` on small files of several runs (tests/judge/formats/): it
replays every run of every file through a live gateway, its figures count what the import
counts, and every live score is the score the shipped model gives the imported row, in draft
mode too (the edge drafts the turn the run took, each tool call with its own name)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from judge.importers import read_runs
from judge.replay import replay
from judge.rows import held_out

ROOT = Path(__file__).parents[2]
FORMATS = Path(__file__).parent / "formats"
FILES = [FORMATS / "openhands-sdk-output.jsonl", FORMATS / "tau2-results.json"]


def _imported() -> tuple[int, int, int]:
    """(runs, labelled steps, failed steps) of the files, as the import reads them."""
    runs = [run for path in FILES for run in read_runs(path)]
    labels = [row["action_failed"] for run in runs for row in replay(run) if row["action_failed"] is not None]
    return len(runs), len(labels), sum(labels)


def _replayed(*args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.judge_replay", *args, "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    figures: dict[str, Any] = orjson.loads(done.stdout.strip().splitlines()[-1])
    return figures


@pytest.mark.parametrize("sees", ["state", "draft"])
def test_the_replay_reads_every_run_and_its_figures_are_sane(sees: str) -> None:
    runs, steps, failed = _imported()
    assert (runs, failed) == (4, 7) and 0 < failed < steps  # both classes: an AUC to compute
    figures = _replayed(*(str(path) for path in FILES), "--sees", sees)
    assert (figures["sees"], figures["runs"], figures["steps"], figures["failed"]) == (sees, runs, steps, failed)
    assert figures["auc"] is not None and 0.0 <= figures["auc"] <= 1.0 and not math.isnan(figures["auc"])
    assert 0.0 <= figures["cloud_share"] <= 1.0
    # The gateway scored what the import wrote: the same state, the same draft (all its calls).
    assert figures["scores_as_imported"] == steps


def test_a_folder_is_searched_and_held_out_keeps_the_runs_train_holds_out() -> None:
    kept = [run for path in FILES for run in read_runs(path) if held_out(run.trajectory_id, 0.5)]
    steps = sum(1 for run in kept for row in replay(run) if row["action_failed"] is not None)
    figures = _replayed(str(FORMATS), "--held-out", "0.5")
    assert (figures["runs"], figures["steps"]) == (len(kept), steps)

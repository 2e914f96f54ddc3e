"""`tandem judge retrain`: shipped + recent gateway rows -> a candidate promoted only when it is
not worse on recent runs held back; runs stitched by history are left out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from judge.card import card_path
from judge.cli import main
from judge.features import FEATURE_VERSION, N_FEATURES, feature_index
from judge.metrics import MIN_POSITIVES
from judge.retrain import HELD_BACK, choose_held_back, retrain, uncertain_runs
from judge.rows import ROW_SCHEMA, held_out, write_rows
from judge.train import TrainConfig, train


def _rows(family: str, runs: int, cause: str, seed: int, steps: int = 8) -> list[dict[str, Any]]:
    """Rows whose `action_failed` is (mostly) the feature `cause`: each family fails for its own reason."""
    rng = np.random.default_rng(seed)
    column = feature_index(cause)
    rows = []
    for run in range(runs):
        for step in range(1, steps + 1):
            features = (rng.random(N_FEATURES) < 0.3).astype(np.float32)
            failed = bool(features[column]) if rng.random() < 0.9 else bool(rng.random() < 0.5)
            rows.append(
                {
                    "schema": ROW_SCHEMA,
                    "trajectory_id": f"{family}-{run}",
                    "step": step,
                    "feature_version": FEATURE_VERSION,
                    "features": features.tolist(),
                    "target": "edge",
                    "action_failed": int(failed),
                    "family": family,
                }
            )
    return rows


def _serving(folder: Path, shipped: list[dict[str, Any]]) -> Path:
    path = folder / "serving" / "judge.onnx"
    path.parent.mkdir()
    train(shipped, TrainConfig(model="logreg", labels="failed"), path)
    return path


def _back(run: str) -> bool:
    return held_out(f"held back: {run}", 0.25)


def test_a_candidate_that_learnt_the_new_agent_is_promoted_and_stitched_runs_are_left_out(tmp_path: Path) -> None:
    shipped = _rows("alpha", 150, "err_any", seed=1)
    serving = _serving(tmp_path, shipped)
    before = serving.read_bytes()
    recent = _rows("beta", 40, "act1_read", seed=2)
    # Runs the gateway found by their history: their labels are noise here, and must not count.
    stitched = _rows("beta", 10, "act1_read", seed=3)
    for row in stitched:
        row["trajectory_id"] = "stitched-" + row["trajectory_id"]
        row["stitch"] = "extended"
        row["action_failed"] = 1 - row["action_failed"]
    assert uncertain_runs(stitched + recent) == {row["trajectory_id"] for row in stitched}
    outcome = retrain(shipped, recent + stitched, serving, model="logreg")
    assert outcome.promoted, outcome.reason
    assert (outcome.recent_runs, outcome.left_out_runs) == (40, 10)
    assert outcome.recent_weight > 1  # few recent rows weigh more than their count
    assert serving.read_bytes() != before
    card = orjson.loads(card_path(serving).read_bytes())
    back = choose_held_back(recent, "failed", HELD_BACK)
    learnt = sum(1 for row in recent if row["trajectory_id"] not in back)
    assert f"and {learnt} recent gateway rows" in card["training_data"]["description"]
    assert "against the serving model" in card["evaluation"]["promotion"]["decision"]


def test_a_candidate_worse_on_the_held_back_runs_is_not_promoted(tmp_path: Path) -> None:
    shipped = _rows("alpha", 60, "err_any", seed=1)
    serving = _serving(tmp_path, shipped)
    before = (serving.read_bytes(), card_path(serving).read_bytes())
    recent = _rows("alpha", 80, "err_any", seed=4)
    for row in recent:  # what it would learn from is the opposite of what the held-back runs show
        if not _back(row["trajectory_id"]):
            row["action_failed"] = 1 - row["action_failed"]
    outcome = retrain(shipped, recent, serving, model="logreg", recent_share=0.9)
    assert not outcome.promoted and "worse" in outcome.reason, outcome.reason
    assert (serving.read_bytes(), card_path(serving).read_bytes()) == before


def test_the_cli_says_what_it_learnt_from_and_keeps_the_model_without_held_back_failures(
    tmp_path: Path, capsys: Any
) -> None:
    shipped_rows = _rows("alpha", 40, "err_any", seed=1)
    serving = _serving(tmp_path, shipped_rows)
    before = serving.read_bytes()
    shipped, recent = tmp_path / "shipped.jsonl", tmp_path / "recent.jsonl"
    write_rows(shipped, shipped_rows)
    quiet = _rows("beta", 20, "act1_read", seed=5)
    for row in quiet:
        row["action_failed"] = 0  # nothing failed: nothing to compare the models on
    write_rows(recent, quiet)
    arguments = ["retrain", "--data", str(recent), "--shipped", str(shipped), "--serving", str(serving)]
    assert main([*arguments, "--model", "logreg"]) == 0
    out = capsys.readouterr()
    assert "not promoted; still serving" in out.out and "nothing to compare the models on" in out.out
    assert "recent traffic: 160 rows of 20 runs (0 run(s) stitched by history left out)" in out.err
    assert serving.read_bytes() == before
    with pytest.raises(SystemExit) as refused:
        main([*arguments, "--held-back", "1.5"])
    assert refused.value.code == 2
    assert "--held-back: 1.5 is out of range: a share in (0, 1)" in capsys.readouterr().err


def test_a_candidate_is_not_promoted_on_too_few_held_back_failures(tmp_path: Path) -> None:
    """A candidate that learnt the new agent is still not promoted when even half the recent runs,
    held back, hold fewer than 20 failing steps: an AUC over a handful of them is noise
    (tau-bench's retraining promoted candidates that were worse on the family's other runs)."""
    shipped = _rows("alpha", 150, "err_any", seed=1)
    serving = _serving(tmp_path, shipped)
    before = serving.read_bytes()
    recent = _rows("beta", 40, "act1_read", seed=2)
    # Half the runs keep one failing step at most (their first), the others none: half the runs
    # hold fewer than 20.
    for row in recent:
        run = int(str(row["trajectory_id"]).rsplit("-", 1)[1])
        if row["step"] > 1 or run % 2:
            row["action_failed"] = 0
    outcome = retrain(shipped, recent, serving, model="logreg")
    assert not outcome.promoted
    assert "fewer than 20: too few to compare the models on" in outcome.reason
    assert outcome.held_back_runs == 20  # the most it holds back: half
    assert serving.read_bytes() == before


def test_a_family_that_fails_rarely_holds_back_more_runs_until_it_can_be_compared() -> None:
    """The share held back grows, in the same stable order, until it holds 20 failing steps or
    half the runs: a family failing at a few percent of its steps is compared (and learnt) after
    as many runs as 20 failures take, not never."""
    recent = _rows("beta", 60, "act1_read", seed=2)
    for row in recent:  # one failing step a run
        row["action_failed"] = int(row["step"] == 3)
    runs = {str(row["trajectory_id"]) for row in recent}
    by_share = {run for run in runs if held_out(f"held back: {run}", HELD_BACK)}
    assert len(by_share) < MIN_POSITIVES  # the share alone holds too few
    back = choose_held_back(recent, "failed", HELD_BACK)
    assert by_share < back and len(back) == MIN_POSITIVES  # one failure a run: 20 runs
    assert choose_held_back(recent, "failed", HELD_BACK) == back  # stable
    # Where failures are plenty the share alone is held back.
    for row in recent:
        row["action_failed"] = int(row["step"] > 2)
    assert choose_held_back(recent, "failed", HELD_BACK) == by_share
    # Where there are none, no more than half the runs.
    for row in recent:
        row["action_failed"] = 0
    assert len(choose_held_back(recent, "failed", HELD_BACK)) == 30

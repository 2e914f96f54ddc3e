"""`tandem judge retrain`: shipped + recent gateway rows -> a candidate promoted only when,
cross-fitted over the recent runs, it is not worse there; runs stitched by their history are learnt
from, runs with a history the client rewrote are left out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from judge.card import card_path
from judge.cli import main
from judge.evaluate import AUC_TOLERANCE, gap_low
from judge.features import FEATURE_VERSION, N_FEATURES, feature_index
from judge.metrics import MIN_POSITIVES, auc, grouped_auc
from judge.retrain import FOLDS, folds_of, retrain, uncertain_runs
from judge.rows import ROW_SCHEMA, JudgeTrainingError, split_by_trajectory, write_rows
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


def test_a_candidate_that_learnt_the_new_agent_is_promoted_and_rewritten_runs_are_left_out(tmp_path: Path) -> None:
    shipped = _rows("alpha", 150, "err_any", seed=1)
    serving = _serving(tmp_path, shipped)
    before = serving.read_bytes()
    recent = _rows("beta", 40, "act1_read", seed=2)
    # Runs the gateway found by their history (no session id) are runs as any other.
    for row in recent[: len(recent) // 2]:
        row["stitch"] = "new" if row["step"] == 1 else "extended"
    # Runs with a step joined by evidence: their labels are noise here, and must not count.
    rewritten = _rows("beta", 10, "act1_read", seed=3)
    for row in rewritten:
        row["trajectory_id"] = "rewritten-" + row["trajectory_id"]
        row["stitch"] = "rewritten" if row["step"] == 2 else "extended"
        row["action_failed"] = 1 - row["action_failed"]
    assert uncertain_runs(rewritten + recent) == {row["trajectory_id"] for row in rewritten}
    outcome = retrain(shipped, recent + rewritten, serving, model="logreg", report=tmp_path / "report")
    assert outcome.promoted, outcome.reason
    figures = orjson.loads((tmp_path / "report" / "report.json").read_bytes())
    for name in ("candidate", "serving"):  # one family: its AUC is the comparison's, pairs within groups
        assert figures[name]["by_family"]["beta"]["auc"] == figures[name]["auc"]
        assert figures[name]["auc_pairs"] == "a failing and a passing step of the same group of runs"
    assert (outcome.recent_runs, outcome.left_out_runs, outcome.folds) == (40, 10, FOLDS)
    assert outcome.recent_weight > 1  # few recent rows weigh more than their count
    assert serving.read_bytes() != before
    card = orjson.loads(card_path(serving).read_bytes())
    # Every recent row of a run identified by its client is learnt from, none held back.
    assert f"and {len(recent)} recent gateway rows" in card["training_data"]["description"]
    trained_shipped = len(split_by_trajectory(shipped, 0.2).train)
    assert card["training_data"]["train_rows"] == trained_shipped + len(recent)
    decision = card["evaluation"]["promotion"]["decision"]
    assert f"cross-fitted over {FOLDS} groups of recent runs" in decision and "against the serving model" in decision


def test_a_candidate_worse_on_the_runs_it_did_not_learn_is_not_promoted(tmp_path: Path) -> None:
    """Recent runs that contradict each other (half fail as the shipped rows say, half the other
    way round): each group's candidate learnt mostly the other half's rule, so cross-fitted it
    scores the recent steps worse than the serving model does, and the serving model stays."""
    shipped = _rows("alpha", 60, "err_any", seed=1)
    serving = _serving(tmp_path, shipped)
    before = (serving.read_bytes(), card_path(serving).read_bytes())
    recent = _rows("alpha", 80, "err_any", seed=4)
    groups = folds_of(recent)
    flipped = groups[2] | groups[3]
    for row in recent:
        if row["trajectory_id"] in flipped:
            row["action_failed"] = 1 - row["action_failed"]
    outcome = retrain(shipped, recent, serving, model="logreg", recent_share=0.9)
    assert not outcome.promoted and "worse" in outcome.reason, outcome.reason
    assert (serving.read_bytes(), card_path(serving).read_bytes()) == before


def test_the_cli_says_what_it_learnt_from_and_keeps_the_model_without_recent_failures(
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
    assert "recent traffic: 160 rows of 20 runs (0 run(s) with a rewritten history left out)" in out.err
    assert serving.read_bytes() == before
    with pytest.raises(SystemExit) as refused:
        main([*arguments, "--folds", "1"])
    assert refused.value.code == 2
    assert "--folds: 1 is out of range: from 2 to 100" in capsys.readouterr().err


def test_a_candidate_is_not_promoted_on_too_few_recent_failures(tmp_path: Path) -> None:
    """A candidate that learnt the new agent is still not promoted while the recent runs hold
    fewer than 20 failing steps: an AUC over a handful of them is noise (tau-bench's retraining
    promoted candidates that were worse on the family's other runs)."""
    shipped = _rows("alpha", 150, "err_any", seed=1)
    serving = _serving(tmp_path, shipped)
    before = serving.read_bytes()
    recent = _rows("beta", 40, "act1_read", seed=2)
    for row in recent:  # one failing step in every other run: 20 runs' worth, minus one
        run = int(str(row["trajectory_id"]).rsplit("-", 1)[1])
        row["action_failed"] = int(row["step"] == 1 and run % 2 == 0 and run != 0)
    outcome = retrain(shipped, recent, serving, model="logreg")
    assert not outcome.promoted
    assert f"hold {MIN_POSITIVES - 1} failing step(s), fewer than 20: too few to compare" in outcome.reason
    assert outcome.folds == 0
    assert serving.read_bytes() == before


def test_every_recent_failure_counts_so_a_rarely_failing_family_is_learnt_after_20_failures(tmp_path: Path) -> None:
    """One failing step a run: after 20 runs the comparison holds 20 failing steps (every run is
    scored by a candidate that did not learn it) and a candidate that learnt the family is
    promoted; a quarter held back would have held 5."""
    shipped = _rows("alpha", 150, "err_any", seed=1)
    serving = _serving(tmp_path, shipped)
    recent = _rows("beta", 20, "act1_read", seed=2, steps=12)
    column = feature_index("act1_read")
    for row in recent:  # the step that fails is the one that reads
        row["features"][column] = float(row["step"] == 3)
        row["action_failed"] = int(row["step"] == 3)
    outcome = retrain(shipped, recent, serving, model="logreg")
    assert outcome.promoted, outcome.reason
    assert outcome.folds == FOLDS


def test_folds_deal_the_runs_stably_into_disjoint_groups() -> None:
    recent = _rows("beta", 10, "act1_read", seed=2)
    groups = folds_of(recent)
    runs = {row["trajectory_id"] for row in recent}
    assert len(groups) == FOLDS and set().union(*groups) == runs
    assert sum(len(group) for group in groups) == len(runs)  # disjoint
    assert sorted(len(group) for group in groups) == [2, 2, 3, 3]
    assert folds_of(list(reversed(recent))) == groups  # stable: the order rows come in does not matter
    assert len(folds_of(recent[:16])) == 2  # two runs: two groups of one


def test_rows_marked_learn_are_never_held_out_by_trains_split() -> None:
    rows = _rows("beta", 40, "act1_read", seed=2)
    split = split_by_trajectory(rows, 0.2)
    held = {rows[i]["trajectory_id"] for i in split.test}
    assert held  # some runs are held out by the hash
    marked = [{**row, "learn": True} if row["trajectory_id"] in held else row for row in rows]
    # Marked runs all train; nothing is left to hold out, which the split refuses to give.
    with pytest.raises(JudgeTrainingError, match="cannot hold out"):
        split_by_trajectory(marked, 0.2)
    half = [{**row, "learn": True} if row["trajectory_id"] in sorted(held)[:1] else row for row in rows]
    assert len(split_by_trajectory(half, 0.2).test) == len(split.test) - 8


def test_the_auc_of_cross_fitted_scores_counts_pairs_within_a_group_only() -> None:
    """Two groups, each ranked perfectly by its own model, one model's scale far above the other's:
    pooled, the high group's passing steps outrank the low group's failing one (AUC 0.83); within
    groups the ranking is perfect (1.0), and a mixed-up group pulls it down by its share of pairs."""
    y = np.asarray([0, 1, 0, 1, 0, 1, 1])
    scores = np.asarray([0.10, 0.20, 0.80, 0.90, 0.82, 0.95, 0.97])
    groups = np.asarray([0, 0, 1, 1, 1, 1, 1])
    assert auc(y, scores) == 10 / 12
    assert grouped_auc(y, scores, groups) == 1.0
    scores[2] = 0.99  # the high group's first passing step now outranks its three failing ones
    # Pairs: group 0 has 1 (right), group 1 has 2 x 3 = 6 of which 3 are wrong.
    assert grouped_auc(y, scores, groups) == (1 * 1.0 + 6 * 0.5) / 7
    assert np.isnan(grouped_auc(np.asarray([1, 1]), np.asarray([0.1, 0.2]), np.asarray([0, 1])))


def test_the_gap_over_resampled_runs_refuses_a_candidate_better_on_one_run_only() -> None:
    """Ten runs of two failing and two passing steps, one group. A candidate that ranks every run
    as the serving model does is not worse in any resample (0); one that is right on every run
    where the serving model is wrong is better in all of them; one better on one run and worse on
    another (the same AUC over the runs as they came) is worse in many resamples."""
    runs = [f"run-{number}" for number in range(10) for _ in range(4)]
    y = np.asarray([0, 0, 1, 1] * 10)
    groups = np.zeros(len(y), dtype=np.int64)
    right = np.asarray([0.1, 0.2, 0.8, 0.9] * 10)
    wrong = np.asarray([0.8, 0.9, 0.1, 0.2] * 10)
    assert gap_low(y, right, right, groups, runs) == 0.0
    assert gap_low(y, right, wrong, groups, runs) > 0.5
    serving, candidate = right.copy(), right.copy()
    candidate[0:4] = wrong[0:4] + 0.05  # worse on run 0 ...
    serving[4:8] = wrong[4:8] + 0.05  # ... better on run 1
    assert grouped_auc(y, candidate, groups) == grouped_auc(y, serving, groups)  # not worse as they came
    assert gap_low(y, candidate, serving, groups, runs) < -AUC_TOLERANCE  # not shown not worse

"""Training: labels, export parity, held-out evaluation, CLI, and clear errors on bad data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from judge.calibrate import OnlineThreshold
from judge.card import card_path, read_card
from judge.cli import main
from judge.features import FEATURE_VERSION, N_FEATURES
from judge.labels import make_labels
from judge.model import JudgeModel
from judge.rows import JudgeTrainingError, load_rows, matrix, write_rows
from judge.train import TrainConfig, train
from tests.judge.helpers import synthetic_rows

FAST_GBDT = {"n_estimators": 30, "max_depth": 3, "learning_rate": 0.2, "subsample": 0.8}


@pytest.mark.parametrize("kind", ["logreg", "gbdt"])
def test_train_export_scores_match_sklearn(kind: str, tmp_path: Path) -> None:
    # Enough runs that the held-out fifth (a share calibrated on the rest, scores in steps: the
    # features are 0 or 1) lands near the target whatever the draw: with 120 it ranged 0.30-0.46.
    rows = synthetic_rows(trajectories=400)
    out = tmp_path / "judge.onnx"
    result = train(rows, TrainConfig(model=kind, gbdt=FAST_GBDT), out)  # type: ignore[arg-type]
    x = matrix(rows)
    python_scores = result.estimator.predict_proba(x)[:, 1]
    onnx_scores = JudgeModel.load(out).score_batch(x)
    assert np.max(np.abs(onnx_scores - python_scores)) <= 1e-4
    assert result.parity_max_abs_diff <= 1e-4
    card = read_card(card_path(out))
    evaluation = card.evaluation
    assert evaluation["auc"] > 0.65  # the learnable signal was found on held-out trajectories
    assert evaluation["cloud_share"] == pytest.approx(0.4, abs=0.08)
    assert {"precision", "recall", "brier", "reliability"} <= set(evaluation)
    assert card.training_data["held_out_trajectories"] > 0
    assert card.training_data["train_trajectories"] + card.training_data["held_out_trajectories"] == 400


def test_the_cards_run_counts_add_up_when_some_rows_have_no_label(tmp_path: Path) -> None:
    # An imported run's last step has no label (nothing followed it): the split indexes the
    # labelled rows, and the card counts the runs on each side of it from those.
    rows = synthetic_rows(trajectories=60)
    for row in rows:
        row["action_failed"] = None if row["step"] in (1, 8) else row["edge_wrong"]
        row["replayed"] = True
    train(rows, TrainConfig(model="logreg", labels="failed"), tmp_path / "judge.onnx")
    data = read_card(card_path(tmp_path / "judge.onnx")).training_data
    assert data["trajectories"] == 60
    assert data["train_trajectories"] + data["held_out_trajectories"] == 60
    assert data["train_rows"] + data["held_out_rows"] == data["labelled_rows"] == 60 * 6


def test_split_is_by_trajectory(tmp_path: Path) -> None:
    from judge.rows import split_by_trajectory

    rows = synthetic_rows(trajectories=50)
    split = split_by_trajectory(rows, 0.3)
    train_ids = {rows[i]["trajectory_id"] for i in split.train}
    test_ids = {rows[i]["trajectory_id"] for i in split.test}
    assert train_ids and test_ids and not train_ids & test_ids


def test_label_sources() -> None:
    rows = synthetic_rows(trajectories=4, steps=4)
    assert make_labels(rows, "agreement").y.tolist() == [r["edge_wrong"] for r in rows]
    assert make_labels(rows, "teacher").y.tolist() == [r["teacher_label"] for r in rows]
    outcome = make_labels(rows, "outcome")
    for index, label in zip(outcome.rows, outcome.y, strict=True):
        row = rows[index]
        assert label == int((row["target"] == "cloud") == row["outcome"]["success"])
    # Credit spread: each run's credited steps share one unit of weight.
    by_run: dict[str, float] = {}
    for index, label, weight in zip(outcome.rows, outcome.y, outcome.weight, strict=True):
        if label:
            by_run[rows[index]["trajectory_id"]] = by_run.get(rows[index]["trajectory_id"], 0.0) + weight
    assert all(total == pytest.approx(1.0) for total in by_run.values())
    heuristic = make_labels(rows, "heuristic")
    assert all(label == 1 for label, row in zip(heuristic.y, rows, strict=True) if row["action"] == "edit")


def test_no_positive_labels_is_an_error() -> None:
    rows = synthetic_rows(trajectories=10)
    for row in rows:
        row["edge_wrong"] = 0
    with pytest.raises(JudgeTrainingError, match="no positive"):
        train(rows, TrainConfig())
    for row in rows:
        row["edge_wrong"] = None
    with pytest.raises(JudgeTrainingError, match="no row has a value for edge_wrong"):
        train(rows, TrainConfig())


def _write(tmp_path: Path, rows: list[Any], raw: bytes = b"") -> Path:
    path = tmp_path / "steps.jsonl"
    path.write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in rows) + raw)
    return path


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda row: row.pop("features"), r"steps\.jsonl:3: missing field\(s\) features"),
        (lambda row: row.pop("trajectory_id"), r"missing field\(s\) trajectory_id"),
        (
            lambda row: row.update(feature_version=99),
            f"feature_version 99, this judge computes version {FEATURE_VERSION}",
        ),
        (lambda row: row.update(features=[0.0] * 5), f"features must be a list of {N_FEATURES} numbers, got 5"),
        (lambda row: row.update(target="gpu"), "target must be 'edge' or 'cloud'"),
    ],
)
def test_bad_rows_name_the_line_and_the_problem(tmp_path: Path, mutate: Any, message: str) -> None:
    rows = synthetic_rows(trajectories=1, steps=4)
    mutate(rows[2])
    with pytest.raises(JudgeTrainingError, match=message):
        load_rows(_write(tmp_path, rows), show_progress=False)


def test_bad_json_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(JudgeTrainingError, match=r"steps\.jsonl:2: not valid JSON"):
        load_rows(_write(tmp_path, synthetic_rows(trajectories=1, steps=1), b"{oops\n"), show_progress=False)
    with pytest.raises(JudgeTrainingError, match="no rows"):
        load_rows(_write(tmp_path, []), show_progress=False)
    with pytest.raises(JudgeTrainingError, match="cannot read"):
        load_rows(tmp_path / "absent.jsonl", show_progress=False)


def test_cli_train_calibrate_evaluate_then_serve(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "steps.jsonl"
    write_rows(data, synthetic_rows(trajectories=150))
    out = tmp_path / "model" / "judge.onnx"
    assert main(["train", "--data", str(data), "--out", str(out), "--model", "logreg", "--cloud-share", "0.3"]) == 0
    assert "held-out AUC" in capsys.readouterr().out
    assert main(["calibrate", "--model", str(out), "--data", str(data), "--cloud-share", "0.5"]) == 0
    assert "card updated" in capsys.readouterr().out
    card = read_card(card_path(out))
    assert card.target_cloud_share == 0.5
    assert card.evaluation["calibration"]["cloud_share"] == pytest.approx(0.5, abs=0.01)
    assert card.evaluation["calibration"]["data"] == "steps.jsonl"  # no machine paths in the card
    assert main(["evaluate", "--model", str(out), "--data", str(data), "--held-out", "0.2", "--json"]) == 0
    figures = orjson.loads(capsys.readouterr().out)["candidate"]
    assert figures["auc"] > 0.6 and figures["cloud_share"] == pytest.approx(0.5, abs=0.1)
    # Serve: load, score each step, hold the share online.
    model = JudgeModel.load(out)
    controller = OnlineThreshold(target_share=0.5, initial=model.threshold)
    decisions = [controller.decide(model.score(row), 0, 0)[0] for row in matrix(load_rows(data))]
    assert np.mean(decisions) == pytest.approx(0.5, abs=0.05)


def test_cli_errors_exit_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = synthetic_rows(trajectories=10)
    for row in rows:
        row["edge_wrong"] = 0
    data = _write(tmp_path, rows)
    assert main(["train", "--data", str(data), "--out", str(tmp_path / "j.onnx")]) == 2
    assert "tandem judge train: error: the 'agreement' labels have no positive" in capsys.readouterr().err
    assert not (tmp_path / "j.onnx").exists()  # no degenerate model written
    assert main(["evaluate", "--model", str(tmp_path / "absent.onnx"), "--data", str(data)]) == 2
    assert "absent.onnx: model file not found" in capsys.readouterr().err


def test_rows_without_failure_labels_are_refused_by_name() -> None:
    rows = synthetic_rows(trajectories=10)
    with pytest.raises(JudgeTrainingError, match="no row has a value for action_failed: the 'failed' labels"):
        train(rows, TrainConfig(labels="failed"))
    for row in rows:
        row["action_failed"] = 1
    with pytest.raises(JudgeTrainingError, match="every one of the 80 'failed' labels is positive"):
        train(rows, TrainConfig(labels="failed"))


def test_combined_labels_take_the_most_direct_signal_and_weigh_failed_runs() -> None:
    rows = synthetic_rows(trajectories=4, steps=3)
    for index, row in enumerate(rows):
        row["edge_wrong"] = 1 if index == 0 else None
        row["teacher_label"] = 0 if index in (0, 1) else None
        row["action_failed"] = 0 if index == 0 else (1 if index % 2 else 0) if index < 10 else None
        row["outcome"] = {"success": index >= 6}
    combined = make_labels(rows, "combined")
    assert combined.rows == list(range(10))  # rows 10, 11 have no label of any kind
    assert combined.y.tolist()[:3] == [1, 0, 0]  # edge_wrong, then teacher_label, then action_failed
    assert combined.weight.tolist()[:6] == [2.0] * 6 and combined.weight.tolist()[6:] == [1.0] * 4
    for row in rows:
        row["edge_wrong"] = row["teacher_label"] = row["action_failed"] = None
    assert make_labels(rows, "combined").source == "heuristic"  # nothing measured: the cold start


@pytest.mark.parametrize("kind", ["gbdt", "logreg"])
def test_an_ignored_feature_is_never_read_by_the_model(kind: str, tmp_path: Path) -> None:
    from judge.features import feature_index

    # `err_any` carries most of the synthetic rows' signal: ignored, the model must do without it.
    rows = synthetic_rows()
    for row in rows:
        row["action_failed"] = row["edge_wrong"]
        row["replayed"] = True
    out = tmp_path / "judge.onnx"
    data = tmp_path / "rows.jsonl"
    write_rows(data, rows)
    args = ["train", "--data", str(data), "--out", str(out), "--model", kind, "--labels", "failed"]
    assert main([*args, "--ignore", "err_any, act1_read"]) == 0
    card = read_card(card_path(out))
    assert card.model["ignored_features"] == ["err_any", "act1_read"]
    assert card.made_by.endswith("--ignore err_any,act1_read")
    x = matrix(rows)
    columns = [feature_index("err_any"), feature_index("act1_read")]
    changed = x.copy()
    changed[:, columns] = 1.0 - x[:, columns]  # every value of the ignored features flipped
    model = JudgeModel.load(out)
    assert np.max(np.abs(model.score_batch(x) - model.score_batch(changed))) < 1e-6
    assert card.evaluation["auc"] < 0.65  # what is left is mostly noise
    # A name no vector holds is refused, with the name.
    assert main([*args, "--ignore", "err_anything"]) == 2


def _two_families(tmp_path: Path) -> Path:
    """Synthetic rows labelled by the harness, as two families, written to a file."""
    rows = synthetic_rows()
    for row in rows:
        row["action_failed"] = row["edge_wrong"]
        row["replayed"] = True
        row["family"] = "a-1" if row["trajectory_id"] < "t6" else "b-1"
    data = tmp_path / "rows.jsonl"
    write_rows(data, rows)
    return data


def test_lofo_and_retrain_keep_the_ignored_features(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from judge.retrain import _ignored_by

    data = _two_families(tmp_path)
    assert main(["lofo", "--data", str(data), "--model", "logreg", "--bootstrap", "10", "--ignore", "err_any"]) == 0
    assert "without err_any" in capsys.readouterr().out
    out = tmp_path / "judge.onnx"
    assert main(["train", "--data", str(data), "--out", str(out), "--model", "logreg", "--ignore", "err_any"]) == 0
    assert _ignored_by(out, "state") == ("err_any",) and _ignored_by(out, "draft") == ()
    assert _ignored_by(tmp_path / "none.onnx", "state") == ()


def test_the_tree_shape_is_chosen_kept_on_the_card_and_inherited_by_retrain(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from judge.retrain import _trees_of

    data = _two_families(tmp_path)
    out = tmp_path / "judge.onnx"
    shape = ["--trees", "20", "--depth", "2", "--rate", "0.05"]
    assert main(["train", "--data", str(data), "--out", str(out), "--labels", "failed", *shape]) == 0
    card = read_card(card_path(out))
    assert {k: card.model["params"][k] for k in ("n_estimators", "max_depth", "learning_rate")} == {
        "n_estimators": 20,
        "max_depth": 2,
        "learning_rate": 0.05,
    }
    assert card.made_by.endswith("--trees 20 --depth 2 --rate 0.05")  # the command rebuilds this model
    # A candidate retrained for this serving model has its shape; another kind gets the defaults.
    assert _trees_of(out, "state") == {"n_estimators": 20, "max_depth": 2, "learning_rate": 0.05, "subsample": 0.8}
    assert _trees_of(out, "draft") is None and _trees_of(tmp_path / "none.onnx", "state") is None
    default = tmp_path / "default.onnx"
    assert main(["train", "--data", str(data), "--out", str(default), "--labels", "failed"]) == 0
    assert "--trees" not in read_card(card_path(default)).made_by  # the defaults are not spelled out
    # lofo takes the same options and names them in its title.
    assert main(["lofo", "--data", str(data), "--bootstrap", "10", "--labels", "failed", *shape]) == 0
    assert "gbdt --trees 20 --depth 2 --rate 0.05" in capsys.readouterr().out
    # A shape that cannot be fitted is one clear line and exit 2, not a traceback.
    # Out of range for the parser: refused before any work, naming the option.
    for bad in (["--depth", "0"], ["--trees", "0"], ["--rate", "0"]):
        with pytest.raises(SystemExit) as refused:
            main(["train", "--data", str(data), "--out", str(out), *bad])
        assert refused.value.code == 2
        assert f"argument {bad[0]}: {bad[1]}" in capsys.readouterr().err
    assert main(["train", "--data", str(data), "--out", str(out), "--rate", "1.5"]) == 2
    assert "trees and depth must be at least 1" in capsys.readouterr().err

"""`tandem judge evaluate` (candidate against serving, report with plots) and `promote`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import orjson

from judge.card import card_path, read_card
from judge.cli import main
from judge.rows import write_rows
from judge.train import TrainConfig, train
from tests.judge.helpers import synthetic_rows

SMALL = {"n_estimators": 30, "max_depth": 2, "learning_rate": 0.2, "subsample": 0.8}


def _models(tmp_path: Path) -> tuple[Path, Path, Path]:
    rows = synthetic_rows(trajectories=150, steps=6)
    for index, row in enumerate(rows):
        row["family"] = "alpha" if index % 2 else "beta"
    data = tmp_path / "rows.jsonl"
    write_rows(data, rows)
    good = tmp_path / "good" / "judge.onnx"
    train(rows, TrainConfig(model="gbdt", gbdt=SMALL), good)
    # The same rows with the labels shuffled: a model that learned nothing.
    shuffled = [dict(row) for row in rows]
    labels = np.random.default_rng(1).permutation([row["edge_wrong"] for row in rows])
    for row, label in zip(shuffled, labels, strict=True):
        row["edge_wrong"] = int(label)
    bad = tmp_path / "bad" / "judge.onnx"
    train(shuffled, TrainConfig(model="gbdt", gbdt=SMALL), bad)
    return data, good, bad


def test_evaluate_compares_with_the_serving_model_and_writes_the_report(tmp_path: Path, capsys: Any) -> None:
    data, good, bad = _models(tmp_path)
    report = tmp_path / "report"
    args = ["evaluate", "--model", str(good), "--against", str(bad), "--data", str(data), "--labels", "agreement"]
    assert main([*args, "--held-out", "0.3", "--report", str(report)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("candidate: ") and "\nserving: " in out and "(not worse" in out
    figures = orjson.loads((report / "report.json").read_bytes())
    assert figures["candidate"]["auc"] > figures["serving"]["auc"] + 0.1
    assert set(figures["candidate"]["by_family"]) == {"alpha", "beta"}
    for plot in ("roc.png", "share.png", "calibration.png"):
        assert (report / plot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    markdown = (report / "report.md").read_text()
    assert "| candidate / alpha |" in markdown and "![ROC](roc.png)" in markdown


def test_promote_replaces_the_serving_model_only_when_the_candidate_is_not_worse(tmp_path: Path, capsys: Any) -> None:
    data, good, bad = _models(tmp_path)
    serving = tmp_path / "serving" / "judge.onnx"
    serving.parent.mkdir()
    serving.write_bytes(good.read_bytes())
    card_path(serving).write_bytes(card_path(good).read_bytes())
    before = serving.read_bytes()
    args = ["promote", "--serving", str(serving), "--data", str(data), "--labels", "agreement", "--held-out", "0.3"]
    assert main([*args, "--candidate", str(bad)]) == 2
    assert "not promoted" in capsys.readouterr().err and serving.read_bytes() == before
    serving.write_bytes(bad.read_bytes())
    card_path(serving).write_bytes(card_path(bad).read_bytes())
    assert main([*args, "--candidate", str(good)]) == 0
    assert serving.read_bytes() == good.read_bytes()
    card = read_card(card_path(serving))
    assert "not worse" in card.evaluation["promotion"]["decision"]


def test_promote_over_a_serving_model_that_cannot_be_compared(tmp_path: Path, capsys: Any) -> None:
    data, good, _ = _models(tmp_path)
    serving = tmp_path / "serving" / "judge.onnx"
    serving.parent.mkdir()
    serving.write_bytes(good.read_bytes())
    card = orjson.loads(card_path(good).read_bytes())
    card["feature_version"] = 1  # a model of the old features: it cannot score these rows
    card_path(serving).write_bytes(orjson.dumps(card))
    args = [
        "promote",
        "--serving",
        str(serving),
        "--candidate",
        str(good),
        "--data",
        str(data),
        "--labels",
        "agreement",
    ]
    assert main(args) == 0
    assert "cannot be compared" in capsys.readouterr().err
    assert read_card(card_path(serving)).feature_version != 1


def test_evaluate_defaults_to_the_label_the_rows_carry_and_counts_small_families(tmp_path: Path, capsys: Any) -> None:
    data, good, _ = _models(tmp_path)  # `good` was trained on `agreement` labels (its card says so)
    rows = [orjson.loads(line) for line in data.read_bytes().splitlines()]
    # Imported rows: the harness-status label only; a third family with a handful of positives.
    for index, row in enumerate(rows):
        row["action_failed"], row["edge_wrong"], row["teacher_label"] = row["edge_wrong"], None, None
        if index < 60:
            row["family"] = "gamma"
            row["action_failed"] = int(index < 5)
    imported = tmp_path / "imported.jsonl"
    write_rows(imported, rows)
    report = tmp_path / "report"
    assert main(["evaluate", "--model", str(good), "--data", str(imported), "--report", str(report)]) == 0
    captured = capsys.readouterr()
    assert "labels: failed (read from the data" in captured.err
    assert "  gamma: 60 steps (5 positives, 55 negatives): fewer than 20 positives: not scored" in captured.out
    alpha = next(line for line in captured.out.splitlines() if line.startswith("  alpha:"))
    assert "AUC " in alpha and "positives" in alpha
    figures = orjson.loads((report / "report.json").read_bytes())["candidate"]["by_family"]
    assert figures["gamma"]["scored"] is False and "auc" not in figures["gamma"]
    assert figures["alpha"]["scored"] is True and figures["alpha"]["positives"] >= 20
    assert (
        "| candidate / gamma | 60 | 5 | 55 | fewer than 20 positives: not scored |"
        in (report / "report.md").read_text()
    )

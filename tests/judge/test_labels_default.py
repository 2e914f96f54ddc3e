"""`tandem judge train` and `evaluate` read the label source from the data (or the model card)
when `--labels` is not given: the shipped data carries `action_failed`, so `failed`, the label
source the shipped judge's card names; a default of `agreement` would refuse that data."""

from __future__ import annotations

from pathlib import Path

from judge.card import card_path, read_card
from judge.labels import labels_in
from judge.model import DEFAULT_MODEL
from judge.rows import load_rows
from tests.judge.test_train import synthetic_rows

SHIPPED = Path(__file__).resolve().parents[2] / "judge" / "data" / "real-runs.jsonl.gz"


def test_the_shipped_data_is_read_as_failed_labels_as_its_card_says() -> None:
    rows = load_rows(SHIPPED, show_progress=False)
    assert labels_in(rows) == "failed" == read_card(card_path(DEFAULT_MODEL)).labels


def test_the_most_direct_label_a_row_carries_wins() -> None:
    rows = synthetic_rows(trajectories=2)
    assert labels_in(rows) == "agreement"
    for row in rows:
        row.pop("edge_wrong", None)
        row["teacher_label"] = None
        row["action_failed"] = 0
    assert labels_in(rows) == "failed"
    for row in rows:
        row.pop("action_failed")
    assert labels_in(rows) in ("outcome", "heuristic")

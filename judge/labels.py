"""Labels: which steps needed the cloud, from one of six sources.

- `failed` (real signals): the row's `action_failed`, 1 when the observation that followed the
  step's action showed an error signal (judge/signals.py: a traceback, a non-zero exit, a failing
  test, …). What `sees: state` judges: the chance that the action about to be taken fails. Rows
  written by `tandem judge import` carry it; so do exported gateway rows joined with step k+1.

- `agreement` (the Hera recipe): the row's `edge_wrong`, 1 when the edge's action on this state
  was wrong (so the cloud was needed). The best source where it exists: the simulation knows it,
  and replaying cloud trajectories through the edge measures it on real traffic.
- `outcome`: run outcomes, credit spread over steps. In a successful run the cloud steps get the
  credit (label 1, weights summing to 1 per run) and the edge steps are labelled sufficient (0);
  in a failed run the edge steps take the blame (1) and the cloud steps are labelled 0. Noisy
  per row, but unbiased over many runs of a random delegation policy.
- `teacher`: the row's `teacher_label`, written by `judge.label` (an LLM asked offline).
  Runs that one model ran whole (imported trajectories, rows marked `replayed`) have no
  cloud/edge contrast: a failed run's steps take the blame (1), a successful run's are 0.
- `heuristic`: a cold start with no data about outcomes: a step right after an error signal or an
  invalid tool call, or a step whose answer wrote or edited a file, is labelled cloud.
- `combined`: per row, the most direct signal it has: `edge_wrong` (agreement: a measured
  disagreement), else `teacher_label`, else `action_failed`; where the run's outcome is known,
  a row of a failed run weighs `FAILED_RUN_WEIGHT` times as much (its failures mattered). Rows with
  none of the three are left out; if no row has any, the heuristic labels are the cold start.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np
import numpy.typing as npt

from judge.features import feature_index
from judge.rows import JudgeTrainingError

LabelSource = Literal["failed", "combined", "agreement", "outcome", "teacher", "heuristic"]
FAILED_RUN_WEIGHT = 2.0
LABEL_SOURCES: tuple[str, ...] = get_args(LabelSource)


@dataclass(frozen=True)
class Labels:
    rows: list[int]  # indices of the rows that have a label from this source
    y: npt.NDArray[np.int64]
    weight: npt.NDArray[np.float64]
    source: str

    @property
    def positives(self) -> int:
        return int(self.y.sum())


def _binary(rows: list[dict[str, Any]], field: str, source: str) -> Labels:
    kept, values = [], []
    for index, row in enumerate(rows):
        value = row.get(field)
        if value is None:
            continue
        if isinstance(value, bool) or value not in (0, 1):
            raise JudgeTrainingError(f"row {index + 1}: {field} must be 0, 1 or null, got {value!r}")
        kept.append(index)
        values.append(int(value))
    if not kept:
        raise JudgeTrainingError(f"no row has a value for {field}: the {source!r} labels need it")
    return Labels(kept, np.asarray(values, dtype=np.int64), np.ones(len(kept)), source)


def _outcome(rows: list[dict[str, Any]]) -> Labels:
    runs: dict[str, list[int]] = defaultdict(list)
    for index, row in enumerate(rows):
        outcome = row.get("outcome")
        if isinstance(outcome, dict) and isinstance(outcome.get("success"), bool):
            runs[str(row["trajectory_id"])].append(index)
    if not runs:
        raise JudgeTrainingError("no row has an outcome with a boolean success: the 'outcome' labels need it")
    kept: list[int] = []
    y: list[int] = []
    weight: list[float] = []
    for indices in runs.values():
        success = rows[indices[0]]["outcome"]["success"]
        if all(rows[i].get("replayed") for i in indices):
            # One model ran it all: no contrast to credit; blame a failure on every step evenly.
            for index in indices:
                kept.append(index)
                y.append(int(not success))
                weight.append(1.0 / len(indices))
            continue
        # Credit goes to the cloud steps of a success and to the edge steps of a failure.
        credited = [i for i in indices if (rows[i]["target"] == "cloud") == success]
        others = [i for i in indices if i not in set(credited)]
        for group, label in ((credited, 1), (others, 0)):
            for index in group:
                kept.append(index)
                y.append(label)
                weight.append(1.0 / len(group))
    order = np.argsort(kept, kind="stable")
    return Labels(
        [kept[i] for i in order],
        np.asarray(y, dtype=np.int64)[order],
        np.asarray(weight, dtype=np.float64)[order],
        "outcome",
    )


def _heuristic(rows: list[dict[str, Any]]) -> Labels:
    error, invalid = feature_index("err_any"), feature_index("invalid_last")
    values = []
    for row in rows:
        features = row["features"]
        wrote = row.get("action") in ("write", "edit")
        values.append(int(bool(features[error]) or bool(features[invalid]) or wrote))
    return Labels(list(range(len(rows))), np.asarray(values, dtype=np.int64), np.ones(len(rows)), "heuristic")


def _combined(rows: list[dict[str, Any]]) -> Labels:
    kept, values, weights = [], [], []
    for index, row in enumerate(rows):
        value = next(
            (row.get(f) for f in ("edge_wrong", "teacher_label", "action_failed") if row.get(f) is not None), None
        )
        if value is None:
            continue
        if isinstance(value, bool) or value not in (0, 1):
            raise JudgeTrainingError(f"row {index + 1}: a label must be 0, 1 or null, got {value!r}")
        outcome = row.get("outcome")
        failed_run = isinstance(outcome, dict) and outcome.get("success") is False
        kept.append(index)
        values.append(int(value))
        weights.append(FAILED_RUN_WEIGHT if failed_run else 1.0)
    if not kept:
        return _heuristic(rows)
    return Labels(kept, np.asarray(values, dtype=np.int64), np.asarray(weights, dtype=np.float64), "combined")


def labels_in(rows: list[dict[str, Any]]) -> str:
    """The label source the rows themselves carry, the most direct first: `agreement` where a row
    has `edge_wrong`, else `teacher`, `failed` (`action_failed`, what `tandem judge import` and the
    shipped data have), `outcome`; `heuristic` when they carry none."""
    for field, source in (("edge_wrong", "agreement"), ("teacher_label", "teacher"), ("action_failed", "failed")):
        if any(row.get(field) is not None for row in rows):
            return source
    if any(isinstance(row.get("outcome"), dict) for row in rows):
        return "outcome"
    return "heuristic"


def make_labels(rows: list[dict[str, Any]], source: str) -> Labels:
    if source == "failed":
        labels = _binary(rows, "action_failed", source)
    elif source == "combined":
        labels = _combined(rows)
    elif source == "agreement":
        labels = _binary(rows, "edge_wrong", source)
    elif source == "teacher":
        labels = _binary(rows, "teacher_label", source)
    elif source == "outcome":
        labels = _outcome(rows)
    elif source == "heuristic":
        labels = _heuristic(rows)
    else:
        raise JudgeTrainingError(f"unknown label source {source!r}; one of {', '.join(LABEL_SOURCES)}")
    if labels.positives == 0:
        raise JudgeTrainingError(
            f"the {source!r} labels have no positive (cloud-needed) step among {len(labels.rows)} rows: "
            "a model trained on them would send nothing to the cloud"
        )
    if labels.positives == len(labels.rows):
        raise JudgeTrainingError(f"every one of the {len(labels.rows)} {source!r} labels is positive: nothing to learn")
    return labels

"""Evaluation figures for a judge, in numpy alone (serving machines need no scikit-learn)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]
# A group of steps (a family) with fewer positives than this gets its counts, not an AUC: with a
# handful of positives the AUC swings by tenths between resamples and reads as a finding it is not.
MIN_POSITIVES = 20


def auc(y: npt.NDArray[Any], scores: Floats, weight: Floats | None = None) -> float:
    """Area under the ROC curve: the chance a positive outscores a negative (ties count half)."""
    w = np.ones(len(y)) if weight is None else np.asarray(weight, dtype=np.float64)
    positive = np.asarray(y) == 1
    total_pos, total_neg = w[positive].sum(), w[~positive].sum()
    if total_pos == 0 or total_neg == 0:
        return float("nan")
    order = np.argsort(scores, kind="mergesort")
    sorted_scores, sorted_w, sorted_pos = scores[order], w[order], positive[order]
    # Group tied scores; each positive beats the negatives below its group and half of its own.
    boundaries = np.flatnonzero(np.diff(sorted_scores)) + 1
    groups = np.split(np.arange(len(scores)), boundaries)
    below = 0.0
    wins = 0.0
    for group in groups:
        pos_w = sorted_w[group][sorted_pos[group]].sum()
        neg_w = sorted_w[group][~sorted_pos[group]].sum()
        wins += pos_w * (below + neg_w / 2)
        below += neg_w
    return float(wins / (total_pos * total_neg))


def grouped_auc(y: npt.NDArray[Any], scores: Floats, groups: npt.NDArray[Any]) -> float:
    """The AUC over pairs of a positive and a negative in the same group only: the mean of the
    groups' AUCs weighted by their pairs. Scores made by a different model per group (cross-fitting)
    are compared where they were made by one model; pooled, one model's higher scale would rank
    its group's negatives above another group's positives and read as a worse model."""
    positive = np.asarray(y) == 1
    wins = pairs = 0.0
    for group in np.unique(groups):
        members = np.asarray(groups) == group
        count = float(positive[members].sum()) * float((~positive[members]).sum())
        if count:
            wins += auc(np.asarray(y)[members], scores[members]) * count
            pairs += count
    return wins / pairs if pairs else float("nan")


def brier(y: npt.NDArray[Any], scores: Floats) -> float:
    return float(np.mean((scores - np.asarray(y, dtype=np.float64)) ** 2))


def reliability(y: npt.NDArray[Any], scores: Floats, bins: int = 10) -> list[dict[str, float]]:
    """Per score bin: how many steps, their mean score, and the share that were positive."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.digitize(scores, edges[1:-1]), 0, bins - 1)
    table = []
    for index in range(bins):
        members = which == index
        count = int(members.sum())
        if count:
            table.append(
                {
                    "low": round(float(edges[index]), 3),
                    "high": round(float(edges[index + 1]), 3),
                    "steps": count,
                    "mean_score": round(float(scores[members].mean()), 4),
                    "positive_rate": round(float(np.mean(np.asarray(y)[members])), 4),
                }
            )
    return table


def at_threshold(y: npt.NDArray[Any], scores: Floats, threshold: float) -> dict[str, float]:
    cloud = scores >= threshold
    positive = np.asarray(y) == 1
    true_pos = float(np.sum(cloud & positive))
    return {
        "threshold": round(threshold, 6),
        "cloud_share": round(float(cloud.mean()), 4),
        "precision": round(true_pos / max(float(cloud.sum()), 1.0), 4),
        "recall": round(true_pos / max(float(positive.sum()), 1.0), 4),
    }


def report(y: npt.NDArray[Any], scores: Floats, threshold: float) -> dict[str, Any]:
    """The evaluation block of a model card."""
    return {
        "steps": len(y),
        "positive_rate": round(float(np.mean(y)), 4),
        "auc": round(auc(y, scores), 4),
        "brier": round(brier(y, scores), 4),
        **at_threshold(y, scores, threshold),
        # What random delegation at the same cloud share would catch: recall equals the share.
        "random_recall_at_same_share": round(float(np.mean(scores >= threshold)), 4),
        "reliability": reliability(y, scores),
    }

"""Candidate against serving judge on held-out rows, and promotion when the candidate is not worse.

The held-out rows are those of the trajectories `split_by_trajectory` holds out (a stable hash of
the trajectory id, the split `train` uses), so a candidate trained on the same rows is judged on
runs it never saw. Figures are given for all held-out rows and per agent family (`family`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from judge.card import JudgeModelError, atomic_write, card_path, write_card
from judge.labels import Labels, make_labels
from judge.metrics import MIN_POSITIVES, grouped_auc, report
from judge.model import JudgeModel
from judge.rows import JudgeTrainingError, matrix, split_by_trajectory

AUC_TOLERANCE = 0.005  # "not worse": the candidate's held-out AUC may trail by this much (noise)
# Retraining on a few recent runs: "not worse" must hold in this share of resamples of the runs
# too (`gap_low`), not only on the runs as they came.
GAP_PERCENTILE = 10
GAP_RESAMPLES = 200


@dataclass
class Comparison:
    figures: dict[str, Any]  # per model name: overall and per-family figures
    scores: dict[str, npt.NDArray[np.float64]]  # per model name: held-out scores
    y: npt.NDArray[np.int64]
    families: list[str]
    not_worse: bool
    reason: str


def _held_out(rows: list[dict[str, Any]], labels: Labels, fraction: float) -> list[int]:
    labelled = [rows[i] for i in labels.rows]
    return split_by_trajectory(labelled, fraction).test if fraction > 0 else list(range(len(labelled)))


def _figures(
    y: npt.NDArray[np.int64], scores: npt.NDArray[np.float64], threshold: float, families: list[str]
) -> dict[str, Any]:
    figures: dict[str, Any] = report(y, scores, threshold)
    by_family = {}
    for family in sorted(set(families)):
        members = np.asarray([f == family for f in families])
        by_family[family] = family_figures(y[members], scores[members], threshold)
    figures["by_family"] = by_family
    return figures


def family_figures(y: npt.NDArray[np.int64], scores: npt.NDArray[np.float64], threshold: float) -> dict[str, Any]:
    """One family's figures: its counts always; its AUC and the rest only with `MIN_POSITIVES`
    positives and a negative (else `scored` is false and `note` says why)."""
    positives = int(y.sum())
    counts = {"steps": len(y), "positives": positives, "negatives": len(y) - positives}
    if positives < MIN_POSITIVES or positives == len(y):
        note = f"fewer than {MIN_POSITIVES} positives: not scored" if positives < MIN_POSITIVES else "no negative"
        share = round(float(np.mean(scores >= threshold)), 4) if len(y) else None
        return {**counts, "scored": False, "note": note, "cloud_share": share}
    return {**counts, "scored": True, **report(y, scores, threshold)}


def compare(
    candidate: JudgeModel,
    serving: JudgeModel | None,
    rows: list[dict[str, Any]],
    labels: str,
    held_out: float,
    candidate_scores: npt.NDArray[np.float64] | None = None,
    groups: npt.NDArray[np.int64] | None = None,
) -> Comparison:
    """`candidate_scores`, when given, are the candidate's scores of the held-out labelled rows in
    their order (retrain's: each row scored by a candidate that did not learn its run, one per
    group of runs); with `groups` (each row's group), both models' AUCs count pairs of steps in the
    same group only, so that each pair of candidate scores is one model's."""
    chosen = make_labels(rows, labels)
    test = _held_out(rows, chosen, held_out)
    picked = [rows[chosen.rows[i]] for i in test]
    y = chosen.y[test]
    if y.min() == y.max():
        raise JudgeTrainingError(f"the {len(test)} held-out rows have one label value only; add trajectories")
    families = [str(row.get("family", "unknown")) for row in picked]
    if candidate_scores is None:
        candidate_scores = candidate.score_batch(matrix(picked, candidate.card.sees))
    elif len(candidate_scores) != len(picked):
        raise ValueError(f"{len(candidate_scores)} candidate scores for {len(picked)} held-out rows")
    scores = {"candidate": candidate_scores}
    figures = {"candidate": _figures(y, scores["candidate"], candidate.threshold, families)}
    if serving is None:
        _within(figures, scores, y, groups, families)
        return Comparison(figures, scores, y, families, True, "no serving model to compare with")
    scores["serving"] = serving.score_batch(matrix(picked, serving.card.sees))
    figures["serving"] = _figures(y, scores["serving"], serving.threshold, families)
    _within(figures, scores, y, groups, families)
    gap = figures["candidate"]["auc"] - figures["serving"]["auc"]
    not_worse = math.isfinite(gap) and gap >= -AUC_TOLERANCE
    reason = (
        f"held-out AUC {figures['candidate']['auc']} against the serving model's {figures['serving']['auc']} "
        f"({'not worse' if not_worse else 'worse'}: tolerance {AUC_TOLERANCE})"
    )
    return Comparison(figures, scores, y, families, not_worse, reason)


def _within(
    figures: dict[str, Any],
    scores: dict[str, npt.NDArray[np.float64]],
    y: npt.NDArray[np.int64],
    groups: npt.NDArray[np.int64] | None,
    families: list[str],
) -> None:
    if groups is None:
        return
    for name in figures:
        figures[name]["auc"] = round(grouped_auc(y, scores[name], groups), 4)
        figures[name]["auc_pairs"] = "a failing and a passing step of the same group of runs"
        for family, scoped in figures[name]["by_family"].items():
            if "auc" in scoped:
                members = np.asarray([f == family for f in families])
                scoped["auc"] = round(grouped_auc(y[members], scores[name][members], groups[members]), 4)


def gap_low(
    y: npt.NDArray[np.int64],
    candidate: npt.NDArray[np.float64],
    serving: npt.NDArray[np.float64],
    groups: npt.NDArray[np.int64],
    runs: list[str],
    resamples: int = GAP_RESAMPLES,
    seed: int = 0,
) -> float:
    """The `GAP_PERCENTILE`th percentile of the candidate's AUC minus the serving model's (pairs
    within a group, `grouped_auc`) over resamples of whole runs: how much worse the candidate may
    be, given how few runs there are. Steps of a run are not independent; a run is resampled whole."""
    rng = np.random.default_rng(seed)
    by_run: dict[str, list[int]] = {}
    for index, run in enumerate(runs):
        by_run.setdefault(run, []).append(index)
    members = [np.asarray(indices) for indices in by_run.values()]
    gaps = []
    for _ in range(resamples):
        picked = np.concatenate([members[i] for i in rng.integers(0, len(members), len(members))])
        gap = grouped_auc(y[picked], candidate[picked], groups[picked]) - grouped_auc(
            y[picked], serving[picked], groups[picked]
        )
        if math.isfinite(gap):
            gaps.append(gap)
    return float(np.percentile(gaps, GAP_PERCENTILE)) if gaps else float("nan")


def write_report(comparison: Comparison, folder: Path, title: str) -> list[Path]:
    """report.md, report.json and three PNG plots (ROC, cloud share vs failing steps caught,
    calibration) in `folder`; the paths written."""
    from judge.plots import calibration_plot, roc_plot, share_plot

    folder.mkdir(parents=True, exist_ok=True)
    written = [
        roc_plot(comparison.y, comparison.scores, folder / "roc.png"),
        share_plot(comparison.y, comparison.scores, folder / "share.png"),
        calibration_plot(comparison.y, comparison.scores, folder / "calibration.png"),
    ]
    (folder / "report.json").write_bytes(orjson.dumps(comparison.figures, option=orjson.OPT_INDENT_2))
    lines = [
        f"# {title}",
        "",
        comparison.reason,
        "",
        "| model | rows | positives | negatives | AUC | Brier | cloud share | recall | precision |",
    ]
    lines.append("|---|---|---|---|---|---|---|---|---|")
    for name, figures in comparison.figures.items():
        for scope, f in [("all", figures), *figures["by_family"].items()]:
            label = name if scope == "all" else f"{name} / {scope}"
            positives = f.get("positives", round(f["positive_rate"] * f["steps"]) if "positive_rate" in f else "")
            negatives = f.get("negatives", f["steps"] - positives if isinstance(positives, int) else "")
            scored = [f.get(key, "") for key in ("auc", "brier", "cloud_share", "recall", "precision")]
            if f.get("scored") is False:
                scored = [f["note"], "", f.get("cloud_share", ""), "", ""]
            cells = [label, f["steps"], positives, negatives, *scored]
            lines.append("| " + " | ".join(str(cell) for cell in cells) + " |")
    lines += ["", "![ROC](roc.png)", "", "![cloud share against failing steps caught](share.png)", ""]
    lines += ["![calibration](calibration.png)", ""]
    (folder / "report.md").write_text("\n".join(lines))
    return [*written, folder / "report.json", folder / "report.md"]


def promote(candidate_path: Path, serving_path: Path, comparison: Comparison) -> None:
    """Replace the serving model and card with the candidate's; the card records the comparison.

    The model file is replaced first, then the card: a gateway that reloads between the two sees
    a card that does not match and keeps its old model until the card lands (judge/model.py)."""
    if not comparison.not_worse:
        raise JudgeModelError(f"{candidate_path}: not promoted: {comparison.reason}")
    candidate = JudgeModel.load(candidate_path)
    card = candidate.card
    card.evaluation["promotion"] = {"against": str(serving_path.name), "decision": comparison.reason}
    atomic_write(serving_path, candidate_path.read_bytes())
    write_card(card_path(serving_path), card)

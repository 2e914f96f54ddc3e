"""The evaluation report's plots (matplotlib, imported only here: training and serving need none)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

Scores = dict[str, npt.NDArray[np.float64]]


def _figure() -> tuple[Any, Any, Any]:
    import matplotlib  # type: ignore[import-not-found,unused-ignore]

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt  # type: ignore[import-not-found,unused-ignore]

    figure, axes = plt.subplots(figsize=(5, 4), dpi=100)
    return plt, figure, axes


def _curve(y: npt.NDArray[np.int64], score: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], ...]:
    """Share of steps sent, false-positive rate, true-positive rate, as the threshold falls."""
    order = np.argsort(-score, kind="mergesort")
    positives = np.cumsum(y[order] == 1)
    negatives = np.cumsum(y[order] == 0)
    sent = np.arange(1, len(y) + 1) / len(y)
    tpr = positives / max(int((y == 1).sum()), 1)
    fpr = negatives / max(int((y == 0).sum()), 1)
    return np.concatenate(([0.0], sent)), np.concatenate(([0.0], fpr)), np.concatenate(([0.0], tpr))


def roc_plot(y: npt.NDArray[np.int64], scores: Scores, path: Path) -> Path:
    plt, figure, axes = _figure()
    for name, score in scores.items():
        _, fpr, tpr = _curve(y, score)
        axes.plot(fpr, tpr, label=name)
    axes.plot([0, 1], [0, 1], linestyle=":", color="grey", label="chance")
    axes.set(xlabel="false-positive rate", ylabel="true-positive rate", title="ROC, held-out steps")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path


def share_plot(y: npt.NDArray[np.int64], scores: Scores, path: Path) -> Path:
    plt, figure, axes = _figure()
    for name, score in scores.items():
        sent, _, caught = _curve(y, score)
        axes.plot(sent, caught, label=name)
    axes.plot([0, 1], [0, 1], linestyle=":", color="grey", label="random")
    axes.axvspan(0.35, 0.45, color="orange", alpha=0.15, label="target share")
    axes.set(xlabel="cloud share", ylabel="failing steps caught", title="Cloud share against failing steps caught")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path


def calibration_plot(y: npt.NDArray[np.int64], scores: Scores, path: Path, bins: int = 10) -> Path:
    plt, figure, axes = _figure()
    for name, score in scores.items():
        edges = np.quantile(score, np.linspace(0, 1, bins + 1))
        which = np.clip(np.searchsorted(edges[1:-1], score, side="right"), 0, bins - 1)
        means = [(score[which == b].mean(), y[which == b].mean()) for b in range(bins) if (which == b).any()]
        axes.plot([m[0] for m in means], [m[1] for m in means], marker="o", label=name)
    top = float(max(s.max() for s in scores.values()))
    axes.plot([0, top], [0, top], linestyle=":", color="grey", label="calibrated")
    axes.set(xlabel="mean score (deciles)", ylabel="share that failed", title="Calibration, held-out steps")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path

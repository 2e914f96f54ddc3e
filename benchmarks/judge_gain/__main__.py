"""The per-run term of the cloud-share controller, measured: each family's steps scored by a
judge trained on the other families (as `tandem judge lofo`), replayed through the controller
(`judge.calibrate.OnlineThreshold`, eight runs served at once, as `tandem judge share`) with
each per-run term, and per family the share held, the share of its failing steps sent to the
cloud, and how far the runs' own shares spread.

    python -m benchmarks.judge_gain --data judge/data/real-runs.jsonl.gz [--sees draft] [--ignore …]

The terms compared: the one served (relative to the threshold, `trajectory_gain` 0.5), the one
served before it (0.5 × the run's excess share, in score units), and none (the share held
globally only). Method and figures: README.md.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

import numpy as np
import numpy.typing as npt

from judge.calibrate import OnlineThreshold, threshold_for_share
from judge.defaults import ADAPT_RATE, THRESHOLD_BOUNDS, TRAJECTORY_GAIN
from judge.labels import make_labels
from judge.lofo import _scores
from judge.modes import blinded, ignored_columns, tree_params
from judge.rows import load_rows, matrix
from judge.share import replay
from judge.train import TrainConfig, fit_estimator

Run = tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]


class ScoreUnits(OnlineThreshold):
    """The per-run term as it was served before: `gain × (smoothed share − target)` added to
    the threshold in score units, whatever the scores' range."""

    def threshold_for(self, cloud_steps: int, answered_steps: int) -> float:
        smoothed = (cloud_steps + self.prior_steps * self.target_share) / (answered_steps + self.prior_steps)
        return self._clamp(self.base + self.trajectory_gain * (smoothed - self.target_share))


TERMS: dict[str, tuple[type[OnlineThreshold], float]] = {
    "relative 0.5 (served)": (OnlineThreshold, TRAJECTORY_GAIN),
    "score units 0.5 (before)": (ScoreUnits, 0.5),
    "none": (OnlineThreshold, 0.0),
}


def held_out_runs(data: Path, sees: str, ignore: tuple[str, ...]) -> dict[str, tuple[float, list[Run]]]:
    """Per family: the threshold of the judge trained without it (40% of the others' steps),
    and its runs, each step scored by that judge, with whether the step's action failed."""
    rows = load_rows(data, show_progress=False)
    config = TrainConfig(
        model="gbdt", labels="failed", cloud_share=0.4, sees=sees, ignore=ignore, gbdt=tree_params(60, 3, 0.05)
    )
    labels = make_labels(rows, "failed")
    picked = [rows[i] for i in labels.rows]
    families = np.asarray([str(row.get("family") or "unknown") for row in picked])
    x = matrix(picked, sees)
    fit_x = blinded(x, ignored_columns(sees, ignore))
    out: dict[str, tuple[float, list[Run]]] = {}
    for family in sorted(set(families.tolist())):
        inside = families == family
        estimator = fit_estimator(config, fit_x[~inside], labels.y[~inside], labels.weight[~inside])
        threshold = threshold_for_share(_scores(estimator, x[~inside], sees), 0.4)
        scores = _scores(estimator, x[inside], sees)
        steps: dict[str, list[tuple[int, float, bool]]] = defaultdict(list)
        for index, score, label in zip(np.flatnonzero(inside), scores, labels.y[inside], strict=True):
            row = picked[index]
            steps[str(row["trajectory_id"])].append((int(row["step"]), float(score), bool(label)))
        runs = [sorted(run) for run in steps.values()]
        out[family] = (
            threshold,
            [(np.asarray([s for _, s, _ in r]), np.asarray([f for _, _, f in r], dtype=bool)) for r in runs],
        )
    return out


def measure(threshold: float, runs: list[Run], term: tuple[type[OnlineThreshold], float]) -> tuple[float, float, float]:
    """(share held, share of failing steps sent to the cloud, spread of the runs' shares: the
    standard deviation over runs of 10 steps or more)."""
    kind, gain = term
    controller = kind(0.4, threshold, THRESHOLD_BOUNDS[0], THRESHOLD_BOUNDS[1], ADAPT_RATE, trajectory_gain=gain)
    decisions, steps = replay([scores for scores, _ in runs], controller, 8)
    failed = np.asarray([runs[run][1][step] for run, step in steps], dtype=bool)
    cloud = np.zeros(len(runs))
    answered = np.zeros(len(runs))
    for (run, _step), decided in zip(steps, decisions, strict=True):
        cloud[run] += decided
        answered[run] += 1
    shares = cloud[answered >= 10] / answered[answered >= 10]
    return float(decisions.mean()), float(decisions[failed].mean()), float(shares.std())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--sees", choices=("state", "draft"), default="state")
    parser.add_argument("--ignore", default="", help="features the judges are not given (as `make judge-model`)")
    args = parser.parse_args()
    ignore = tuple(name for name in args.ignore.split(",") if name)
    print(f"judge sees {args.sees}; each family scored by a judge trained without it; 8 runs at once")
    print(
        "| family | failing steps | "
        + " | ".join(f"{name}: share, failing to cloud, runs' sd" for name in TERMS)
        + " |"
    )
    print("|---|---|" + "---|" * len(TERMS))
    for family, (threshold, runs) in held_out_runs(args.data, args.sees, ignore).items():
        failing = int(sum(int(failed.sum()) for _, failed in runs))
        cells = []
        for term in TERMS.values():
            share, caught, spread = measure(threshold, runs, term)
            cells.append(f"{share:.1%}, {caught:.1%}, {spread:.2f}")
        print(f"| {family} | {failing:,} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

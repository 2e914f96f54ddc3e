"""A quick leave-one-family-out sweep of the state judge's model parameters and feature subsets:
per family and pooled AUC, each family scored by a model trained on the others (as `tandem judge
lofo`, without the bootstrap intervals, so that a choice takes seconds). It measures; it changes
no shipped model: a feature subset would also change what a served judge is given.

    python -m benchmarks.judge_lofo_sweep --data judge/data/real-runs.jsonl.gz [--sees draft] [CHOICE ...]

`--sees draft` does the same for the draft judge (the state's features and the draft's), with its
own choices: without the draft's shape (whether it is a call or prose) or its sizes.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

from judge.draft import STATE_AND_DRAFT_NAMES
from judge.features import FEATURE_NAMES
from judge.labels import make_labels
from judge.metrics import auc
from judge.rows import load_rows, matrix
from judge.train import TrainConfig, fit_estimator

SCALARS = {"step_log", "step_frac64", "context_chars_log"}  # where the run is and how long it grew
TASK = {"task_chars_log", "task_has_code", "task_mentions_test"}  # the task's shape
OUTPUT = {"output_bytes_log", "output_lines_log", "last_text_log"}  # sizes: a harness's formatting
ACTIONS = {name for name in FEATURE_NAMES if name.startswith("act")}  # the recent actions' kinds
REPEAT = {"repeat_last", "repeat_count", "type_streak"}  # whether the agent repeats itself
# The draft's shape: a call or prose, of no action or a plan. A reply with no command is
# mini-swe-agent's and SWE-agent's format error and tau-bench's answer to its customer.
DRAFT_SHAPE = {"draft_calls", "draft_prose", "draft_other", "draft_plan", "draft_invalid"}
DRAFT_SIZES = {"draft_text_log", "draft_command_log"}


def _gbdt(trees: int, depth: int, rate: float) -> dict[str, Any]:
    return {"n_estimators": trees, "max_depth": depth, "learning_rate": rate, "subsample": 0.8}


# name -> (gbdt parameters, None for logistic regression; features left out)
CHOICES: dict[str, tuple[dict[str, Any] | None, set[str]]] = {
    "shipped": (_gbdt(150, 3, 0.1), set()),
    "d2-n60": (_gbdt(60, 2, 0.1), set()),
    "d2-n30": (_gbdt(30, 2, 0.1), set()),
    "d1-n100": (_gbdt(100, 1, 0.1), set()),
    "d3-n60-lr.05": (_gbdt(60, 3, 0.05), set()),
    "logreg": (None, set()),
    "-scalars": (_gbdt(150, 3, 0.1), SCALARS),
    "-actions": (_gbdt(150, 3, 0.1), ACTIONS),
    "-task": (_gbdt(150, 3, 0.1), TASK),
    "-scalars-task": (_gbdt(150, 3, 0.1), SCALARS | TASK),
    "d2-n60-scalars-task": (_gbdt(60, 2, 0.1), SCALARS | TASK),
    "d3-n60-lr.05-scalars-task": (_gbdt(60, 3, 0.05), SCALARS | TASK),
    "d3-n60-lr.05-scalars-task-output": (_gbdt(60, 3, 0.05), SCALARS | TASK | OUTPUT),
    "logreg-scalars-task": (None, SCALARS | TASK),
    "d2-n60-lr.05-scalars-task": (_gbdt(60, 2, 0.05), SCALARS | TASK),
    "d3-n30-lr.05-scalars-task": (_gbdt(30, 3, 0.05), SCALARS | TASK),
    "d3-n100-lr.05-scalars-task": (_gbdt(100, 3, 0.05), SCALARS | TASK),
    "d4-n60-lr.05-scalars-task": (_gbdt(60, 4, 0.05), SCALARS | TASK),
    "d1-n100-scalars-task": (_gbdt(100, 1, 0.1), SCALARS | TASK),
    "-scalars-task-output": (_gbdt(150, 3, 0.1), SCALARS | TASK | OUTPUT),
    "d3-n30-lr.05-scalars-task-output": (_gbdt(30, 3, 0.05), SCALARS | TASK | OUTPUT),
    "d3-n100-lr.05-scalars-task-output": (_gbdt(100, 3, 0.05), SCALARS | TASK | OUTPUT),
    "d2-n60-lr.05-scalars-task-output": (_gbdt(60, 2, 0.05), SCALARS | TASK | OUTPUT),
    "logreg-scalars-task-output": (None, SCALARS | TASK | OUTPUT),
    "d3-n60-lr.05-scalars-task-actions": (_gbdt(60, 3, 0.05), SCALARS | TASK | ACTIONS),
    "d3-n60-lr.05-scalars-task-repeat": (_gbdt(60, 3, 0.05), SCALARS | TASK | REPEAT),
}
DRAFT_CHOICES: dict[str, tuple[dict[str, Any] | None, set[str]]] = {
    "shipped": (_gbdt(150, 3, 0.1), set()),
    "logreg": (None, set()),
    "-draft-shape": (_gbdt(150, 3, 0.1), DRAFT_SHAPE),
    "-draft-sizes": (_gbdt(150, 3, 0.1), DRAFT_SIZES),
    "-draft-shape-sizes": (_gbdt(150, 3, 0.1), DRAFT_SHAPE | DRAFT_SIZES),
    "-scalars-task": (_gbdt(150, 3, 0.1), SCALARS | TASK),
    "-scalars-task-draft-shape": (_gbdt(150, 3, 0.1), SCALARS | TASK | DRAFT_SHAPE),
    "d3-n60-lr.05-scalars-task-draft-shape": (_gbdt(60, 3, 0.05), SCALARS | TASK | DRAFT_SHAPE),
    "d3-n60-lr.05-draft-shape": (_gbdt(60, 3, 0.05), DRAFT_SHAPE),
    "d3-n100-lr.05-scalars-task-draft-shape": (_gbdt(100, 3, 0.05), SCALARS | TASK | DRAFT_SHAPE),
    "-scalars-task-output-draft-shape": (_gbdt(150, 3, 0.1), SCALARS | TASK | OUTPUT | DRAFT_SHAPE),
    "d3-n60-lr.05-scalars-task-output-draft-shape": (_gbdt(60, 3, 0.05), SCALARS | TASK | OUTPUT | DRAFT_SHAPE),
    "d3-n30-lr.05-scalars-task-output-draft-shape": (_gbdt(30, 3, 0.05), SCALARS | TASK | OUTPUT | DRAFT_SHAPE),
    "d3-n100-lr.05-scalars-task-output-draft-shape": (_gbdt(100, 3, 0.05), SCALARS | TASK | OUTPUT | DRAFT_SHAPE),
    "d2-n60-lr.05-scalars-task-output-draft-shape": (_gbdt(60, 2, 0.05), SCALARS | TASK | OUTPUT | DRAFT_SHAPE),
    "d4-n60-lr.05-scalars-task-output-draft-shape": (_gbdt(60, 4, 0.05), SCALARS | TASK | OUTPUT | DRAFT_SHAPE),
    "d3-n60-lr.05-scalars-task-output-draft-shape-sizes": (
        _gbdt(60, 3, 0.05),
        SCALARS | TASK | OUTPUT | DRAFT_SHAPE | DRAFT_SIZES,
    ),
    "logreg-scalars-task-output-draft-shape": (None, SCALARS | TASK | OUTPUT | DRAFT_SHAPE),
}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.judge_lofo_sweep", description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="rows of several families (family field)")
    parser.add_argument("--sees", choices=("state", "draft"), default="state", help="which judge (default state)")
    parser.add_argument(
        "--balance",
        action="store_true",
        help="weigh each family's rows to the same total (a large family does not set the model alone)",
    )
    parser.add_argument(
        "choices", nargs="*", help=f"of: {', '.join(CHOICES)}; with --sees draft: {', '.join(DRAFT_CHOICES)}"
    )
    args = parser.parse_args()
    table = DRAFT_CHOICES if args.sees == "draft" else CHOICES
    feature_names = STATE_AND_DRAFT_NAMES if args.sees == "draft" else FEATURE_NAMES
    unknown = [c for c in args.choices if c not in table]
    if unknown:
        parser.error(f"unknown choice {', '.join(unknown)} (of: {', '.join(table)})")
    rows = load_rows(args.data, show_progress=False)
    labels = make_labels(rows, "failed")
    picked = [rows[i] for i in labels.rows]
    families = np.asarray([str(row.get("family") or "unknown") for row in picked])
    x = matrix(picked, args.sees)
    weight = labels.weight.copy()
    if args.balance:
        for family in set(families):
            inside = families == family
            weight[inside] *= len(weight) / (len(set(families)) * weight[inside].sum())
    names = sorted(set(families))
    print(f"| choice | pooled | {' | '.join(names)} | seconds |")
    print("|---|---|" + "---|" * len(names) + "---|")
    for choice in args.choices or list(table):
        params, dropped = table[choice]
        columns = [i for i, name in enumerate(feature_names) if name not in dropped]
        config = TrainConfig(model="gbdt" if params is not None else "logreg", labels="failed")
        if params is not None:
            config.gbdt = params
        started = time.perf_counter()
        ys, scores, per_family = [], [], []
        for family in names:
            inside = families == family
            estimator = fit_estimator(config, x[~inside][:, columns], labels.y[~inside], weight[~inside])
            score = estimator.predict_proba(x[inside][:, columns])[:, 1]
            per_family.append(f"{auc(labels.y[inside], score):.3f}")
            ys.append(labels.y[inside])
            scores.append(score)
        pooled = auc(np.concatenate(ys), np.concatenate(scores))
        seconds = time.perf_counter() - started
        print(f"| {choice} | {pooled:.3f} | {' | '.join(per_family)} | {seconds:.0f} |", flush=True)


if __name__ == "__main__":
    main()

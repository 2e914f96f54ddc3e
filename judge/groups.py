"""`tandem judge groups`: which feature groups carry the judge, and which transfer between agent
families. For each group: the held-out AUC of a model trained on all features, without the group,
and on the group alone (split by trajectory); and, when the rows hold several families (`family`),
the AUC of a model trained on one family and tested on each other one. A group that helps within
a family but not across families is learned from one agent's habits, not from the state of a run.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from judge import arguments
from judge.features import FEATURE_NAMES
from judge.labels import LABEL_SOURCES, labels_in, make_labels
from judge.metrics import MIN_POSITIVES, auc
from judge.rows import load_rows, matrix, split_by_trajectory

GROUPS: dict[str, tuple[str, ...]] = {
    "size": ("step_", "context_chars_log"),
    "actions": ("act1_", "act2_", "act3_", "last_prose", "last_multi_call", "last_calls", "submit_in_tail"),
    "errors": ("err_",),
    "repetition": ("repeat_", "type_streak", "invalid_"),
    "output": ("results_count", "output_", "last_text_", "turns_since_err_log"),
    "task": ("task_",),
    # The run's own record of failures (judge/record.py), and its tail's by the same rule.
    "record": ("run_", "tail_failed_"),
}


def group_columns(group: str) -> list[int]:
    prefixes = GROUPS[group]
    return [i for i, name in enumerate(FEATURE_NAMES) if name.startswith(prefixes)]


def _fit_auc(
    x: npt.NDArray[np.float32], y: Any, w: Any, train: list[int], test: list[int], columns: list[int]
) -> float:
    from sklearn.ensemble import GradientBoostingClassifier  # type: ignore[import-untyped]

    if not columns or len(set(y[train].tolist())) < 2 or not MIN_POSITIVES <= int(y[test].sum()) < len(test):
        return float("nan")  # one label value to learn, or too few positives to score (counts say which)
    model = GradientBoostingClassifier(n_estimators=60, max_depth=3, learning_rate=0.1, subsample=0.8, random_state=0)
    model.fit(x[np.ix_(train, columns)], y[train], sample_weight=w[train])
    return round(auc(y[test], model.predict_proba(x[np.ix_(test, columns)])[:, 1]), 4)


def evaluate_groups(rows: list[dict[str, Any]], labels: str, held_out: float = 0.2) -> dict[str, Any]:
    chosen = make_labels(rows, labels)
    picked = [rows[i] for i in chosen.rows]
    x, y, w = matrix(picked), chosen.y, chosen.weight
    split = split_by_trajectory(picked, held_out)
    every = list(range(len(FEATURE_NAMES)))
    result: dict[str, Any] = {"all": _fit_auc(x, y, w, split.train, split.test, every), "groups": {}}
    families = sorted({str(row.get("family", "unknown")) for row in picked})
    members = {f: [i for i, row in enumerate(picked) if str(row.get("family", "unknown")) == f] for f in families}
    for group in GROUPS:
        columns = group_columns(group)
        kept = [c for c in every if c not in set(columns)]
        entry: dict[str, Any] = {
            "features": len(columns),
            "without": _fit_auc(x, y, w, split.train, split.test, kept),
            "alone": _fit_auc(x, y, w, split.train, split.test, columns),
        }
        if len(families) > 1:
            entry["across_families"] = {
                f"{a}->{b}": _fit_auc(x, y, w, members[a], members[b], columns)
                for a in families
                for b in families
                if a != b
            }
        result["groups"][group] = entry
    if len(families) > 1:
        result["across_families"] = {
            f"{a}->{b}": _fit_auc(x, y, w, members[a], members[b], every) for a in families for b in families if a != b
        }
    result["held_out"] = _counts(y, split.test)
    result["families"] = {f: {"rows": len(members[f]), **_counts(y, members[f])} for f in families}
    return result


def _counts(y: Any, indices: list[int]) -> dict[str, int]:
    positives = int(y[indices].sum())
    return {"positives": positives, "negatives": len(indices) - positives}


def _auc_text(value: float, counts: dict[str, int]) -> str:
    """An AUC beside the positives and negatives it was measured on; none below MIN_POSITIVES."""
    if counts["positives"] < MIN_POSITIVES:
        return f"not scored ({counts['positives']} positives < {MIN_POSITIVES}, {counts['negatives']} negatives)"
    return f"{value} ({counts['positives']}+/{counts['negatives']}-)"


def add_parser(commands: Any) -> None:
    parser = commands.add_parser("groups", help="held-out AUC per feature group, within and across agent families")
    parser.add_argument("--data", required=True, help="rows (.jsonl or .jsonl.gz)")
    parser.add_argument(
        "--labels", choices=LABEL_SOURCES, default=None, help="label source (none: the one the rows carry)"
    )
    parser.add_argument("--held-out", type=arguments.fraction(), default=0.2, help="share of trajectories held out")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")


def run_groups(args: argparse.Namespace) -> int:
    from pathlib import Path

    rows = load_rows(Path(args.data))
    labels = args.labels or labels_in(rows)
    result = evaluate_groups(rows, labels, args.held_out)
    if args.json:
        print(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
        return 0
    held = result["held_out"]
    print(f"{labels} labels; held out: {held['positives']} positives, {held['negatives']} negatives")
    for family, counts in result["families"].items():
        tally = f"{counts['positives']} positives, {counts['negatives']} negatives"
        print(f"  family {family}: {counts['rows']} rows ({tally})")
    print(f"all features: held-out AUC {_auc_text(result['all'], held)}")
    for group, entry in result["groups"].items():
        print(
            f"  {group:<11} {entry['features']:>2} features: without {_auc_text(entry['without'], held)}, "
            f"alone {_auc_text(entry['alone'], held)}"
        )
        for pair, value in entry.get("across_families", {}).items():
            print(f"    {pair}: {_auc_text(value, result['families'][pair.split('->')[1]])}")
    for pair, value in result.get("across_families", {}).items():
        print(f"  all features {pair}: {_auc_text(value, result['families'][pair.split('->')[1]])}")
    return 0

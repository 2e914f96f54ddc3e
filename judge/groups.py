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

from judge.features import FEATURE_NAMES
from judge.labels import LABEL_SOURCES, make_labels
from judge.metrics import auc
from judge.rows import load_rows, matrix, split_by_trajectory

GROUPS: dict[str, tuple[str, ...]] = {
    "size": ("step_", "messages_log", "context_bytes_log"),
    "actions": ("act1_", "act2_", "act3_", "last_prose", "last_multi_call", "last_calls", "submit_in_tail"),
    "errors": ("err_",),
    "repetition": ("repeat_", "type_streak", "invalid_"),
    "output": ("results_count", "output_", "last_text_log", "turns_since_err_log"),
    "task": ("task_",),
}


def group_columns(group: str) -> list[int]:
    prefixes = GROUPS[group]
    return [i for i, name in enumerate(FEATURE_NAMES) if name.startswith(prefixes)]


def _fit_auc(
    x: npt.NDArray[np.float32], y: Any, w: Any, train: list[int], test: list[int], columns: list[int]
) -> float:
    from sklearn.ensemble import GradientBoostingClassifier  # type: ignore[import-untyped]

    if not columns or len(set(y[train].tolist())) < 2 or len(set(y[test].tolist())) < 2:
        return float("nan")
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
    result["families"] = {f: len(members[f]) for f in families}
    return result


def add_parser(commands: Any) -> None:
    parser = commands.add_parser("groups", help="held-out AUC per feature group, within and across agent families")
    parser.add_argument("--data", required=True, help="rows (.jsonl or .jsonl.gz)")
    parser.add_argument("--labels", choices=LABEL_SOURCES, default="failed", help="label source")
    parser.add_argument("--held-out", type=float, default=0.2, help="share of trajectories held out")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")


def run_groups(args: argparse.Namespace) -> int:
    from pathlib import Path

    result = evaluate_groups(load_rows(Path(args.data)), args.labels, args.held_out)
    if args.json:
        print(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
        return 0
    print(
        f"all features: held-out AUC {result['all']} ({', '.join(f'{f} {n}' for f, n in result['families'].items())})"
    )
    for group, entry in result["groups"].items():
        across = entry.get("across_families")
        extra = f"; across families {across}" if across else ""
        print(
            f"  {group:<11} {entry['features']:>2} features: without {entry['without']}, alone {entry['alone']}{extra}"
        )
    return 0

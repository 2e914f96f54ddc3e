"""The adaptation curve: how the judge learns an agent family it was not trained on, through
`tandem judge retrain` (judge/retrain.py), as runs of that family reach the gateway.

The family named by `--family` is left out: a serving model is trained on the other families'
rows (the "shipped" rows). Its runs are shuffled (seeded); the first `--pool` are the runs the
gateway may have served, the rest are the test. For each count k in `--runs`, the first k runs'
rows are the recent traffic, retrain trains a candidate on the shipped rows and that traffic and
promotes it only when, cross-fitted over those runs, it is not worse there, and the model serving
afterwards (promoted or not) is scored on the test runs. Imported rows stand for the gateway's
own rows of the same runs: one feature path computes both (tests/judge/test_import.py).

    python -m benchmarks.judge_adapt --data rows.jsonl.gz --family tau-bench-tool-calling \
        [--runs 0,5,10,20,40] [--pool 40] [--model gbdt] [--sees state|draft] [--seed 0] [--recent-share 0.3] [--json]
        [train's --ignore, --trees, --depth, --rate: the serving model is made as the shipped one is]

`--sees draft` follows the draft judge (the documented judge route's): the serving model and
every candidate read the step's draft, with the harness's contract's floors as served.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from judge.card import card_path
from judge.labels import make_labels
from judge.metrics import auc
from judge.model import JudgeModel
from judge.modes import IGNORE_HELP, add_tree_options, parse_ignore, tree_params
from judge.retrain import RECENT_SHARE, retrain
from judge.rows import load_rows, matrix
from judge.train import TrainConfig, train


def _auc(model_path: Path, rows: list[dict[str, Any]], labels: str) -> float:
    model = JudgeModel.load(model_path)
    chosen = make_labels(rows, labels)
    picked = [rows[i] for i in chosen.rows]
    return round(float(auc(chosen.y, model.score_batch(matrix(picked, model.card.sees)))), 4)


def curve(
    rows: list[dict[str, Any]],
    family: str,
    counts: list[int],
    pool: int,
    labels: str = "failed",
    model: str = "gbdt",
    seed: int = 0,
    ignore: tuple[str, ...] = (),
    trees: dict[str, Any] | None = None,
    sees: str = "state",
    recent_share: float = RECENT_SHARE,
) -> list[dict[str, Any]]:
    shipped = [row for row in rows if row.get("family") != family]
    own = [row for row in rows if row.get("family") == family]
    runs = sorted({str(row["trajectory_id"]) for row in own})
    np.random.default_rng(seed).shuffle(runs)
    if len(runs) <= pool or max(counts) > pool:
        raise SystemExit(f"{family}: {len(runs)} runs; --pool {pool} must leave test runs and hold every count")
    test_runs = set(runs[pool:])
    test = [row for row in own if str(row["trajectory_id"]) in test_runs]
    folder = Path(tempfile.mkdtemp(prefix="adapt-"))
    try:
        base = folder / "base.onnx"
        # The serving model as the shipped one is made (its ignored features, its trees):
        # retrain gives its candidates the same.
        config = TrainConfig(model=model, labels=labels, seed=seed, ignore=ignore, sees=sees)  # type: ignore[arg-type]
        if trees is not None:
            config.gbdt = trees
        train(shipped, config, base)
        points = []
        for count in counts:
            serving = folder / f"serving-{count}.onnx"
            shutil.copyfile(base, serving)
            shutil.copyfile(card_path(base), card_path(serving))
            seen = set(runs[:count])
            recent = [row for row in own if str(row["trajectory_id"]) in seen]
            started = time.perf_counter()
            if recent:
                outcome = retrain(
                    shipped,
                    recent,
                    serving,
                    labels=labels,
                    sees=sees,
                    model=model,
                    seed=seed,
                    recent_share=recent_share,
                )
                promoted, reason = outcome.promoted, outcome.reason
            else:
                promoted, reason = False, "no recent traffic: the model trained on the other families"
            points.append(
                {
                    "runs_seen": count,
                    "recent_rows": len(recent),
                    "promoted": promoted,
                    "auc": _auc(serving, test, labels),
                    "reason": reason,
                    "seconds": round(time.perf_counter() - started, 1),
                }
            )
        return points
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.judge_adapt", description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="rows of several families (family field)")
    parser.add_argument("--family", required=True, help="the family left out of training")
    parser.add_argument("--runs", default="0,5,10,20,40", help="counts of the family's runs seen")
    parser.add_argument("--pool", type=int, default=40, help="runs that may be seen; the rest are the test")
    parser.add_argument("--labels", default="failed")
    parser.add_argument("--model", choices=("gbdt", "logreg"), default="gbdt")
    parser.add_argument("--sees", choices=("state", "draft"), default="state", help="the judge followed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--recent-share", type=float, default=RECENT_SHARE, help="retrain's --recent-share")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--ignore", default="", help=IGNORE_HELP)
    add_tree_options(parser)
    args = parser.parse_args()
    rows = load_rows(args.data, show_progress=False)
    counts = [int(part) for part in args.runs.split(",")]
    trees = tree_params(args.trees, args.depth, args.rate)
    points = curve(
        rows,
        args.family,
        counts,
        args.pool,
        args.labels,
        args.model,
        args.seed,
        parse_ignore(args.ignore),
        trees,
        args.sees,
        args.recent_share,
    )
    if args.json:
        print(orjson.dumps(points, option=orjson.OPT_INDENT_2).decode())
        return
    first = points[0]["auc"]
    print(
        f"{args.family} left out of training ({args.sees} judge); "
        f"AUC on its runs after the first {args.pool} (shuffled, seed {args.seed})"
    )
    print("| runs seen | recent rows | promoted | AUC on the rest | change |")
    print("|---|---|---|---|---|")
    for point in points:
        change = f"{point['auc'] - first:+.3f}"
        print(
            f"| {point['runs_seen']} | {point['recent_rows']} | {'yes' if point['promoted'] else 'no'} | "
            f"{point['auc']:.3f} | {change} |"
        )


if __name__ == "__main__":
    main()

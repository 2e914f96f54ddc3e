"""`tandem judge lofo`: leave one agent family out, the standard report of how a judge does on an
agent it has never seen.

For each family (`family` in the rows: harness and major version): train on every other family
with `train`'s options, score the family left out, and give its positives and negatives, the
AUC with a bootstrap interval (resampling its trajectories, seeded), the cloud share at the
threshold `train` would ship (calibrated to `--cloud-share` on the training families), the share
of its failing steps that threshold catches, and a plot of failing steps caught against cloud
share. A family with fewer than `MIN_POSITIVES` positives gets its counts, not an AUC.

Each scored family is also broken down by what failed (the label's reason, `failure` in the
rows: an exit code, a harness's error message, a tool error): the AUC of each reason's failing
steps against the family's passing steps. A family's figure can hide a kind of failure the other
families never show (a harness that refuses long output, where the others truncate it), scored
at chance, beside the kinds the judge has learnt.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from judge import arguments
from judge.calibrate import threshold_for_share
from judge.draft import as_served
from judge.labels import LABEL_SOURCES, labels_in, make_labels
from judge.metrics import MIN_POSITIVES, auc
from judge.modes import IGNORE_HELP, add_tree_options, blinded, ignored_columns, parse_ignore, tree_flags, tree_params
from judge.rows import JudgeTrainingError, load_rows, matrix
from judge.status import HARNESS_MESSAGE

BOOTSTRAP = 200


@dataclass
class FamilyResult:
    family: str
    trajectories: int
    positives: int
    negatives: int
    note: str = ""  # why it is not scored, when it is not
    auc: float | None = None
    interval: tuple[float, float] | None = None
    threshold: float | None = None
    cloud_share: float | None = None
    caught: float | None = None  # share of its failing steps the threshold sends to the cloud
    # what failed (the label's reason) -> its failing steps, and their AUC against the passing ones
    by_failure: dict[str, tuple[int, float | None]] = field(default_factory=dict)
    y: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64), repr=False)
    scores: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0), repr=False)
    reasons: npt.NDArray[np.str_] = field(default_factory=lambda: np.zeros(0, dtype=str), repr=False)

    def as_dict(self) -> dict[str, Any]:
        keys = ("family", "trajectories", "positives", "negatives", "note", "auc", "interval", "threshold")
        return {key: getattr(self, key) for key in (*keys, "cloud_share", "caught", "by_failure")}


def bootstrap_interval(
    y: npt.NDArray[np.int64], scores: npt.NDArray[np.float64], runs: list[str], resamples: int, seed: int
) -> tuple[float, float]:
    """The 95% interval of the AUC over resamples of whole trajectories (steps of a run are not
    independent: resampling steps would make the interval too narrow)."""
    rng = np.random.default_rng(seed)
    by_run: dict[str, list[int]] = defaultdict(list)
    for index, run in enumerate(runs):
        by_run[run].append(index)
    groups = [np.asarray(indices) for indices in by_run.values()]
    values = []
    for _ in range(resamples):
        picked = np.concatenate([groups[i] for i in rng.integers(0, len(groups), len(groups))])
        value = auc(y[picked], scores[picked])
        if np.isfinite(value):
            values.append(value)
    if not values:
        return (float("nan"), float("nan"))
    low, high = np.percentile(values, [2.5, 97.5])
    return (round(float(low), 4), round(float(high), 4))


def leave_one_family_out(rows: list[dict[str, Any]], config: Any, resamples: int = BOOTSTRAP) -> list[FamilyResult]:
    """One result per family; `config`: a `judge.train.TrainConfig` (model, labels, share, seed, sees)."""
    from judge.train import fit_estimator  # scikit-learn loads only here

    labels = make_labels(rows, config.labels)
    picked = [rows[i] for i in labels.rows]
    families = [str(row.get("family") or "unknown") for row in picked]
    runs = [str(row["trajectory_id"]) for row in picked]
    reasons = np.asarray([str(row.get("failure") or "not given") for row in picked])
    x = matrix(picked, config.sees)
    # Fitted blind to the features the config ignores, scored on the real vectors (as `train`).
    try:
        fit_x = blinded(x, ignored_columns(config.sees, tuple(getattr(config, "ignore", ()))))
    except ValueError as exc:
        raise JudgeTrainingError(str(exc)) from None
    results = []
    for family in sorted(set(families)):
        inside = np.asarray([f == family for f in families])
        y = labels.y[inside]
        positives = int(y.sum())
        result = FamilyResult(
            family, len({r for r, i in zip(runs, inside, strict=True) if i}), positives, len(y) - positives
        )
        train = ~inside
        if not train.any():
            result.note = "the only family: no other family to train on"
        elif labels.y[train].min() == labels.y[train].max():
            result.note = "the other families have one label value only: nothing to train on"
        else:
            estimator = fit_estimator(config, fit_x[train], labels.y[train], labels.weight[train])
            threshold = threshold_for_share(_scores(estimator, x[train], config.sees), config.cloud_share)
            scores = _scores(estimator, x[inside], config.sees)
            result.y, result.scores, result.threshold = y, scores, round(float(threshold), 6)
            result.reasons = reasons[inside]
            result.cloud_share = round(float(np.mean(scores >= threshold)), 4)
            if positives >= MIN_POSITIVES and positives < len(y):
                result.auc = round(auc(y, scores), 4)
                result.interval = bootstrap_interval(
                    y, scores, [r for r, i in zip(runs, inside, strict=True) if i], resamples, config.seed
                )
                result.caught = round(float(np.mean(scores[y == 1] >= threshold)), 4)
                result.by_failure = by_failure(y, scores, result.reasons)
            else:
                result.note = f"fewer than {MIN_POSITIVES} positives: not scored"
        results.append(result)
    pooled = _pooled(results, runs, families, config.seed, resamples)
    return results + ([pooled] if pooled else [])


def _scores(estimator: Any, x: npt.NDArray[np.float32], sees: str) -> npt.NDArray[np.float64]:
    """The fitted model's scores as a served judge gives them (a draft judge's with its floors)."""
    return as_served(estimator.predict_proba(x)[:, 1].astype(np.float64), x, sees)


POOLED = "pooled (each family scored by the model trained without it)"
OTHER_REASONS = "other reasons, each under 20 failing steps"
NOT_HARNESS = "all but the harness's own messages"


def by_failure(
    y: npt.NDArray[np.int64], scores: npt.NDArray[np.float64], reasons: npt.NDArray[np.str_]
) -> dict[str, tuple[int, float | None]]:
    """Per reason a step failed, most frequent first: its failing steps, and the AUC of those
    against every passing step. Reasons with fewer than `MIN_POSITIVES` failing steps are counted
    together as `OTHER_REASONS` (scored if they reach it together)."""
    passing = y == 0
    names, counts = np.unique(reasons[y == 1], return_counts=True)
    few = names[counts < MIN_POSITIVES]
    groups = [(int(c), str(n), reasons == n) for n, c in zip(names, counts, strict=True) if c >= MIN_POSITIVES]
    groups.sort(key=lambda g: (-g[0], g[1]))
    if few.size:
        groups.append((int(counts[counts < MIN_POSITIVES].sum()), OTHER_REASONS, np.isin(reasons, few)))
    # What the command's own result reports (exit codes, exceptions, tests, tool errors), apart
    # from the limits and formats each harness enforces with its own messages.
    own = np.char.endswith(reasons, HARNESS_MESSAGE)
    if (own & (y == 1)).any() and (~own & (y == 1)).any():
        groups.append((int((~own & (y == 1)).sum()), NOT_HARNESS, ~own))
    found: dict[str, tuple[int, float | None]] = {}
    for count, name, of_reason in groups:
        keep = passing | ((y == 1) & of_reason)
        found[name] = (count, round(auc(y[keep], scores[keep]), 4) if count >= MIN_POSITIVES else None)
    return found


def _pooled(
    results: list[FamilyResult], runs: list[str], families: list[str], seed: int, resamples: int
) -> FamilyResult | None:
    """All the scored families' left-out scores together: how the judge ranks steps of agents it
    never saw, whatever the agent (each family's threshold is the one its model would ship with)."""
    scored = [r for r in results if r.scores.size and r.threshold is not None]
    if len(scored) < 2:
        return None
    y = np.concatenate([r.y for r in scored])
    scores = np.concatenate([r.scores for r in scored])
    cloud = np.concatenate([r.scores >= (r.threshold or 0.0) for r in scored])
    # in the order of `y`: family by family, each in the rows' order
    pooled_runs = [f"{r.family}/{run}" for r in scored for f, run in zip(families, runs, strict=True) if f == r.family]
    positives = int(y.sum())
    result = FamilyResult(
        POOLED, sum(r.trajectories for r in scored), positives, len(y) - positives, y=y, scores=scores
    )
    result.cloud_share = round(float(np.mean(cloud)), 4)
    if positives >= MIN_POSITIVES and positives < len(y):
        result.auc = round(auc(y, scores), 4)
        result.interval = bootstrap_interval(y, scores, pooled_runs, resamples, seed)
        result.caught = round(float(np.mean(cloud[y == 1])), 4)
        result.by_failure = by_failure(y, scores, np.concatenate([r.reasons for r in scored]))
    return result


def markdown(results: list[FamilyResult], title: str) -> str:
    lines = [
        f"# {title}",
        "",
        "| left out | runs | positives | negatives | AUC | 95% interval | cloud share | failing steps caught | note |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        interval = f"{r.interval[0]}–{r.interval[1]}" if r.interval else ""
        cells = [r.family, r.trajectories, r.positives, r.negatives, r.auc, interval, r.cloud_share, r.caught, r.note]
        lines.append("| " + " | ".join("" if c is None else str(c) for c in cells) + " |")
    broken = [r for r in results if r.by_failure]
    if broken:
        lines += [
            "",
            "By what failed: each reason's failing steps against the family's passing steps (AUC; "
            f"none under {MIN_POSITIVES} failing steps)",
            "",
            "| left out | failed by | failing steps | AUC |",
            "|---|---|---|---|",
        ]
        for r in broken:
            for reason, (count, score) in r.by_failure.items():
                lines.append(f"| {r.family} | {reason} | {count} | {'' if score is None else score} |")
    return "\n".join(lines) + "\n"


def add_parser(commands: Any) -> None:
    parser = commands.add_parser("lofo", help="leave each agent family out in turn: train on the others, score it")
    parser.add_argument("--data", type=Path, required=True, help="rows with a family field (.jsonl or .jsonl.gz)")
    parser.add_argument("--out", type=arguments.folder, help="folder for lofo.md, lofo.json and one PNG per family")
    parser.add_argument("--model", choices=("logreg", "gbdt"), default="gbdt", help="the classifier")
    parser.add_argument("--labels", choices=LABEL_SOURCES, default=None, help="label source (none: the rows' own)")
    parser.add_argument(
        "--cloud-share", type=arguments.fraction(), default=0.4, help="share the threshold is calibrated to"
    )
    parser.add_argument("--seed", type=arguments.SEED, default=0, help="seed of the classifier and the bootstrap")
    parser.add_argument("--sees", choices=("state", "draft"), default="state", help="draft: also the step's own action")
    parser.add_argument("--bootstrap", type=arguments.COUNT, default=BOOTSTRAP, help="resamples for the AUC's interval")
    parser.add_argument("--ignore", default="", help=IGNORE_HELP)
    add_tree_options(parser)


def run_lofo(args: argparse.Namespace) -> int:
    from judge.train import TrainConfig

    if not 0.0 < args.cloud_share < 1.0:
        raise JudgeTrainingError(f"cloud share must be between 0 and 1, got {args.cloud_share}")
    rows = load_rows(args.data)
    labels = args.labels or labels_in(rows)
    try:
        trees = tree_params(args.trees, args.depth, args.rate)
    except ValueError as error:
        raise JudgeTrainingError(str(error)) from None
    config = TrainConfig(
        model=args.model,
        labels=labels,
        cloud_share=args.cloud_share,
        seed=args.seed,
        sees=args.sees,
        ignore=parse_ignore(args.ignore),
        gbdt=trees,
    )
    results = leave_one_family_out(rows, config, args.bootstrap)
    title = (
        f"Leave one family out: {args.data.name}, {args.model}{tree_flags(trees) if args.model == 'gbdt' else ''}, "
        f"{labels} labels, sees {args.sees}" + (f", without {', '.join(config.ignore)}" if config.ignore else "")
    )
    table = markdown(results, title)
    print(table, end="")
    if len(results) == 1:
        print("one family only: train on more families for a leave-one-family-out figure", file=sys.stderr)
    if args.out is not None:
        from judge.plots import share_plot

        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "lofo.md").write_text(table)
        (args.out / "lofo.json").write_bytes(
            orjson.dumps([r.as_dict() for r in results], option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY)
        )
        for r in results:
            if r.scores.size and 0 < r.positives < len(r.y):
                share_plot(r.y, {_legend(r.family): r.scores}, args.out / f"lofo-{_slug(r.family)}.png")
    return 0


def _legend(name: str) -> str:
    return "all families, each left out" if name == POOLED else f"{name} (left out)"


def _slug(name: str) -> str:
    if name == POOLED:
        return "pooled"
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)

"""`tandem judge retrain`: learn the agents the gateway meets, safely.

The gateway's own rows (`tandem trajectories export --judge-rows`: each step's features, labelled
by the harness-status label read from the next request) are the recent traffic. A candidate is
trained on the shipped rows together with all of that traffic, and it replaces the serving model
only under `promote`'s rule (AUC not lower than the serving model's by more than
`evaluate.AUC_TOLERANCE`), measured on the recent traffic by cross-fitting: the recent runs are
split into `FOLDS` groups (a stable hash of the run id), and each group's steps are scored by a
candidate trained the same way without that group, so every recent step is scored by a model that
never saw its run, and every recent failing step counts in the comparison. Holding a share of the
runs back instead left a quarter to a half of a family's runs out of what the candidate learnt
and compared on a quarter of its failures: the family was learnt later, or never (one failing
at 13% of its steps, 20 runs seen: +0.00 against +0.02 to +0.08 for the others).

Runs the gateway found by their message history (no client session id: their records carry
`stitch`) are learnt from: runs are identified from the run itself (a step extends the history
its run was answered at; the stitching property test, docs/concepts.md, finds no run joined to
another or cut in two, on one gateway or on replicas sharing Redis). A run with a step joined by
evidence rather than by its history (`rewritten`: a condenser, a compaction, an editor's retry,
an answer the client dropped) is still left out: its `action_failed` labels are read across
the rewrite, where the failure and the action it followed are the client's account, not the
history's.

Recent rows are few against the shipped ones: they weigh so that together they make
`recent_share` of the training weight (at least their own count).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

import judge as judge_package
from judge import arguments
from judge.labels import LABEL_SOURCES, make_labels
from judge.metrics import MIN_POSITIVES
from judge.rows import JudgeTrainingError, load_rows, matrix, rank

if TYPE_CHECKING:
    from judge.evaluate import Comparison
    from judge.train import TrainConfig

SHIPPED_ROWS = Path(judge_package.__file__).parent / "data" / "real-runs.jsonl.gz"
FOLDS = 4
RECENT_SHARE = 0.6


@dataclass
class RetrainResult:
    promoted: bool
    reason: str
    recent_rows: int
    recent_runs: int
    left_out_runs: int  # with a step joined by evidence (`rewritten`): uncertain labels
    folds: int  # groups of recent runs the comparison was cross-fitted over (0: not compared)
    recent_weight: float
    serving_path: Path


UNCERTAIN = "rewritten"  # the stitch decision of a step joined to its run by evidence


def uncertain_runs(rows: list[dict[str, Any]]) -> set[str]:
    """Runs with a step the gateway joined to them by evidence rather than by its history."""
    return {str(row["trajectory_id"]) for row in rows if row.get("stitch") == UNCERTAIN}


def folds_of(rows: list[dict[str, Any]], folds: int = FOLDS) -> list[set[str]]:
    """The rows' runs dealt into `folds` groups (fewer when there are fewer runs) in a stable
    order, so that a rerun on the same traffic compares the same way."""
    # Salted: `train` holds out by the same hash unsalted.
    runs = sorted({str(row["trajectory_id"]) for row in rows}, key=lambda run: rank(f"fold: {run}"))
    count = min(folds, len(runs))
    return [set(runs[index::count]) for index in range(count)]


def recent_weight(shipped: int, recent: int, share: float) -> float:
    """The weight of each recent row so that the recent rows make `share` of the total weight."""
    if recent == 0 or shipped == 0 or share <= 0:
        return 1.0
    return max(1.0, share / (1.0 - share) * shipped / recent)


def _trees_of(serving_path: Path, sees: str) -> dict[str, Any] | None:
    """The serving model's tree shape (its card's parameters), for a candidate of the same kind;
    None: the defaults (no card, another kind, or parameters this version does not know)."""
    from judge.card import JudgeModelError, card_path, read_card
    from judge.modes import tree_params

    try:
        card = read_card(card_path(serving_path))
    except JudgeModelError:
        return None
    params = card.model.get("params")
    if card.sees != sees or card.model.get("kind") != "gbdt" or not isinstance(params, dict):
        return None
    try:
        return tree_params(int(params["n_estimators"]), int(params["max_depth"]), float(params["learning_rate"]))
    except (KeyError, TypeError, ValueError):
        return None


def _ignored_by(serving_path: Path, sees: str) -> tuple[str, ...]:
    """The features the serving model was trained without (its card's `ignored_features`): a
    candidate of the same kind is trained without them too."""
    from judge.card import JudgeModelError, card_path, read_card

    try:
        card = read_card(card_path(serving_path))
    except JudgeModelError:
        return ()
    ignored = card.model.get("ignored_features") if card.sees == sees else None
    return tuple(str(name) for name in ignored) if isinstance(ignored, list) else ()


def retrain(
    shipped: list[dict[str, Any]],
    recent: list[dict[str, Any]],
    serving_path: Path,
    *,
    labels: str = "failed",
    sees: str = "state",
    model: str = "gbdt",
    cloud_share: float = 0.4,
    folds: int = FOLDS,
    recent_share: float = RECENT_SHARE,
    seed: int = 0,
    work: Path | None = None,
    report: Path | None = None,
    show_progress: bool = False,
) -> RetrainResult:
    """Train a candidate on `shipped` + `recent`; promote it over `serving_path` when, cross-fitted
    over the recent runs, it is not worse there."""
    from judge.card import JudgeModelError
    from judge.evaluate import compare, promote, write_report
    from judge.model import JudgeModel
    from judge.train import TrainConfig, train

    uncertain = uncertain_runs(recent)
    kept = [row for row in recent if str(row["trajectory_id"]) not in uncertain]
    runs = {str(row["trajectory_id"]) for row in kept}
    weight = recent_weight(len(shipped), len(kept), recent_share)

    def result(promoted: bool, reason: str, groups: int = 0) -> RetrainResult:
        return RetrainResult(promoted, reason, len(kept), len(runs), len(uncertain), groups, weight, serving_path)

    try:
        chosen = make_labels(kept, labels) if kept else None
    except JudgeTrainingError:  # no labelled row, or one label value only
        chosen = None
    if chosen is None or chosen.positives == 0 or chosen.positives == len(chosen.rows):
        return result(
            False, f"the {len(runs)} recent run(s) lack a failing or a passing step: nothing to compare the models on"
        )
    if chosen.positives < MIN_POSITIVES:
        # An AUC over a handful of failing steps moves by more than the rule's margin from one
        # run to the next: a candidate promoted on it may be worse on the family's other runs.
        return result(
            False,
            f"the {len(runs)} recent run(s) hold {chosen.positives} failing step(s), fewer than "
            f"{MIN_POSITIVES}: too few to compare the models on",
        )
    groups = folds_of(kept, folds)
    if len(groups) < 2:
        return result(False, "one recent run: no run to compare on that a candidate did not learn")
    folder = Path(tempfile.mkdtemp(prefix="retrain-")) if work is None else work
    folder.mkdir(parents=True, exist_ok=True)
    config = TrainConfig(
        model=model,  # type: ignore[arg-type]  # checked by the CLI's choices
        labels=labels,
        cloud_share=cloud_share,
        seed=seed,
        sees=sees,
        made_by="tandem judge retrain",
        ignore=_ignored_by(serving_path, sees),
        data_description=f"{len(shipped)} shipped rows and {len(kept)} recent gateway rows (weight {weight:.3g})",
        show_progress=show_progress,
    )
    trees = _trees_of(serving_path, sees)
    if trees is not None:  # the candidate has the serving model's shape, as it has its ignored features
        config.gbdt = trees

    def learnt(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # `learn`: never in train's held-out split (the comparison is the cross-fitting); without
        # shipped rows that split needs some recent runs, and takes them by its hash.
        return [{**row, "weight": weight, "learn": bool(shipped)} for row in rows]

    try:
        candidate_path = folder / "candidate.onnx"
        train([*shipped, *learnt(kept)], config, candidate_path)
        scores = _cross_fitted(shipped, kept, chosen.rows, groups, learnt, config, folder)
        # Each labelled row's group: the AUCs count pairs within a group, scored by one model.
        group_of = {run: number for number, group in enumerate(groups) for run in group}
        within = np.asarray([group_of[str(kept[index]["trajectory_id"])] for index in chosen.rows])
        candidate = JudgeModel.load(candidate_path)
        try:
            serving: JudgeModel | None = JudgeModel.load(serving_path)
        except JudgeModelError as exc:
            # None yet (a first deployment's empty volume), or broken, or of another feature
            # version: the candidate is judged alone, and the operator told why.
            print(f"tandem judge retrain: warning: no serving model to compare with ({exc})", file=sys.stderr)
            serving = None
        comparison = compare(candidate, serving, kept, labels, 0.0, candidate_scores=scores, groups=within)
        comparison.reason = f"cross-fitted over {len(groups)} groups of recent runs: {comparison.reason}"
        if comparison.not_worse and serving is not None:
            _resampled(comparison, [str(kept[index]["trajectory_id"]) for index in chosen.rows], within, seed)
        if report is not None:
            write_report(comparison, report, "Retraining on recent traffic")
        if not comparison.not_worse:
            return result(False, comparison.reason, len(groups))
        promote(candidate_path, serving_path, comparison)
        return result(True, comparison.reason, len(groups))
    finally:
        if work is None:
            shutil.rmtree(folder, ignore_errors=True)


def _resampled(comparison: Comparison, runs_of: list[str], within: npt.NDArray[np.int64], seed: int) -> None:
    """Mark `comparison` worse when the candidate trails by more than the tolerance in over
    `GAP_PERCENTILE`% of resamples of the recent runs (`runs_of`: each compared row's run). A
    few runs can make a worse candidate look better (a family's runs differ more from each
    other than the models do): promoted only when it holds for most resamples too."""
    from judge.evaluate import AUC_TOLERANCE, GAP_PERCENTILE, gap_low

    scores = comparison.scores
    low = gap_low(comparison.y, scores["candidate"], scores["serving"], within, runs_of, seed=seed)
    if not low >= -AUC_TOLERANCE:
        comparison.not_worse = False
        comparison.reason += (
            f"; but over resamples of the {len(set(runs_of))} runs the AUC gap's {GAP_PERCENTILE}th "
            f"percentile is {low:+.4f}: not shown not worse"
        )


def _cross_fitted(
    shipped: list[dict[str, Any]],
    kept: list[dict[str, Any]],
    labelled: list[int],
    groups: list[set[str]],
    learnt: Callable[[list[dict[str, Any]]], list[dict[str, Any]]],
    config: TrainConfig,
    folder: Path,
) -> npt.NDArray[np.float64]:
    """The candidate's scores of the labelled recent rows (`labelled` indexes `kept`), each row's
    by a candidate trained as the candidate is but without the group of runs its run is in."""
    from judge.model import JudgeModel
    from judge.train import train

    scores = np.full(len(labelled), np.nan)
    for number, group in enumerate(groups):
        path = folder / f"fold-{number}.onnx"
        train([*shipped, *learnt([row for row in kept if str(row["trajectory_id"]) not in group])], config, path)
        members = [place for place, index in enumerate(labelled) if str(kept[index]["trajectory_id"]) in group]
        rows = [kept[labelled[place]] for place in members]
        model = JudgeModel.load(path)
        scores[members] = model.score_batch(matrix(rows, model.card.sees))
    return scores


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "retrain", help="train on shipped + recent gateway rows; promote only if not worse on held-back recent runs"
    )
    parser.add_argument(
        "--data", type=Path, required=True, help="recent gateway rows (trajectories export --judge-rows)"
    )
    parser.add_argument(
        "--shipped", default=str(SHIPPED_ROWS), help="the rows the shipped models were trained on ('none': without)"
    )
    parser.add_argument("--serving", type=Path, default=None, help="the serving .onnx (none: the shipped one)")
    parser.add_argument("--labels", choices=LABEL_SOURCES, default="failed", help="label source")
    parser.add_argument("--sees", choices=("state", "draft"), default="state", help="the model trained")
    parser.add_argument("--model", choices=("logreg", "gbdt"), default="gbdt", help="the classifier")
    parser.add_argument(
        "--cloud-share", type=arguments.fraction(), default=0.4, help="the candidate's calibrated cloud share"
    )
    parser.add_argument(
        "--folds",
        type=arguments.whole(2, 100),
        default=FOLDS,
        help="groups of recent runs the comparison is cross-fitted over (each scored by a candidate without it)",
    )
    parser.add_argument(
        "--recent-share",
        type=arguments.fraction(zero=True),
        default=RECENT_SHARE,
        help="recent rows' share of the weight",
    )
    parser.add_argument("--seed", type=arguments.SEED, default=0, help="seed of the classifier")
    parser.add_argument(
        "--work", type=arguments.folder, default=None, help="folder kept with the candidate (none: a temporary one)"
    )
    parser.add_argument(
        "--report", type=arguments.folder, default=None, help="folder for the comparison's report and plots"
    )


def run_retrain(args: argparse.Namespace) -> int:
    from judge.model import DEFAULT_MODEL

    recent = load_rows(args.data, show_progress=False)
    shipped = [] if args.shipped == "none" else load_rows(Path(args.shipped), show_progress=False)
    if not 0.0 <= args.recent_share < 1.0:
        raise JudgeTrainingError(f"--recent-share must be in [0, 1), got {args.recent_share}")
    outcome = retrain(
        shipped,
        recent,
        args.serving or DEFAULT_MODEL,
        labels=args.labels,
        sees=args.sees,
        model=args.model,
        cloud_share=args.cloud_share,
        folds=args.folds,
        recent_share=args.recent_share,
        seed=args.seed,
        work=args.work,
        report=args.report,
        show_progress=True,
    )
    print(
        f"recent traffic: {outcome.recent_rows} rows of {outcome.recent_runs} runs "
        f"({outcome.left_out_runs} run(s) with a rewritten history left out); "
        f"compared over {outcome.folds} group(s) of runs; "
        f"recent rows weigh {outcome.recent_weight:.3g}",
        file=sys.stderr,
    )
    verdict = "promoted to" if outcome.promoted else "not promoted; still serving"
    print(f"{verdict} {outcome.serving_path}: {outcome.reason}")
    return 0

"""`tandem judge retrain`: learn the agents the gateway meets, safely.

The gateway's own rows (`tandem trajectories export --judge-rows`: each step's features, labelled
by the harness-status label read from the next request) are the recent traffic. A candidate is
trained on the shipped rows together with part of that traffic, and it replaces the serving model
only under `promote`'s rule (held-out AUC not lower than the serving model's by more than
`evaluate.AUC_TOLERANCE`), measured on the rest of the recent traffic, held back by run: the
traffic the serving model is failing on, which the candidate never saw. A quarter of the runs are
held back, more (up to half) while those hold fewer failing steps than an AUC needs.

Runs whose stitching was uncertain are left out: a run the gateway found by its message history
(no client session id: its records carry `stitch`), whether extended, rewritten (a condenser, a
compaction, an editor's retry) or a retry. Such a "run" may be two runs joined or one run cut,
and its `action_failed` labels, read across the join, may be wrong; they come back once runs are
identified from the run itself.

Recent rows are few against the shipped ones: they weigh so that together they make
`recent_share` of the training weight (at least their own count).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import judge as judge_package
from judge import arguments
from judge.labels import LABEL_SOURCES, make_labels
from judge.metrics import MIN_POSITIVES
from judge.rows import JudgeTrainingError, load_rows, rank

SHIPPED_ROWS = Path(judge_package.__file__).parent / "data" / "real-runs.jsonl.gz"
HELD_BACK = 0.25
# The most of the recent runs held back when `HELD_BACK` of them hold too few failing steps to
# compare on: the rest, at least as many, is what the candidate learns the family from.
HELD_BACK_MOST = 0.5
RECENT_SHARE = 0.3


@dataclass
class RetrainResult:
    promoted: bool
    reason: str
    recent_rows: int
    recent_runs: int
    left_out_runs: int  # stitched by history: uncertain
    held_back_runs: int
    recent_weight: float
    serving_path: Path


def uncertain_runs(rows: list[dict[str, Any]]) -> set[str]:
    """Runs with a step the gateway placed by its history rather than a client session id."""
    return {str(row["trajectory_id"]) for row in rows if row.get("stitch")}


def choose_held_back(rows: list[dict[str, Any]], labels: str, share: float, most: float = HELD_BACK_MOST) -> set[str]:
    """The recent runs held back to compare the models on: those whose rank is under `share`,
    then, while they hold fewer than `MIN_POSITIVES` failing steps, the next runs in rank order,
    up to `most` of the runs. A family that fails rarely (3% of its steps) would otherwise never
    hold enough failures back to be compared on, and never be learnt."""
    # Salted: `train` holds out by the same hash unsalted, and would find nothing left to hold out.
    ranks = {run: rank(f"held back: {run}") for run in {str(row["trajectory_id"]) for row in rows}}
    runs = sorted(ranks, key=ranks.__getitem__)
    failing: dict[str, int] = dict.fromkeys(runs, 0)
    try:
        chosen = make_labels(rows, labels)
    except JudgeTrainingError:
        chosen = None
    if chosen is not None:
        for index, value in zip(chosen.rows, chosen.y.tolist(), strict=True):
            failing[str(rows[index]["trajectory_id"])] += int(value)
    back = [run for run in runs if ranks[run] < share]
    held = sum(failing[run] for run in back)
    for run in runs[len(back) : int(len(runs) * most)]:
        if held >= MIN_POSITIVES:
            break
        back.append(run)
        held += failing[run]
    return set(back)


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
    held_back: float = HELD_BACK,
    recent_share: float = RECENT_SHARE,
    seed: int = 0,
    work: Path | None = None,
    report: Path | None = None,
    show_progress: bool = False,
) -> RetrainResult:
    """Train a candidate on `shipped` + part of `recent`; promote it over `serving_path` when it is
    not worse on the recent runs held back."""
    from judge.card import JudgeModelError
    from judge.evaluate import compare, promote, write_report
    from judge.model import JudgeModel
    from judge.train import TrainConfig, train

    uncertain = uncertain_runs(recent)
    kept = [row for row in recent if str(row["trajectory_id"]) not in uncertain]
    runs = {str(row["trajectory_id"]) for row in kept}
    back_runs = choose_held_back(kept, labels, held_back)
    back = [row for row in kept if str(row["trajectory_id"]) in back_runs]
    weight = recent_weight(len(shipped), len(kept) - len(back), recent_share)
    learn = [{**row, "weight": weight} for row in kept if str(row["trajectory_id"]) not in back_runs]

    def result(promoted: bool, reason: str) -> RetrainResult:
        return RetrainResult(
            promoted, reason, len(kept), len(runs), len(uncertain), len(back_runs), weight, serving_path
        )

    try:
        held = make_labels(back, labels) if back else None
    except JudgeTrainingError:  # no labelled row, or one label value only
        held = None
    if held is None or held.positives == 0 or held.positives == len(held.rows):
        return result(
            False,
            f"the {len(back_runs)} held-back recent run(s) lack a failing or a passing step: "
            "nothing to compare the models on",
        )
    if held.positives < MIN_POSITIVES:
        # An AUC over a handful of failing steps moves by more than the rule's margin from one
        # run to the next: a candidate promoted on it may be worse on the family's other runs.
        return result(
            False,
            f"the {len(back_runs)} held-back recent run(s) hold {held.positives} failing step(s), fewer than "
            f"{MIN_POSITIVES}: too few to compare the models on",
        )
    folder = Path(tempfile.mkdtemp(prefix="retrain-")) if work is None else work
    folder.mkdir(parents=True, exist_ok=True)
    candidate_path = folder / "candidate.onnx"
    config = TrainConfig(
        model=model,  # type: ignore[arg-type]  # checked by the CLI's choices
        labels=labels,
        cloud_share=cloud_share,
        seed=seed,
        sees=sees,
        made_by="tandem judge retrain",
        ignore=_ignored_by(serving_path, sees),
        data_description=f"{len(shipped)} shipped rows and {len(learn)} recent gateway rows (weight {weight:.3g})",
        show_progress=show_progress,
    )
    trees = _trees_of(serving_path, sees)
    if trees is not None:  # the candidate has the serving model's shape, as it has its ignored features
        config.gbdt = trees
    try:
        train([*shipped, *learn], config, candidate_path)
        candidate = JudgeModel.load(candidate_path)
        try:
            serving: JudgeModel | None = JudgeModel.load(serving_path)
        except JudgeModelError as exc:
            # None yet (a first deployment's empty volume), or broken, or of another feature
            # version: the candidate is judged alone, and the operator told why.
            print(f"tandem judge retrain: warning: no serving model to compare with ({exc})", file=sys.stderr)
            serving = None
        comparison = compare(candidate, serving, back, labels, 0.0)
        if report is not None:
            write_report(comparison, report, "Retraining on recent traffic")
        if not comparison.not_worse:
            return result(False, comparison.reason)
        promote(candidate_path, serving_path, comparison)
        return result(True, comparison.reason)
    finally:
        if work is None:
            shutil.rmtree(folder, ignore_errors=True)


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
        "--held-back",
        type=arguments.fraction(),
        default=HELD_BACK,
        help="share of recent runs compared on (more, up to half, while they hold under 20 failing steps)",
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
    if not 0.0 < args.held_back < 1.0:
        raise JudgeTrainingError(f"--held-back must be between 0 and 1, got {args.held_back}")
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
        held_back=args.held_back,
        recent_share=args.recent_share,
        seed=args.seed,
        work=args.work,
        report=args.report,
        show_progress=True,
    )
    print(
        f"recent traffic: {outcome.recent_rows} rows of {outcome.recent_runs} runs "
        f"({outcome.left_out_runs} run(s) stitched by history left out); {outcome.held_back_runs} run(s) held back; "
        f"recent rows weigh {outcome.recent_weight:.3g}",
        file=sys.stderr,
    )
    verdict = "promoted to" if outcome.promoted else "not promoted; still serving"
    print(f"{verdict} {outcome.serving_path}: {outcome.reason}")
    return 0

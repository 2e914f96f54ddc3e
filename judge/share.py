"""`tandem judge share`: rows of each agent family replayed through the online cloud-share
controller (`calibrate.OnlineThreshold`, with a judge route's defaults), to show the share it
holds on a family and how many steps it takes to get there.

The rows' runs are replayed as a gateway serves them: `--concurrent` runs at a time, their steps
interleaved one by one, each run's own cloud and answered counts passed in as the gateway
passes them; each step is scored by the model from its features. Per family it reports the share
the card's fixed threshold gives (what a route without the controller gets), the share of the
first `--warm-up` steps and of every step after them, and the warm-up: the fewest leading steps
after which the share of all later steps is within `--band` of the target.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from judge import arguments
from judge.calibrate import OnlineThreshold
from judge.defaults import ADAPT_RATE, MAX_TRAJECTORY_GAIN, THRESHOLD_BOUNDS, TRAJECTORY_GAIN

WARM_UP_STEPS = 200  # the promise: within the band over a family's steps after at most this many
BAND = 0.07
CURVE_WINDOW = 200  # steps per point of the share-over-steps curve


@dataclass
class FamilyShare:
    family: str
    runs: int
    steps: int
    fixed_share: float  # at the card's threshold, no controller
    warm_up_share: float  # over the first WARM_UP_STEPS steps, with the controller
    after_share: float | None  # over the steps after them; None: no step after them
    warm_up: int | None  # the fewest leading steps after which the rest is in the band; None: never
    within: bool  # after_share within the band
    curve: list[tuple[int, float]]  # (steps so far, share of the window ending there)
    failing: int = 0  # steps whose action failed (the `failed` label), where the rows say
    caught: float | None = None  # the share of them the controller sent to the cloud
    caught_fixed: float | None = None  # the same at the card's fixed threshold


def interleave(runs: list[npt.NDArray[np.float64]], concurrent: int) -> list[tuple[int, float]]:
    """(run, score) in the order a gateway would see them: `concurrent` runs at a time, one step
    of each in turn; a finished run's place goes to the next run."""
    if concurrent < 1:
        raise ValueError(f"concurrent must be at least 1, not {concurrent}: no run would ever start")
    order: list[tuple[int, float]] = []
    waiting = list(range(len(runs)))[::-1]
    active: list[list[int]] = []  # [run, next step]
    while waiting or active:
        while waiting and len(active) < concurrent:
            active.append([waiting.pop(), 0])
        for slot in list(active):
            run, step = slot
            order.append((run, float(runs[run][step])))
            slot[1] += 1
            if slot[1] >= len(runs[run]):
                active.remove(slot)
    return order


def replay_decisions(
    runs: list[npt.NDArray[np.float64]], controller: OnlineThreshold, concurrent: int = 8
) -> npt.NDArray[np.bool_]:
    """Each step's decision (True: cloud), in the order the controller saw them."""
    return replay(runs, controller, concurrent)[0]


def replay(
    runs: list[npt.NDArray[np.float64]], controller: OnlineThreshold, concurrent: int = 8
) -> tuple[npt.NDArray[np.bool_], list[tuple[int, int]]]:
    """Each step's decision (True: cloud) in the order the controller saw them, and which step
    of which run each was: (run, step)."""
    cloud_steps = [0] * len(runs)
    answered = [0] * len(runs)
    decisions: list[bool] = []
    steps: list[tuple[int, int]] = []
    for run, score in interleave(runs, concurrent):
        cloud, _threshold = controller.decide(score, cloud_steps[run], answered[run])
        steps.append((run, answered[run]))
        cloud_steps[run] += int(cloud)
        answered[run] += 1
        decisions.append(cloud)
    return np.asarray(decisions, dtype=bool), steps


def warm_up(decisions: npt.NDArray[np.bool_], target: float, band: float = BAND) -> int | None:
    """The fewest leading steps after which the share of the remaining steps is within the band."""
    n = decisions.size
    if n == 0:
        return None
    # Share of decisions[k:] for every k, from the end.
    suffix = np.cumsum(decisions[::-1].astype(np.float64))[::-1] / np.arange(n, 0, -1)
    inside = np.flatnonzero(np.abs(suffix - target) <= band + 1e-12)
    return int(inside[0]) if inside.size else None


def family_share(
    family: str,
    runs: list[npt.NDArray[np.float64]],
    threshold: float,
    target: float,
    concurrent: int = 8,
    rate: float = ADAPT_RATE,
    bounds: tuple[float, float] = THRESHOLD_BOUNDS,
    failed: list[npt.NDArray[np.bool_]] | None = None,
    gain: float = TRAJECTORY_GAIN,
) -> FamilyShare:
    """`failed`: per run, whether each step's action failed (aligned with `runs`), for the share
    of failing steps sent to the cloud; None: not reported."""
    controller = OnlineThreshold(target, threshold, bounds[0], bounds[1], rate, trajectory_gain=gain)
    decisions, steps = replay(runs, controller, concurrent)
    every = np.concatenate(runs) if runs else np.zeros(0)
    failing, caught, caught_fixed = 0, None, None
    if failed is not None:
        wanted = np.asarray([bool(failed[run][step]) for run, step in steps], dtype=bool)
        failing = int(wanted.sum())
        if failing:
            caught = round(float(decisions[wanted].mean()), 4)
            fixed = np.asarray([runs[run][step] >= threshold for run, step in steps], dtype=bool)
            caught_fixed = round(float(fixed[wanted].mean()), 4)
    after = decisions[WARM_UP_STEPS:]
    after_share = float(after.mean()) if after.size else None
    curve = [
        (end, round(float(decisions[max(end - CURVE_WINDOW, 0) : end].mean()), 4))
        for end in range(CURVE_WINDOW, decisions.size + 1, CURVE_WINDOW)
    ]
    return FamilyShare(
        family=family,
        runs=len(runs),
        steps=int(decisions.size),
        fixed_share=round(float((every >= threshold).mean()), 4) if every.size else 0.0,
        warm_up_share=round(float(decisions[:WARM_UP_STEPS].mean()), 4) if decisions.size else 0.0,
        after_share=round(after_share, 4) if after_share is not None else None,
        warm_up=warm_up(decisions, target),
        within=after_share is not None and abs(after_share - target) <= BAND + 1e-12,
        curve=curve,
        failing=failing,
        caught=caught,
        caught_fixed=caught_fixed,
    )


def runs_by_family(
    rows: list[dict[str, Any]], scores: npt.NDArray[np.float64]
) -> dict[str, list[npt.NDArray[np.float64]]]:
    """Each family's runs (their steps' scores in step order), runs in the rows' order."""
    return {family: [scores for scores, _ in runs] for family, runs in labelled_runs(rows, scores).items()}


def labelled_runs(
    rows: list[dict[str, Any]], scores: npt.NDArray[np.float64]
) -> dict[str, list[tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]]]:
    """Each family's runs, runs in the rows' order: their steps' scores in step order, and
    whether each step's action failed (the `failed` label; False where a row does not say)."""
    steps: dict[str, dict[str, list[tuple[int, float, bool]]]] = defaultdict(lambda: defaultdict(list))
    for row, score in zip(rows, scores, strict=True):
        run = steps[str(row.get("family") or "unknown")][str(row["trajectory_id"])]
        run.append((int(row["step"]), float(score), bool(row.get("action_failed"))))
    return {
        family: [
            (
                np.asarray([score for _, score, _ in ordered], dtype=np.float64),
                np.asarray([failed for _, _, failed in ordered], dtype=bool),
            )
            for ordered in (sorted(run) for run in runs.values())
        ]
        for family, runs in sorted(steps.items())
    }


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "share", help="replay each family's rows through the online cloud-share controller: share held, warm-up"
    )
    parser.add_argument("--data", type=Path, required=True, help="tandem.judge-row/1 rows (.jsonl or .jsonl.gz)")
    parser.add_argument("--model", type=Path, default=None, help="the .onnx judge (none: the shipped state judge)")
    parser.add_argument(
        "--target", type=arguments.fraction(), default=None, help="cloud share to hold (none: the card's)"
    )
    parser.add_argument("--family", action="append", default=[], help="only this family (repeatable)")
    parser.add_argument(
        "--concurrent", type=arguments.COUNT, default=8, help="runs served at once (their steps interleave)"
    )
    parser.add_argument("--rate", type=arguments.adapt_rate, default=ADAPT_RATE, help="the route's adapt_rate")
    parser.add_argument(
        "--gain",
        type=float,
        default=TRAJECTORY_GAIN,
        help="the route's trajectory_gain (0: the share held globally only)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run_share(args: argparse.Namespace) -> int:
    from judge.model import DEFAULT_MODEL, JudgeModel
    from judge.rows import load_rows, matrix

    model = JudgeModel.load(args.model or DEFAULT_MODEL)
    rows = load_rows(args.data, show_progress=False)
    if args.family:
        rows = [row for row in rows if row.get("family") in args.family]
        if not rows:
            print(f"no rows of {', '.join(args.family)} in {args.data}", file=sys.stderr)
            return 2
    target = args.target if args.target is not None else model.card.target_cloud_share
    if target is None:
        print(f"{args.model or DEFAULT_MODEL}: the card names no target cloud share; give --target", file=sys.stderr)
        return 2
    if not 0.0 <= args.gain <= MAX_TRAJECTORY_GAIN:
        print(f"--gain must be in [0, {MAX_TRAJECTORY_GAIN}], not {args.gain}", file=sys.stderr)
        return 2
    scores = model.score_batch(matrix(rows, model.card.sees))
    results = [
        family_share(
            family,
            [scores for scores, _ in runs],
            model.threshold,
            target,
            args.concurrent,
            args.rate,
            failed=[failed for _, failed in runs],
            gain=args.gain,
        )
        for family, runs in labelled_runs(rows, scores).items()
    ]
    if args.json:
        print(orjson.dumps([asdict(result) for result in results], option=orjson.OPT_INDENT_2).decode())
        return 0
    print(
        f"target {target:.0%} ± {BAND:.0%}, card threshold {model.threshold:.4f}, {args.concurrent} runs at once, "
        f"warm-up promise {WARM_UP_STEPS} steps"
    )
    print(
        "| family | runs | steps | fixed threshold | first 200 steps | after them | warm-up (steps) | within "
        "| failing steps | to the cloud: held / fixed |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        after = f"{r.after_share:.1%}" if r.after_share is not None else "—"
        held = "—" if r.warm_up is None else str(r.warm_up)
        caught = "—" if r.caught is None or r.caught_fixed is None else f"{r.caught:.1%} / {r.caught_fixed:.1%}"
        print(
            f"| {r.family} | {r.runs} | {r.steps} | {r.fixed_share:.1%} | {r.warm_up_share:.1%} | {after} | {held} | "
            f"{'yes' if r.within else 'no'} | {r.failing} | {caught} |"
        )
    return 0

"""Judge against random delegation on simulated runs, and the rebuild of the shipped judge.

    python -m sim.dataset compare --model judge/models/judge.onnx --seeds 1000-1199
    python -m sim.dataset build-model        # what `make judge-model` runs

`compare` runs held-out seeds (the shipped model trains on seeds 0-199) under edge-only,
cloud-only, the judge at its calibrated threshold, the judge with the online share controller,
random delegation at the judge's realised cloud share, and the oracle (cloud exactly when the edge
would be wrong), and prints solved tasks, cloud share and how many of the edge's wrong steps
went to the cloud.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path
from typing import Any

import orjson

from judge.calibrate import OnlineThreshold
from judge.card import card_path, read_card, write_card
from judge.features import step_features
from judge.model import DEFAULT_MODEL, JudgeModel
from judge.rows import load_rows
from judge.train import TrainConfig, train
from sim.dataset import (
    Decide,
    SimStep,
    Target,
    fixed,
    generate,
    oracle,
    parse_seeds,
    random_delegation,
    simulate,
)

RANDOM_REPEATS = 5  # random delegation is averaged over this many independent draws
TRAIN_SEEDS = "0-199"
EVAL_SEEDS = "1000-1199"
BUILD_COMMAND = "python -m sim.dataset build-model"


def judge_decider(model: JudgeModel, threshold: float | None = None) -> Decide:
    """Cloud when the judge's score reaches the threshold (the card's unless given)."""
    limit = model.threshold if threshold is None else threshold

    def choose(step: SimStep) -> Target:
        score = model.score(step_features(step.messages, step.counters, step.tools))
        return "cloud" if score >= limit else "edge"

    return choose


def online_decider(model: JudgeModel, share: float) -> Decide:
    """The judge with `OnlineThreshold` holding `share` per trajectory and overall."""
    controller = OnlineThreshold(target_share=share, initial=model.threshold, lower=0.02, upper=0.98)

    def choose(step: SimStep) -> Target:
        score = model.score(step_features(step.messages, step.counters, step.tools))
        cloud, _ = controller.decide(score, step.counters.cloud_steps, step.counters.answered_steps)
        return "cloud" if cloud else "edge"

    return choose


def compare(model: JudgeModel, seeds: list[int], tasks: int = 6) -> dict[str, Any]:
    """Solved tasks and cloud share per strategy on `seeds`; random at the judge's share."""
    results: dict[str, Any] = {"seeds": f"{seeds[0]}-{seeds[-1]}", "tasks_per_seed": tasks}
    for name, choose in (
        ("edge-only", fixed("edge")),
        ("cloud-only", fixed("cloud")),
        ("oracle", oracle),
        ("judge", judge_decider(model)),
    ):
        results[name] = simulate(seeds, tasks, choose).as_dict()
    share = results["judge"]["cloud_share"]
    if model.card.target_cloud_share is not None:
        results["judge-online"] = simulate(seeds, tasks, online_decider(model, model.card.target_cloud_share)).as_dict()
    randoms = [simulate(seeds, tasks, random_delegation(share, f"r{i}")).as_dict() for i in range(RANDOM_REPEATS)]
    results["random-at-judge-share"] = {
        "repeats": RANDOM_REPEATS,
        "p": share,
        "solved": statistics.mean(r["solved"] for r in randoms),
        "solved_min": min(r["solved"] for r in randoms),
        "solved_max": max(r["solved"] for r in randoms),
        "cloud_share": round(statistics.mean(r["cloud_share"] for r in randoms), 4),
        "edge_wrong_recall": round(statistics.mean(r["edge_wrong_recall"] for r in randoms), 4),
    }
    return results


def render(results: dict[str, Any]) -> str:
    lines = [f"seeds {results['seeds']}, {results['tasks_per_seed']} tasks each (SIMULATED models)", ""]
    lines.append(f"{'strategy':<24}{'solved':>10}{'cloud share':>13}{'wrong->cloud':>14}")
    for name, row in results.items():
        if isinstance(row, dict):
            solved = f"{row['solved']:.1f}" if isinstance(row["solved"], float) else str(row["solved"])
            lines.append(f"{name:<24}{solved:>10}{row['cloud_share']:>13.1%}{row['edge_wrong_recall']:>14.1%}")
    return "\n".join(lines)


def build_model(out: Path = DEFAULT_MODEL, *, seeds: str = TRAIN_SEEDS, eval_seeds: str = EVAL_SEEDS) -> dict[str, Any]:
    """Generate rows, train the gbdt judge on agreement labels at cloud share 0.4, write it and its
    card (with the held-out delegation figures). Deterministic: fixed seeds throughout."""
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "steps.jsonl"
        generate(parse_seeds(seeds), 6, data)
        rows = load_rows(data)
    config = TrainConfig(
        model="gbdt",
        labels="agreement",
        cloud_share=0.4,
        seed=0,
        made_by=BUILD_COMMAND,
        data_description=(
            f"SIMULATED trajectories of the demo (sim), seeds {seeds}, the 6 built-in tasks, "
            "collected in-process under random delegation with a cloud share drawn per trajectory "
            "from [0, 1]; labels: agreement, i.e. edge_wrong = the simulation's own draw of whether "
            "the simulated edge's action on that state is wrong (not any rule the judge is tested on)"
        ),
    )
    result = train(rows, config, out)
    model = JudgeModel.load(out)
    delegation = compare(model, parse_seeds(eval_seeds))
    card = read_card(card_path(out))
    card.evaluation["delegation_on_unseen_seeds"] = delegation
    write_card(card_path(out), card)
    return {"card": card.as_dict(), "parity": result.parity_max_abs_diff}


def _run_compare(args: argparse.Namespace) -> int:
    model = JudgeModel.load(args.model)
    results = compare(model, parse_seeds(args.seeds), args.tasks)
    print(orjson.dumps(results, option=orjson.OPT_INDENT_2).decode() if args.json else render(results))
    return 0


def _run_build(args: argparse.Namespace) -> int:
    built = build_model(args.out)
    evaluation = built["card"]["evaluation"]
    shown = os.path.relpath(args.out)
    print(f"wrote {shown} and its card; held-out AUC {evaluation['auc']}, threshold {built['card']['threshold']:.4f}")
    print(render(evaluation["delegation_on_unseen_seeds"]))
    return 0


def add_commands(commands: Any) -> None:
    cmp = commands.add_parser("compare", help="judge vs random delegation on simulated runs")
    cmp.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    cmp.add_argument("--seeds", default=EVAL_SEEDS)
    cmp.add_argument("--tasks", type=int, default=6)
    cmp.add_argument("--json", action="store_true")
    cmp.set_defaults(run=_run_compare)
    build = commands.add_parser("build-model", help="rebuild the shipped judge (make judge-model)")
    build.add_argument("--out", type=Path, default=DEFAULT_MODEL)
    build.set_defaults(run=_run_build)

"""Judge data from the demo's simulation, and the judge against random delegation on it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from judge.features import TrajectoryCounters, step_features
from judge.model import JudgeModel
from judge.rows import load_rows
from judge.train import TrainConfig, train
from sim.dataset import SimStep, fixed, generate, parse_seeds, random_delegation, run_trajectory, simulate
from sim.delegation import online_decider
from sim.run import STRATEGIES, pick_tasks, run_strategies
from sim.script import ERROR_RATES, draw

HELD_OUT = parse_seeds("1000-1049")  # the shipped model trained on seeds 0-199


def test_parse_seeds() -> None:
    assert parse_seeds("0-3,7,10-11") == [0, 1, 2, 3, 7, 10, 11]


def test_in_process_runs_match_the_demo_through_the_gateway() -> None:
    """The in-process loop is the agent's: the same seed solves the same tasks in the same steps."""
    fixed_strategies = tuple(s for s in STRATEGIES if s.key in ("edge-only", "cloud-only"))
    demo = asyncio.run(run_strategies(7, 6, latency_scale=0.02, strategies=fixed_strategies))
    for result in demo.strategies:
        target = "edge" if result.strategy.key == "edge-only" else "cloud"
        for task, through_gateway in zip(pick_tasks(6), result.tasks, strict=True):
            run = run_trajectory(task, 7, fixed(target))
            assert (run.solved, len(run.targets)) == (through_gateway.solved, through_gateway.steps), task.id


def test_rows_carry_the_simulations_own_ground_truth(tmp_path: Path) -> None:
    out = tmp_path / "steps.jsonl"
    count = generate(range(5), 6, out)
    rows = load_rows(out, show_progress=False)
    assert count == len(rows) > 30
    assert {row["target"] for row in rows} == {"edge", "cloud"}
    for row in rows:
        # edge_wrong is the simulation's draw for this state, not anything the features say.
        wrong = draw(row["seed"], row["task_id"], row["step"], "edge", "error") < ERROR_RATES["edge"][row["kind"]]
        assert row["edge_wrong"] == int(wrong)
        assert row["outcome"] is not None and row["teacher_label"] is None
    by_run: dict[str, list[int]] = {}
    for row in rows:
        by_run.setdefault(row["trajectory_id"], []).append(row["step"])
    assert all(steps == list(range(1, len(steps) + 1)) for steps in by_run.values())


def test_the_features_are_those_the_gateway_would_compute() -> None:
    task = pick_tasks(1)[0]
    seen: list[SimStep] = []

    def spy(step: SimStep) -> str:
        seen.append(step)
        return "edge"

    run = run_trajectory(task, 3, spy, keep_rows=True)
    for step, row in zip(seen, run.rows, strict=True):
        assert isinstance(step.counters, TrajectoryCounters)
        assert row["features"] == step_features(step.messages, step.counters, step.tools).tolist()


def test_train_calibrate_serve_end_to_end_on_generated_data(tmp_path: Path) -> None:
    data = tmp_path / "steps.jsonl"
    generate(range(40), 6, data)
    out = tmp_path / "judge.onnx"
    gbdt = {"n_estimators": 40, "max_depth": 3, "learning_rate": 0.2, "subsample": 0.8}
    result = train(load_rows(data, show_progress=False), TrainConfig(model="gbdt", cloud_share=0.3, gbdt=gbdt), out)
    assert result.card.evaluation["auc"] > 0.7
    model = JudgeModel.load(out)
    served = simulate(parse_seeds("2000-2039"), 6, online_decider(model, 0.3))
    assert served.cloud_share == pytest.approx(0.3, abs=0.06)
    random = simulate(parse_seeds("2000-2039"), 6, random_delegation(served.cloud_share))
    assert served.wrong_recall > random.wrong_recall

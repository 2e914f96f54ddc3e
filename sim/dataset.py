"""Judge training data from the demo's simulation, run in-process (no servers, no gateway).

The loop below is the built-in agent's (`agent.run_task`) with the HTTP hop replaced by a direct
call of the simulated models' minds (`script.decide`, `answer.build_answer`): the same messages,
tools and tool results, so the features are those the gateway would compute for the same step.
At every step both simulated models are asked what they would do; a per-step decision function
picks which answer the agent gets. Ground truth comes from the simulation's own draw: `edge_wrong`
says whether the simulated edge's action on this state is wrong. It is never derived from the
rules the judge is later tested against.

    python -m sim.dataset generate --seeds 0-199 --out steps.jsonl
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from judge.actions import message_action
from judge.features import FEATURE_VERSION, TrajectoryCounters, step_features
from judge.progress import Progress
from judge.rows import ROW_SCHEMA, write_rows
from sim.agent import NO_TOOL_CALL, SYSTEM_PROMPT
from sim.answer import build_answer, prompt_tokens
from sim.run import pick_tasks
from sim.script import NextStep, decide, draw
from sim.tasks import Task
from sim.workspace import TOOLS, Workspace

Target = str  # "edge" or "cloud"


@dataclass(frozen=True)
class SimStep:
    """What a decision function sees of one step: what the gateway would see, plus (only for the
    oracle baseline) the simulation's ground truth."""

    trajectory_id: str
    seed: int
    task_id: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    counters: TrajectoryCounters
    edge_wrong: bool  # ground truth: a real decision function must not read it


Decide = Callable[[SimStep], Target]


@dataclass
class TrajectoryRun:
    trajectory_id: str
    task_id: str
    seed: int
    solved: bool = False
    targets: list[Target] = field(default_factory=list)
    edge_wrong: list[bool] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def cloud_steps(self) -> int:
        return self.targets.count("cloud")


def _excerpt(message: dict[str, Any], results: list[str]) -> str:
    """A short account of a step, for an offline teacher that cannot see the messages."""
    calls = [
        f"{call['function']['name']}({call['function']['arguments'][:120]})" for call in message.get("tool_calls") or []
    ]
    done = "; ".join(calls) or f"(no tool call) {str(message.get('content') or '')[:120]}"
    return f"{done} -> {' | '.join(result[:160] for result in results)}"


def run_trajectory(
    task: Task, seed: int, choose: Decide, *, trajectory_id: str | None = None, keep_rows: bool = False
) -> TrajectoryRun:
    """Work one task with the simulated models, `choose` picking the model of each step."""
    session = trajectory_id or f"sim-s{seed}-{task.id}"
    run = TrajectoryRun(session, task.id, seed)
    workspace = Workspace(task)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": task.message()},
    ]
    steps = cloud_steps = since_cloud = 0
    while steps < task.max_steps and not workspace.submitted:
        body = {
            "model": "tandem",
            "messages": messages,
            "tools": TOOLS,
            "tool_choice": "auto",
            "stream": True,
            "stream_options": {"include_usage": True},
            "prompt_cache_key": session,
        }
        counters = TrajectoryCounters(steps + 1, cloud_steps, steps, since_cloud, len(orjson.dumps(body)))
        edge = decide(task, messages, "edge", seed)
        view = SimStep(session, seed, task.id, list(messages), TOOLS, counters, edge.wrong)
        target = choose(view)
        chosen: NextStep = edge if target == "edge" else decide(task, messages, "cloud", seed)
        features = step_features(messages, counters, TOOLS) if keep_rows else None
        answer = build_answer(
            chosen, task_id=task.id, role="cloud" if target == "cloud" else "edge", seed=seed,
            prompt=prompt_tokens(body), cached=0, latency_scale=0.0,
        )  # fmt: skip
        message = answer.message
        steps += 1
        cloud_steps += target == "cloud"
        since_cloud = 0 if target == "cloud" else since_cloud + 1
        run.targets.append(target)
        run.edge_wrong.append(edge.wrong)
        messages.append(message)
        results = []
        if not message.get("tool_calls"):
            messages.append({"role": "user", "content": NO_TOOL_CALL})
            results.append(NO_TOOL_CALL)
        for call in message.get("tool_calls") or []:
            result = workspace.call(call["function"]["name"], call["function"]["arguments"])
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
            results.append(result)
        if features is not None:
            run.rows.append(
                {
                    "schema": ROW_SCHEMA,
                    "trajectory_id": session,
                    "step": steps,
                    "feature_version": FEATURE_VERSION,
                    "features": features.tolist(),
                    "target": target,
                    "edge_wrong": int(edge.wrong),
                    "cloud_wrong": int(chosen.wrong) if target == "cloud" else None,
                    "teacher_label": None,
                    "outcome": None,
                    "action": message_action(message).value,
                    "kind": edge.kind,  # the simulation's step kind: for analysis only, never a feature
                    "task": task.message()[:500],
                    "task_id": task.id,
                    "seed": seed,
                    "excerpt": _excerpt(message, results),
                }
            )
    run.solved = workspace.solved
    for row in run.rows:
        row["outcome"] = {"success": run.solved}
    return run


# ---- decision functions -------------------------------------------------------------------


def fixed(target: Target) -> Decide:
    return lambda step: target


def random_delegation(p: float, salt: str = "random") -> Decide:
    """Cloud with probability p, from a draw fixed by (seed, task, step, salt)."""
    return lambda step: "cloud" if draw(step.seed, step.task_id, step.counters.step, "router", salt) < p else "edge"


def behaviour(step: SimStep) -> Target:
    """The policy the training data is collected under: random delegation with a share drawn per
    trajectory from [0, 1], so the states seen range from edge-only runs to cloud-only runs."""
    p = draw(step.seed, step.task_id, 0, "behaviour", "p")
    return "cloud" if draw(step.seed, step.task_id, step.counters.step, "behaviour", "route") < p else "edge"


def oracle(step: SimStep) -> Target:
    """Cloud exactly when the edge would be wrong: the ceiling no real judge can pass."""
    return "cloud" if step.edge_wrong else "edge"


# ---- runs over many seeds -----------------------------------------------------------------


@dataclass
class Summary:
    runs: list[TrajectoryRun]

    @property
    def solved(self) -> int:
        return sum(run.solved for run in self.runs)

    @property
    def steps(self) -> int:
        return sum(len(run.targets) for run in self.runs)

    @property
    def cloud_share(self) -> float:
        return sum(run.cloud_steps for run in self.runs) / max(self.steps, 1)

    @property
    def wrong_recall(self) -> float:
        """Share of the steps where the edge would be wrong that went to the cloud."""
        pairs = [(w, t) for run in self.runs for w, t in zip(run.edge_wrong, run.targets, strict=True) if w]
        return sum(t == "cloud" for _, t in pairs) / max(len(pairs), 1)

    def as_dict(self) -> dict[str, Any]:
        return {
            "tasks": len(self.runs),
            "solved": self.solved,
            "steps": self.steps,
            "cloud_share": round(self.cloud_share, 4),
            "edge_wrong_recall": round(self.wrong_recall, 4),
        }


def simulate(
    seeds: Iterable[int], tasks: int, choose: Decide, *, keep_rows: bool = False, label: str = "simulating"
) -> Summary:
    """Run `tasks` demo tasks for each seed with the decision function; solved counts and share."""
    seed_list = list(seeds)
    picked = pick_tasks(tasks)
    bar = Progress(label, len(seed_list) * len(picked), enabled=keep_rows)
    runs = []
    for seed in seed_list:
        for task in picked:
            runs.append(run_trajectory(task, seed, choose, keep_rows=keep_rows))
            bar.advance()
    bar.close()
    return Summary(runs)


def generate(seeds: Iterable[int], tasks: int, out_path: Path, choose: Decide = behaviour) -> int:
    """Write judge training rows (`tandem.judge-row/1`) for every step of every run; the count."""
    summary = simulate(seeds, tasks, choose, keep_rows=True, label=f"generating {out_path.name}")
    return write_rows(out_path, (row for run in summary.runs for row in run.rows))


def parse_seeds(text: str) -> list[int]:
    """`0-199`, `7`, or `1,2,5-9`."""
    seeds: list[int] = []
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        seeds += range(int(low), int(high or low) + 1)
    return seeds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim.dataset", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    gen = commands.add_parser("generate", help="write judge training rows from simulated runs")
    gen.add_argument("--seeds", default="0-199")
    gen.add_argument("--tasks", type=int, default=6)
    gen.add_argument("--out", type=Path, required=True)
    from sim.delegation import add_commands

    add_commands(commands)
    args = parser.parse_args(argv)
    if args.command == "generate":
        count = generate(parse_seeds(args.seeds), args.tasks, args.out)
        print(f"wrote {count} rows to {args.out}")
        return 0
    result: int = args.run(args)
    return result


if __name__ == "__main__":
    sys.exit(main())

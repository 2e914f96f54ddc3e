"""tau-bench results: a JSON list of runs of its tool-calling agent, each `{task_id, trial,
reward, info, traj}` where `traj` is the OpenAI chat the agent's model saw (the simulated
customer's turns as `user`, the tools' results as `tool`). A run succeeded when its reward is 1.

Written against `historical_trajectories/*.json` of sierra-research/tau-bench (MIT); the family
is `tau-bench-tool-calling` (the harness's agent strategy, one version so far).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judge.importers import Run, TrajectoryFormatError
from judge.importers.chats import _chat_message, _stem

FAMILY = "tau-bench-tool-calling"


def is_tau_results(document: Any) -> bool:
    """Whether a parsed JSON document is a tau-bench results file."""
    return (
        isinstance(document, list)
        and bool(document)
        and all(isinstance(run, dict) and isinstance(run.get("traj"), list) and "task_id" in run for run in document)
    )


def read_tau(path: Path, document: list[dict[str, Any]]) -> list[Run]:
    runs = []
    for index, entry in enumerate(document):
        where = f"[{index}]."
        messages = [
            m for i, e in enumerate(entry["traj"]) if (m := _chat_message(e, path, f"{where}traj[{i}]")) is not None
        ]
        if not any(m["role"] == "assistant" for m in messages):
            raise TrajectoryFormatError(path, None, "a tau-bench run with no assistant message", where)
        reward = entry.get("reward")
        outcome = {"success": float(reward) >= 1.0} if isinstance(reward, int | float) else None
        run_id = f"{_stem(path)}-task{entry.get('task_id')}-trial{entry.get('trial', 0)}"
        runs.append(Run(run_id, FAMILY, messages, None, outcome, str(path), {"family": FAMILY}))
    return runs

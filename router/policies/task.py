"""Task routing (EC2-Bench): one decision per run, at its first step, kept for every step.

The decision is a rule on the task (the user's request, found behind the client's boilerplate by
`judge.task.real_task`: Claude Code's reminders, Codex's environment block, Aider's examples): a
pattern, or its length; the
chosen target is remembered on the trajectory, so that every replica keeps it.
"""

from __future__ import annotations

import re

from judge.task import real_task
from router import notes
from router.config.strategies import TaskRoute
from router.policies.base import Builder, Decision, KeepsNotes, Reason, RouteBase, Target

NOTE = notes.strategy("task", "target")


class TaskPolicy:
    def __init__(self, settings: TaskRoute) -> None:
        self._pattern = re.compile(settings.cloud_if_matches, re.IGNORECASE) if settings.cloud_if_matches else None
        self._longer_than = settings.cloud_if_longer_than
        self._default: Target = settings.default

    def _choose(self, task: str) -> Target:
        if self._pattern is not None and self._pattern.search(task):
            return "cloud"
        if self._longer_than is not None and len(task) > self._longer_than:
            return "cloud"
        return self._default

    async def decide(self, step: KeepsNotes) -> Decision:
        kept = step.trajectory.notes.get(NOTE)
        if kept not in ("edge", "cloud"):
            chosen = self._choose(real_task(step.request.messages))
            # keep_first: if two replicas decide the first step at once, one choice wins.
            kept = await step.store.note(step.trajectory_id, NOTE, chosen, keep_first=True)
        target: Target = "cloud" if kept == "cloud" else "edge"
        return Decision(target=target, reason=Reason.TASK_ROUTED)


# The route settings this module's policy is built from (router/policies/registry.py).
BUILDS: dict[type[RouteBase], Builder] = {TaskRoute: TaskPolicy}

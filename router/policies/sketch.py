"""Sketch-guided (EC2-Bench): at a trajectory's first step the cloud writes a short plan from the
task alone; the gateway adds it to the edge's system prompt for the rest of the run. The cloud
sees only the task, once; every step is answered by the edge."""

from __future__ import annotations

from typing import Any

from router import notes
from router.config.strategies import SketchRoute
from router.inner import InnerCallError
from router.policies.base import Builder, Decision, Reason, RouteBase, StepContext
from router.policies.common import count_failure
from router.policies.constraints import cloud_refusal
from router.policies.prompts import PLAN, PLAN_HINT
from router.privacy.at_rest import to_keep, to_use
from router.protocol.text import message_text, task_of

NOTE = notes.strategy("sketch", "plan")


def with_plan(messages: list[dict[str, Any]], plan: str) -> list[dict[str, Any]]:
    hint = f"\n\n{PLAN_HINT}{plan}"
    if messages and messages[0].get("role") in ("system", "developer") and isinstance(messages[0].get("content"), str):
        return [{**messages[0], "content": messages[0]["content"] + hint}, *messages[1:]]
    return [{"role": "system", "content": hint.strip()}, *messages]


class SketchPolicy:
    def __init__(self, settings: SketchRoute) -> None:
        self._settings = settings

    async def decide(self, step: StepContext) -> Decision:
        plan = step.trajectory.notes.get(NOTE)
        if plan is None and cloud_refusal(self._settings.constraints, step.trajectory, step.step) is None:
            plan = await self._write_plan(step)
        if not plan:
            return Decision(target="edge", reason=Reason.SKETCH)
        # Kept with placeholders on a sensitive route; the edge gets the originals back.
        plan = to_use(step.calls.privacy, plan)
        return Decision(target="edge", reason=Reason.SKETCH, patch={"messages": with_plan(step.request.messages, plan)})

    async def _write_plan(self, step: StepContext) -> str:
        task = task_of(step.calls.shown("cloud", step.request.messages))
        prompt = PLAN.format(steps=self._settings.max_plan_steps, task=task)
        body = {
            "messages": [{"role": "user", "content": prompt}],
            "max_completion_tokens": self._settings.max_plan_tokens,
        }
        try:
            plan = message_text(await step.calls.complete("cloud", body, "plan")).strip()
        except InnerCallError:
            count_failure(step, "plan")
            plan = ""
        # Even an empty plan is kept: a failed planner is not asked again at every step.
        return await step.store.note(step.trajectory_id, NOTE, to_keep(step.calls.privacy, plan), keep_first=True)


# The route settings this module's policy is built from (router/policies/registry.py).
BUILDS: dict[type[RouteBase], Builder] = {SketchRoute: SketchPolicy}

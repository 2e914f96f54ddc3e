"""The shape-context stage: the request as each target gets it, the strategy's patch applied,
and, when the cloud answers, the route's context setting (router/context.py: what the cloud
sees of the history)."""

from __future__ import annotations

from typing import Any

from router.context import cloud_context
from router.policies.base import Target
from router.step import Step

from .stage import Parts, Stage


class Context(Stage):
    name = "context"

    def __init__(self, parts: Parts) -> None:
        self._store = parts.tracker.store

    async def target(self, step: Step, target: Target, raw: dict[str, Any]) -> dict[str, Any]:
        if step.decision.patch:
            raw = {**raw, **step.decision.patch}
        settings = step.route.settings.context
        if target == "cloud" and settings.mode != "full":
            messages = await cloud_context(settings, raw["messages"], step.calls, self._store, step.identity)
            raw = {**raw, "messages": messages}
        return raw

"""What a stage of the step's chain is: a small object with hooks, each optional.

- `request(step)`: on the way to the upstream, in the chain's order. A stage reads the stages'
  outputs before it in `step` and writes its own; a refusal raises `GatewayError`.
- `target(step, target, raw)`: the request as `target` will get it, for each attempt of the
  forward stage (the first target, then the failover's): what shapes the request per target.
- `answer(step)`: on the way back, in the chain's order, once `step.outcome` is set.

A hook a stage does not override is never called (the chain keeps a list per hook).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from router.answers import Answers
from router.audit import AuditLog
from router.edge.pool import EdgePool
from router.metrics.core import Metrics
from router.policies.base import Target
from router.privacy.parts import PrivacyParts
from router.settings import Settings
from router.step import Route, Step
from router.trajectory.tracker import Tracker
from router.upstream import Upstream


class Shaper(Protocol):
    """What a stage sees of the chain it joined: the request as a target gets it."""

    async def shape(self, step: Step, target: Target, raw: dict[str, Any]) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class Parts:
    """What the stages of every step share in one process (each stage keeps what it uses)."""

    settings: Settings
    routes: Mapping[str, Route]
    upstreams: Mapping[str, Upstream]
    metrics: Metrics
    tracker: Tracker
    audit: AuditLog
    answers: Answers  # the step's result and its one record (router/answers.py)
    privacy: PrivacyParts
    edge_pool: EdgePool | None


class Stage:
    """A link of the chain; `name` labels it in the walk and the per-stage times."""

    name: ClassVar[str] = "stage"

    def __init__(self, parts: Parts) -> None:
        """A stage is built once per process from the shared parts."""

    def joined(self, chain: Shaper) -> None:
        """Called once the chain holds every stage (the forward stage keeps it, to shape each
        attempt's request through the stages' `target` hooks)."""

    async def request(self, step: Step) -> None:
        """Work on the way to the upstream."""

    async def target(self, step: Step, target: Target, raw: dict[str, Any]) -> dict[str, Any]:
        """The request as `target` gets it."""
        return raw

    def answer(self, step: Step) -> None:
        """Work on the way back."""


def overrides(stage: Stage, hook: str) -> bool:
    """Whether `stage` does something in `hook` (the base's hooks do nothing)."""
    return getattr(type(stage), hook) is not getattr(Stage, hook)

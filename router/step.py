"""The step in hand, as the pipeline and the answer writers share it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from router.config.routes import RouteBase
from router.edge_pool import Lease, Placement
from router.inner import InnerCalls
from router.policies.base import Decision, Policy, Target
from router.privacy.guard import PrivacyGuard
from router.protocol.chat import ChatRequest
from router.result import Facts
from router.trajectory.tracker import StepIdentity


@dataclass(slots=True)
class Route:
    name: str
    settings: RouteBase
    policy: Policy


@dataclass(slots=True)
class Step:
    """What the pipeline knows of the step in hand."""

    route: Route
    request: ChatRequest
    identity: StepIdentity
    decision: Decision
    started: float
    started_at: float
    calls: InnerCalls
    privacy: PrivacyGuard
    # Privacy, a constraint or a header asking for the edge forbids the cloud: no failover to it.
    cloud_forbidden: bool = False
    sent_to_cloud: list[dict[str, Any]] | None = None  # the messages the cloud received
    sent_encoded: list[bytes] | None = None  # their JSON each, where they were redacted
    # The main call in flight: its target, the bytes sent, whether it is the failover attempt
    # (what a step that ends without an answer is recorded and charged for).
    upstream: Target | None = None
    upstream_bytes: int = 0
    fallback: bool = False
    # The main calls that failed so far: (target, failure kind, HTTP status), for the record.
    failures: list[tuple[str, str, int | None]] = field(default_factory=list)
    # The edge pool's replicas in the order this step tries them (its home first), and the
    # in-flight count it holds on one until its streamed answer ends.
    placement: Placement | None = None
    lease: Lease | None = None
    recorded: bool = False  # the answer writer has taken the step's one record
    ticket: int = 0  # the record's place in the recorder's queue (`Tracker.kept`)

    @property
    def trajectory_id(self) -> str:
        return self.identity.trajectory_id

    def facts(self, target: Target, fallback: bool) -> Facts:
        decision = self.decision
        return Facts(
            target,
            self.route.name,
            decision.reason.value,
            self.trajectory_id,
            self.identity.step,
            decision.score,
            fallback,
            self.identity.stitch,
        )

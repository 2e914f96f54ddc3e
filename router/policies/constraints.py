"""Constraints, composable with every strategy: budgets, a maximum cloud share, a minimum gap
between cloud steps, and the privacy pin. They only ever turn a cloud decision into edge."""

from __future__ import annotations

from router import notes
from router.config.routes import Constraints
from router.policies.base import Decision, Reason
from router.trajectory.state import Trajectory


def cloud_refusal(constraints: Constraints, trajectory: Trajectory, step: int) -> Reason | None:
    """Why this step may not use the cloud, or None when it may."""
    if trajectory.notes.get(notes.PIN) == "edge":
        return Reason.PINNED
    counts, money = trajectory.counts, trajectory.money
    if constraints.budget_usd is not None and money["cloud_spend_usd"] >= constraints.budget_usd:
        return Reason.BUDGET
    if constraints.budget_calls is not None and counts["cloud_calls"] >= constraints.budget_calls:
        return Reason.BUDGET
    if constraints.max_cloud_share is not None:
        answered = counts["cloud_steps"] + counts["edge_steps"]
        # The share this step would make if the cloud answered it.
        if (counts["cloud_steps"] + 1) / (answered + 1) > constraints.max_cloud_share:
            return Reason.MAX_SHARE
    last = counts["last_cloud_step"]
    if constraints.min_cloud_gap is not None and last > 0 and step - last <= constraints.min_cloud_gap:
        return Reason.MIN_GAP
    return None


def constrain(decision: Decision, refusal: Reason | None) -> Decision:
    """The decision, or edge when the cloud is refused; a prepared answer stands as it is."""
    if decision.target != "cloud" or refusal is None or decision.answer is not None:
        return decision
    return Decision(target="edge", reason=refusal, score=decision.score)

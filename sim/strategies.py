"""The routes the demo compares: every strategy of the gateway, one route each, as a user would
write them in the YAML config (`routes: {tandem: …}`).

Where a strategy shows a model the agent's history in words (the LLM judge, the verifier, the
advisor), the demo lets it see the whole run: the simulated model places the step in its task by
reading the transcript, as a real one would, and a transcript cut to the last few steps would
leave it guessing from the last tool result alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Task routing's rule: tasks that start from failing tests, or rename across files, go to the
# cloud. They are the demo's hardest for the edge alone (solved in 39-56% of seeds 0-199, the
# others in 60-67%).
HARD_TASKS = r"\b(rename|fails)\b"
WHOLE_RUN = 200_000  # characters of transcript: more than any demo run writes


@dataclass(frozen=True)
class Strategy:
    """A route the demo gives the gateway under the model name `tandem`, which the agent asks for."""

    key: str  # names the trajectories: <key>-<task>
    label: str
    route: dict[str, Any]
    seeded: bool = False  # the route takes the demo's seed

    def route_settings(self, seed: int) -> dict[str, Any]:
        return {**self.route, "seed": seed} if self.seeded else dict(self.route)


STRATEGIES: tuple[Strategy, ...] = (
    Strategy("edge-only", "edge-only", {"strategy": "edge"}),
    Strategy("cloud-only", "cloud-only", {"strategy": "cloud"}),
    Strategy("random", "random p=0.4", {"strategy": "random", "p": 0.4}, seeded=True),
    Strategy("task", "task routing", {"strategy": "task", "cloud_if_matches": HARD_TASKS}),
    Strategy("entropy", "entropy > 1.7", {"strategy": "entropy", "threshold": 1.7}),
    # The shipped ONNX judge (trained on real public agent runs), at its card's threshold.
    Strategy("judge", "ONNX judge", {"strategy": "judge"}),
    Strategy(
        "llm-judge",
        "LLM judge (edge)",
        {"strategy": "llm_judge", "judge": "edge", "mode": "binary", "sees": "full", "max_chars": WHOLE_RUN},
    ),
    Strategy(
        "draft-verify",
        "draft+verify (edge)",
        {"strategy": "draft_verify", "verifier": "edge", "threshold": 0.5, "k": 64, "max_chars": WHOLE_RUN},
    ),
    Strategy("self-delegation", "self-delegation", {"strategy": "self_delegation"}),
    Strategy("advisor", "advisor", {"strategy": "advisor", "max_chars": WHOLE_RUN}),
    Strategy("sketch", "sketch", {"strategy": "sketch"}),
    Strategy("escalation", "escalation", {"strategy": "escalation"}),
    Strategy("cloud-capped", "cloud, share <= 0.4", {"strategy": "cloud", "constraints": {"max_cloud_share": 0.4}}),
)

# Strategies that make no inner model call: their steps cost one upstream call each.
NO_INNER_CALLS = frozenset({"edge-only", "cloud-only", "random", "task", "judge", "cloud-capped"})

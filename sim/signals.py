"""The simulated edge's noisy signals about its own step: how uncertain its first token is, what
it answers as a judge or as a verifier, and whether it asks for help when it may.

Each signal is drawn from the step's hidden truth (whether the edge gets this step wrong: the
draw in `script.decide`) plus noise from draws fixed by (seed, task, step, purpose), so that it is
a real signal, not an oracle, and the same seed always gives the same signals. The rates below
make the first-token entropy separate wrong steps from right ones with an AUC of about 0.75, and
make hard kinds of step (edits, recovery, the final answer) look harder to every signal even when
the edge gets them right: that is what a real small model's uncertainty looks like.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Literal

from sim.script import NextStep, draw

HARD_KINDS = frozenset({"edit", "write", "recover", "final"})
TOP_K = 20
MAX_ENTROPY = math.log(TOP_K)

# Mean first-token entropy (nats): a wrong step is uncertain; a right hard step a little so.
ENTROPY_MEAN = {"wrong": 1.75, "hard": 1.4, "easy": 1.15}
ENTROPY_SPREAD = 0.55

# P(the edge as judge says the step needs the cloud), P(it asks for help when it may).
JUDGE_YES = {"wrong": 0.70, "hard": 0.30, "easy": 0.06}
ASKS = {
    "delegate": {"wrong": 0.70, "hard": 0.15, "easy": 0.04},
    "advisor": {"wrong": 0.65, "hard": 0.15, "easy": 0.04},
}

Help = Literal["delegate", "advisor"]


def _case(step: NextStep) -> str:
    if step.wrong:
        return "wrong"
    return "hard" if step.kind in HARD_KINDS else "easy"


def gaussian(seed: int, task_id: str, step: int, purpose: str) -> float:
    """A standard normal number fixed by its inputs."""
    uniform = min(max(draw(seed, task_id, step, "edge", purpose), 1e-9), 1 - 1e-9)
    return NormalDist().inv_cdf(uniform)


def first_token_entropy(step: NextStep, seed: int, task_id: str) -> float:
    """The entropy (nats) of the edge's renormalised top-20 distribution of its first token."""
    value = ENTROPY_MEAN[_case(step)] + ENTROPY_SPREAD * gaussian(seed, task_id, step.step, "entropy")
    return min(max(value, 0.02), MAX_ENTROPY - 0.01)


def _entropy(beta: float, k: int) -> float:
    weights = [math.exp(-beta * i) for i in range(k)]
    total = sum(weights)
    return -sum((w / total) * math.log(w / total) for w in weights)


def top_logprobs(entropy: float, k: int = TOP_K, mass: float = 0.97) -> list[float]:
    """k log-probabilities, highest first, whose renormalised distribution has this entropy.

    A geometric distribution p_i ∝ exp(-β·i) (entropy falls as β grows) solved for β by
    bisection; `mass` is the share the top k hold, as a real server's top-k never sums to 1."""
    low, high = 0.0, 60.0
    for _ in range(60):
        middle = (low + high) / 2
        if _entropy(middle, k) > entropy:
            low = middle
        else:
            high = middle
    weights = [math.exp(-low * i) for i in range(k)]
    total = sum(weights)
    return [math.log(mass * w / total) if w > 0 else -100.0 for w in weights]


def judge_says_cloud(step: NextStep, seed: int, task_id: str) -> bool:
    """The edge's YES/NO when asked whether the step needs the stronger model."""
    return draw(seed, task_id, step.step, "edge", "judge") < JUDGE_YES[_case(step)]


def judge_score(step: NextStep, seed: int, task_id: str) -> float:
    """The edge's 0-1 rating of how much the step needs the stronger model."""
    value = (
        0.2
        + 0.35 * step.wrong
        + 0.15 * (step.kind in HARD_KINDS)
        + 0.22 * gaussian(seed, task_id, step.step, "judge-score")
    )
    return round(min(max(value, 0.0), 1.0), 2)


def verify_score(draft_wrong: bool, seed: int, task_id: str, step: int) -> float:
    """The edge's 0-1 rating of how likely a drafted step is correct."""
    value = 0.78 - 0.42 * draft_wrong + 0.22 * gaussian(seed, task_id, step, "verify")
    return round(min(max(value, 0.0), 1.0), 2)


def asks_for_help(help: Help, step: NextStep, seed: int, task_id: str) -> bool:
    """Whether the edge, offered the gateway's tool, calls it at this step."""
    return draw(seed, task_id, step.step, "edge", help) < ASKS[help][_case(step)]

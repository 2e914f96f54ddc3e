"""Thresholds: the offline one that gives a target cloud share on data, and an online controller
that holds a target share while serving.

Offline (`threshold_for_share`): the (1 - share) quantile of the scores, RouteLLM's recipe,
choosing among the observed scores so that ties (tree models give few distinct values) land as
close to the target share as they can.

Online (`OnlineThreshold`), the rule:

- global: a stochastic-approximation quantile tracker. After each decision the base threshold
  moves by `rate × (cloud − target)`: up after a cloud decision, down after an edge one. Its
  fixed point is the threshold at which the long-run share of cloud decisions equals the target,
  whatever the score distribution of the traffic, and it follows that distribution as it drifts.
- per trajectory: a proportional term on the trajectory's running share, smoothed towards the
  target by `prior_steps` pseudo-steps so that a run's first steps do not swing it, relative to
  the base: `threshold = base × (1 + gain × (smoothed_share − target))`. A run that has used
  more than its share of cloud steps needs a higher score for the next one, and one that used
  less a lower. The term scales with the base because the scores do: an agent family the judge
  never saw can score every step under 0.05, where a term in score units (0.5 × the excess
  share, as it was) outweighed the score itself and made the route a per-run quota; on the
  shipped rows, each family scored by a judge trained without it, the relative term sends 1 to
  16 points more of the failing steps to the cloud at the same share
  (`benchmarks/judge_gain/README.md`).
- both clamped to [lower, upper], so a burst of odd traffic cannot push the judge to all-edge or
  all-cloud.

It is pure Python with no I/O; the gateway keeps one per route and passes each trajectory's
counts in. One process, one controller: replicas each hold their own, which is fine for a share.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from judge.defaults import MAX_TRAJECTORY_GAIN, TRAJECTORY_GAIN


def threshold_for_share(scores: npt.ArrayLike, share: float) -> float:
    """The threshold t for which the share of `scores` >= t is closest to `share` (ties: the
    smaller share, i.e. the higher threshold)."""
    values = np.sort(np.asarray(scores, dtype=np.float64))
    if values.size == 0:
        raise ValueError("no scores to calibrate on")
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"cloud share must be in [0, 1], got {share}")
    if share == 0.0:
        return float(np.nextafter(values[-1], np.inf))
    candidates = np.unique(values)
    # Share of scores >= each candidate: everything from its first position on.
    shares = (values.size - np.searchsorted(values, candidates, side="left")) / values.size
    distance = np.abs(shares - share)
    best = np.flatnonzero(distance <= distance.min() + 1e-12)
    return float(candidates[best[-1]])


@dataclass
class OnlineThreshold:
    """Holds a target cloud share per trajectory and globally by moving the threshold online."""

    target_share: float
    initial: float  # the calibrated threshold from the model card
    lower: float = 0.0
    upper: float = 1.0
    rate: float = 0.01  # step of the global tracker per decision, in score units
    trajectory_gain: float = TRAJECTORY_GAIN  # relative threshold change per unit of a run's excess share
    prior_steps: float = 4.0  # pseudo-steps at the target share that smooth a young trajectory
    base: float = field(init=False)
    decisions: int = field(default=0, init=False)
    cloud_decisions: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        if not 0.0 <= self.target_share <= 1.0:
            raise ValueError(f"target_share must be in [0, 1], got {self.target_share}")
        if not 0.0 <= self.trajectory_gain <= MAX_TRAJECTORY_GAIN:
            raise ValueError(f"trajectory_gain must be in [0, {MAX_TRAJECTORY_GAIN}], got {self.trajectory_gain}")
        if self.lower > self.upper:
            raise ValueError(f"lower bound {self.lower} is above upper bound {self.upper}")
        self.base = self._clamp(self.initial)

    def _clamp(self, value: float) -> float:
        return min(max(value, self.lower), self.upper)

    @property
    def global_share(self) -> float:
        return self.cloud_decisions / self.decisions if self.decisions else 0.0

    def threshold_for(self, cloud_steps: int, answered_steps: int) -> float:
        """The threshold for a trajectory's next step, given its counts so far."""
        smoothed = (cloud_steps + self.prior_steps * self.target_share) / (answered_steps + self.prior_steps)
        return self._clamp(self.base * (1.0 + self.trajectory_gain * (smoothed - self.target_share)))

    def observe(self, cloud: bool) -> None:
        """Move the global threshold after a decision (`decide` calls it)."""
        self.decisions += 1
        self.cloud_decisions += int(cloud)
        self.base = self._clamp(self.base + self.rate * (float(cloud) - self.target_share))

    def decide(self, score: float, cloud_steps: int, answered_steps: int) -> tuple[bool, float]:
        """Whether the step goes to the cloud, and the threshold it was held to."""
        threshold = self.threshold_for(cloud_steps, answered_steps)
        cloud = score >= threshold
        self.observe(cloud)
        return cloud, threshold

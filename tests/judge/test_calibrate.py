"""Thresholds for a cloud share: the offline quantile and the online controller."""

from __future__ import annotations

import numpy as np
import pytest

from judge.calibrate import OnlineThreshold, threshold_for_share


@pytest.mark.parametrize("share", [0.1, 0.4, 0.75])
def test_threshold_gives_the_target_share(share: float) -> None:
    scores = np.random.default_rng(0).beta(2, 5, 10_000)
    threshold = threshold_for_share(scores, share)
    assert np.mean(scores >= threshold) == pytest.approx(share, abs=0.001)


def test_ties_land_as_close_as_they_can() -> None:
    scores = np.array([0.1] * 50 + [0.5] * 30 + [0.9] * 20)
    assert threshold_for_share(scores, 0.4) == 0.5  # 50% is the nearest share to 40% there is
    assert threshold_for_share(scores, 0.2) == 0.9
    assert np.mean(scores >= threshold_for_share(scores, 0.0)) == 0.0
    with pytest.raises(ValueError, match="cloud share"):
        threshold_for_share(scores, 1.5)


def test_online_threshold_converges_globally_and_per_trajectory() -> None:
    rng = np.random.default_rng(7)
    controller = OnlineThreshold(target_share=0.4, initial=0.9, lower=0.0, upper=1.0, rate=0.01)
    trajectories = 400
    shares = []
    cloud_total = 0
    steps_total = 0
    for _ in range(trajectories):
        cloud_steps = 0
        steps = int(rng.integers(20, 60))
        for answered in range(steps):
            cloud, _ = controller.decide(float(rng.beta(2, 5)), cloud_steps, answered)
            cloud_steps += cloud
        shares.append(cloud_steps / steps)
        cloud_total += cloud_steps
        steps_total += steps
    # Started far off (0.9 gives ~1% cloud), it reaches the target globally...
    late = shares[trajectories // 2 :]
    assert np.mean(late) == pytest.approx(0.4, abs=0.02)
    assert controller.global_share == pytest.approx(cloud_total / steps_total)
    # ...and each trajectory stays near it: the per-trajectory term pulls outliers back.
    assert np.percentile(late, 95) - np.percentile(late, 5) < 0.3
    assert 0.1 < controller.base < 0.5


def test_online_threshold_follows_a_drift_and_respects_bounds() -> None:
    rng = np.random.default_rng(3)
    controller = OnlineThreshold(target_share=0.3, initial=0.5, lower=0.2, upper=0.8, rate=0.01)
    for scores in (rng.uniform(0, 1, 4000), rng.uniform(0.3, 0.9, 4000)):
        decisions = [controller.decide(float(s), 0, 0)[0] for s in scores]
        assert np.mean(decisions[-1000:]) == pytest.approx(0.3, abs=0.05)
    # All scores far above the upper bound: the threshold stops at the bound, all go to the cloud.
    for _ in range(2000):
        controller.decide(0.99, 0, 0)
    assert controller.base == 0.8
    assert controller.threshold_for(cloud_steps=50, answered_steps=50) == 0.8


def test_young_trajectories_are_smoothed() -> None:
    controller = OnlineThreshold(target_share=0.4, initial=0.5, trajectory_gain=0.5, prior_steps=4)
    assert controller.threshold_for(0, 0) == pytest.approx(0.5)
    one_cloud = controller.threshold_for(1, 1)
    many_cloud = controller.threshold_for(20, 20)
    assert 0.5 < one_cloud < many_cloud
    assert controller.threshold_for(0, 20) < 0.5


def test_a_family_that_scores_low_is_routed_by_its_scores_not_by_a_quota_per_run() -> None:
    """An agent family the judge never saw can score every step under 0.05. The per-run term is
    relative to the threshold, so it cannot outweigh the scores there: the steps that go to the
    cloud are still the highest-scored ones (as with no per-run term), at the same share."""
    rng = np.random.default_rng(7)
    runs = [rng.uniform(0.0, 0.05, 30) for _ in range(200)]
    high = np.quantile(np.concatenate(runs), 0.8)  # the steps that most need the cloud

    def caught(gain: float) -> tuple[float, float]:
        controller = OnlineThreshold(target_share=0.4, initial=0.12, trajectory_gain=gain)
        cloud, top = [], []
        for scores in runs:
            cloud_steps = 0
            for answered, score in enumerate(scores):
                decided, _ = controller.decide(float(score), cloud_steps, answered)
                cloud_steps += int(decided)
                cloud.append(decided)
                top.append(score >= high)
        sent, wanted = np.asarray(cloud), np.asarray(top)
        return float(sent[len(sent) // 2 :].mean()), float(sent[wanted].mean())

    share, with_term = caught(0.5)
    _, without_term = caught(0.0)
    assert share == pytest.approx(0.4, abs=0.03)
    assert with_term >= without_term - 0.05
    assert with_term > 0.85

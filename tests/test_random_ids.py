"""Trajectory ids and step tokens come from a pool of system randomness (router/trajectory/
identify.py `random_hex`): the asked length in hex, never repeated across refills of the pool."""

from __future__ import annotations

import re

from router.trajectory.identify import new_trajectory_id, random_hex


def test_tokens_have_the_asked_length_and_do_not_repeat_across_refills() -> None:
    tokens = [random_hex(16) for _ in range(2000)]  # several pools' worth
    assert all(re.fullmatch(r"[0-9a-f]{32}", token) for token in tokens)
    assert len(set(tokens)) == len(tokens)


def test_trajectory_ids_keep_their_shape() -> None:
    ids = {new_trajectory_id("ns") for _ in range(1000)}
    assert len(ids) == 1000
    assert all(re.fullmatch(r"ns:traj-[0-9a-f]{20}", trajectory_id) for trajectory_id in ids)

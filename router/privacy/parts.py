"""What the privacy stages of every step share in one process, built once from the privacy
settings: the trajectory store, the metrics, the vault's key, the memo of what each
trajectory's messages held (router/privacy/memo.py, so that a long run's steps stay flat) and
the way to run work off the answer's path. `PrivacyParts.guard` opens one step's guard."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from router.config.privacy import PrivacyMode
from router.metrics.core import Metrics
from router.privacy.guard import PrivacyGuard
from router.privacy.memo import PrivacyMemo
from router.privacy.vault import VaultCipher
from router.trajectory.state import Trajectory
from router.trajectory.store import TrajectoryStore


@dataclass(frozen=True, slots=True)
class PrivacyParts:
    store: TrajectoryStore
    metrics: Metrics
    spawn: Callable[[Coroutine[Any, Any, None]], None]
    cipher: VaultCipher
    memo: PrivacyMemo

    def guard(
        self, route: str, mode: PrivacyMode, optional: frozenset[str], trajectory_id: str, trajectory: Trajectory
    ) -> PrivacyGuard:
        """The guard of one step of `trajectory` on `route` (its mode and opt-in detectors)."""
        return PrivacyGuard(
            mode,
            trajectory_id,
            trajectory.notes,
            self.store,
            self.metrics,
            self.spawn,
            cipher=self.cipher,
            route=route,
            memo=self.memo,
            born=trajectory.created_at,
            vault_size=trajectory.vault_size,
            optional=optional,
        )

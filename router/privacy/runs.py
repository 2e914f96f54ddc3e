"""What the trajectory tracker asks of privacy about a run (`RunPrivacy` in
router/trajectory/tracker.py), answered from the routes' privacy modes and the score's weights:
the engine builds it and hands it to the tracker, so that trajectories never import privacy."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from router.config.privacy import PrivacyMode, protects
from router.config.routes import RouteBase
from router.privacy.at_rest import stored_task
from router.privacy.exposure import privacy_score, vault_of
from router.trajectory.state import Trajectory
from router.trajectory.store import TrajectoryStore


class RoutePrivacy:
    """Each route's privacy mode (a name no route has: `allow`) and the score's weights."""

    def __init__(self, routes: Mapping[str, RouteBase], weights: Mapping[str, float]) -> None:
        self._modes: dict[str, PrivacyMode] = {name: route.privacy for name, route in routes.items()}
        self._weights = dict(weights)

    def protects(self, route: str) -> bool:
        return protects(self._modes.get(route, "allow"))

    def stored_task(self, messages: list[dict[str, Any]], route: str) -> str:
        return stored_task(messages, self._modes.get(route, "allow"))

    async def score(self, store: TrajectoryStore, trajectory: Trajectory) -> float:
        return privacy_score(await vault_of(store, trajectory), self._weights)

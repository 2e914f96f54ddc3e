"""What a trajectory's values came to: each value seen, and whether it reached the cloud,
read from its vault notes (router/notes.py) for the trajectory's score (`privacy_score`, in the
tracker) and its summary in the API (`exposure_summary`). Read side only: the guard writes them
(guard.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from router.notes import VAULT as VAULT_NOTES
from router.notes import VAULT_OUT as OUT
from router.notes import VAULT_VALUE as VAULT
from router.privacy.redact import kind_of
from router.trajectory.state import Trajectory
from router.trajectory.store import TrajectoryStore


async def vault_of(store: TrajectoryStore, trajectory: Trajectory) -> dict[str, str]:
    """The trajectory's vault notes (for `privacy_score` and `exposure_summary`): its vault, and
    any that a layout before the vault's own store kept in its notes."""
    legacy = {key: value for key, value in trajectory.notes.items() if key.startswith(VAULT_NOTES)}
    return {**legacy, **await store.vault(trajectory.id)}


def privacy_score(notes: Mapping[str, str], weights: Mapping[str, float]) -> float:
    """`1 − Σ weight × leaked / Σ weight` over the values seen; 1.0 when none were."""
    seen = {key[len(VAULT) :] for key in notes if key.startswith(VAULT)}
    if not seen:
        return 1.0
    exposed = {key[len(OUT) :] for key in notes if key.startswith(OUT)}

    def weight(placeholder: str) -> float:
        return weights.get(kind_of(placeholder), 1.0)

    total = sum(weight(p) for p in seen)
    leaked = sum(weight(p) for p in seen & exposed)
    return 1.0 - leaked / total if total else 1.0


def exposure_summary(notes: Mapping[str, str], weights: Mapping[str, float]) -> dict[str, Any]:
    seen: dict[str, int] = {}
    exposed: dict[str, int] = {}
    for key in notes:
        if key.startswith(VAULT):
            kind = kind_of(key[len(VAULT) :])
            seen[kind] = seen.get(kind, 0) + 1
            if OUT + key[len(VAULT) :] in notes:
                exposed[kind] = exposed.get(kind, 0) + 1
    return {"seen": seen, "exposed": exposed, "score": privacy_score(notes, weights)}

"""In-memory trajectory state: bounded, least recently used trajectories evicted first."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from router.ledger import StepRecord

# A runaway client must not grow one trajectory without bound; the totals stay right anyway.
MAX_STEPS_KEPT = 10_000


@dataclass(slots=True)
class TrajectoryState:
    trajectory_id: str
    steps: int = 0
    records: list[StepRecord] = field(default_factory=list)


@dataclass(slots=True)
class MemoryStore:
    max_trajectories: int = 100_000
    _states: OrderedDict[str, TrajectoryState] = field(default_factory=OrderedDict)

    def next_step(self, trajectory_id: str) -> int:
        """Count a new step of the trajectory and return its 1-based index."""
        state = self._states.get(trajectory_id)
        if state is None:
            state = self._states[trajectory_id] = TrajectoryState(trajectory_id)
            if len(self._states) > self.max_trajectories:
                self._states.popitem(last=False)
        else:
            self._states.move_to_end(trajectory_id)
        state.steps += 1
        return state.steps

    def record(self, record: StepRecord) -> None:
        state = self._states.get(record.trajectory_id)
        if state is not None and len(state.records) < MAX_STEPS_KEPT:
            state.records.append(record)

    def get(self, trajectory_id: str) -> TrajectoryState | None:
        return self._states.get(trajectory_id)

"""The run's own record: of its earlier steps, how many of each action type the harness reported
on, and how many of those failed (the harness-status label, judge/status.py).

A run that keeps failing at edits will likely fail its next edit: the record carries what the
tail of the conversation has forgotten. It is lagged by one step: a step is judged with the
labels of the steps before the previous one. The gateway reads a step's label from the tool
results of the next request and does so off the answer's path, when it writes that request's
step record (router/trajectory/recorder.py); so when step t is decided, the labels of steps up to
t-2 are in the trajectory's store and nothing is read for it on the path. The previous step's
outcome is what the error signals of the latest tool output already describe.

An import (judge/replay.py) builds the same record from the same labels, step by step
(`LaggedRecord`); the gateway keeps it as counts of its trajectory (`RECORD_FIELDS`, summed by
both stores) and hands it to the features in `TrajectoryCounters.record`.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping
from typing import NamedTuple

from judge.actions import ACTION_TYPES, ActionType

_ZEROS = (0,) * len(ACTION_TYPES)
_INDEX = {kind: index for index, kind in enumerate(ACTION_TYPES)}

# The store's counts, per action type: steps labelled, and of them failed.
LABELLED_FIELDS = tuple(f"run_labelled_{kind.value}" for kind in ACTION_TYPES)
FAILED_FIELDS = tuple(f"run_failed_{kind.value}" for kind in ACTION_TYPES)
RECORD_FIELDS = (*LABELLED_FIELDS, *FAILED_FIELDS)
_LABELLED_OF = operator.itemgetter(*LABELLED_FIELDS)
_FAILED_OF = operator.itemgetter(*FAILED_FIELDS)
# An action type's name (`StepRecord.failed_before_action`) -> its two fields.
FIELDS_OF_TYPE = {kind.value: (LABELLED_FIELDS[index], FAILED_FIELDS[index]) for index, kind in enumerate(ACTION_TYPES)}

# The values `step_features` appends (the state judge's) and `draft_features` (the draft's type).
RECORD_FEATURE_NAMES = ("run_labelled_log", "run_failed_share")
DRAFT_RECORD_FEATURE_NAMES = ("draft_type_labelled_log", "draft_type_failed_share", "draft_type_never_failed")


class RunRecord(NamedTuple):
    """Per action type (in `ACTION_TYPES` order): earlier steps labelled, and of them failed (a
    tuple: made on every step, at a fraction of a frozen dataclass's cost)."""

    labelled: tuple[int, ...] = _ZEROS
    failed: tuple[int, ...] = _ZEROS

    def add(self, action: ActionType, failed: bool) -> RunRecord:
        index = _INDEX[action]
        labelled = list(self.labelled)
        labelled[index] += 1
        failures = list(self.failed)
        failures[index] += int(failed)
        return RunRecord(tuple(labelled), tuple(failures))

    @classmethod
    def from_counts(cls, counts: Mapping[str, int]) -> RunRecord:
        """The record kept in a trajectory's counts (`RECORD_FIELDS`; a missing one: 0)."""
        try:
            # A trajectory's counts hold every field: one C call per tuple (read on every step).
            return cls(_LABELLED_OF(counts), _FAILED_OF(counts))
        except KeyError:
            return cls(
                tuple(counts.get(name, 0) for name in LABELLED_FIELDS),
                tuple(counts.get(name, 0) for name in FAILED_FIELDS),
            )

    def state_values(self) -> list[float]:
        """`RECORD_FEATURE_NAMES`: how many steps are on record, and the share of them that failed."""
        labelled = sum(self.labelled)
        return [math.log1p(labelled), sum(self.failed) / labelled if labelled else 0.0]

    def type_values(self, action: ActionType) -> list[float]:
        """`DRAFT_RECORD_FEATURE_NAMES` for a step of type `action`: steps of that type on record,
        the share of them that failed, whether there are some and none failed."""
        index = _INDEX[action]
        labelled, failed = self.labelled[index], self.failed[index]
        return [math.log1p(labelled), failed / labelled if labelled else 0.0, float(labelled > 0 and failed == 0)]


EMPTY_RECORD = RunRecord()


class LaggedRecord:
    """The record an import judges each step of a run with, built as the gateway builds it: a
    step's label joins the record one step after it is known."""

    __slots__ = ("_pending", "record")

    def __init__(self) -> None:
        self.record = EMPTY_RECORD
        self._pending: tuple[ActionType, bool] | None = None

    def labelled(self, action: ActionType, failed: bool | None) -> None:
        """The step just judged took `action`, which the harness reported as `failed` (None:
        nothing reported); the label of the step before it joins the record."""
        if self._pending is not None:
            self.record = self.record.add(*self._pending)
        self._pending = (action, failed) if failed is not None else None

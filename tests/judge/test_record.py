"""The run's own record (judge/record.py): lagged by one step, built the same by an import, by
the migration of older rows and by the gateway's trajectory counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.actions import ActionType
from judge.draft import DRAFT_FEATURE_NAMES
from judge.features import FEATURE_NAMES
from judge.importers import read_run
from judge.record import LaggedRecord, RunRecord
from judge.replay import replay

FILES = Path(__file__).parent / "trajectories"


def test_a_failure_counts_from_the_second_step_after_it() -> None:
    lagged = LaggedRecord()
    lagged.labelled(ActionType.TEST, True)  # step 1 failed
    # Step 2 is judged right after the failure: its label is the latest tool output's, not the record's.
    assert lagged.record == RunRecord()
    lagged.labelled(ActionType.EDIT, False)  # step 2
    # Step 3: step 1's failure is on record, step 2's success not yet.
    assert lagged.record == RunRecord().add(ActionType.TEST, True)
    assert lagged.record.state_values() == [pytest.approx(0.6931, abs=1e-4), 1.0]
    assert lagged.record.type_values(ActionType.TEST) == [pytest.approx(0.6931, abs=1e-4), 1.0, 0.0]
    assert lagged.record.type_values(ActionType.EDIT) == [0.0, 0.0, 0.0]
    lagged.labelled(ActionType.EDIT, None)  # step 3: nothing followed it
    assert lagged.record.type_values(ActionType.EDIT) == [pytest.approx(0.6931, abs=1e-4), 0.0, 1.0]
    lagged.labelled(ActionType.EDIT, True)  # step 4: step 3 had no label, nothing joins
    assert sum(lagged.record.labelled) == 2


def test_the_record_is_counted_from_the_store_fields() -> None:
    record = RunRecord().add(ActionType.EDIT, True).add(ActionType.EDIT, False).add(ActionType.READ, False)
    counts = {"run_labelled_edit": 2, "run_failed_edit": 1, "run_labelled_read": 1, "cloud_steps": 7}
    assert RunRecord.from_counts(counts) == record
    assert record.type_values(ActionType.EDIT)[1] == 0.5 and record.state_values()[1] == pytest.approx(1 / 3)


def test_imported_rows_carry_the_lagged_record() -> None:
    rows = list(replay(read_run(FILES / "openhands-events.json")))  # test failed, read ok, submit
    at = FEATURE_NAMES.index("run_failed_share")
    assert [row["features"][at] for row in rows] == [0.0, 0.0, 1.0]
    draft_at = DRAFT_FEATURE_NAMES.index("draft_type_failed_share")
    assert [row["draft_features"][draft_at] for row in rows] == [0.0, 0.0, 0.0]  # no submit on record

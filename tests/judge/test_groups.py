"""`tandem judge groups`: feature groups within and across agent families."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from judge.cli import main
from judge.features import FEATURE_NAMES
from judge.groups import GROUPS, group_columns
from judge.rows import write_rows
from tests.judge.helpers import synthetic_rows


def test_every_feature_is_in_exactly_one_group() -> None:
    columns = [c for group in GROUPS for c in group_columns(group)]
    assert sorted(columns) == list(range(len(FEATURE_NAMES)))


def test_groups_report_within_and_across_families(tmp_path: Path, capsys: Any) -> None:
    # The synthetic label depends on err_any (errors) and act1_read (actions) only.
    rows = synthetic_rows(trajectories=100, steps=6)
    for row in rows:
        row["family"] = "alpha" if int(row["trajectory_id"][1:]) % 2 else "beta"
    data = tmp_path / "rows.jsonl"
    write_rows(data, rows)
    assert main(["groups", "--data", str(data), "--labels", "agreement", "--json"]) == 0
    result = orjson.loads(capsys.readouterr().out)
    groups = result["groups"]
    assert result["families"] == {"alpha": 300, "beta": 300}
    assert groups["errors"]["alone"] > 0.65 and groups["errors"]["without"] < result["all"]
    assert groups["task"]["alone"] < 0.6  # noise: nothing to learn from it
    assert groups["errors"]["across_families"]["alpha->beta"] > 0.65
    assert set(result["across_families"]) == {"alpha->beta", "beta->alpha"}

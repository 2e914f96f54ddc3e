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
    assert {f: c["rows"] for f, c in result["families"].items()} == {"alpha": 300, "beta": 300}
    assert all(c["positives"] + c["negatives"] == 300 for c in result["families"].values())
    assert groups["errors"]["alone"] > 0.65 and groups["errors"]["without"] < result["all"]
    assert groups["task"]["alone"] < 0.6  # noise: nothing to learn from it
    assert groups["errors"]["across_families"]["alpha->beta"] > 0.65
    assert set(result["across_families"]) == {"alpha->beta", "beta->alpha"}


def test_groups_print_counts_beside_each_figure_and_do_not_score_small_families(tmp_path: Path, capsys: Any) -> None:
    rows = synthetic_rows(trajectories=160, steps=6)
    for row in rows:
        row["family"] = "alpha" if int(row["trajectory_id"][1:]) % 2 else "beta"
        if row["family"] == "beta":
            row["edge_wrong"] = int(row["step"] == 1 and int(row["trajectory_id"][1:]) < 20)  # 10 positives
    data = tmp_path / "rows.jsonl"
    write_rows(data, rows)
    assert main(["groups", "--data", str(data)]) == 0  # the label the rows carry: agreement
    out = capsys.readouterr().out
    assert out.startswith("agreement labels; held out: ")
    assert "  family beta: 480 rows (10 positives, 470 negatives)" in out
    assert "all features: held-out AUC 0." in out and "+/" in out
    assert "  all features alpha->beta: not scored (10 positives < 20, 470 negatives)" in out
    beta_to_alpha = next(line for line in out.splitlines() if line.startswith("  all features beta->alpha: "))
    assert "+/" in beta_to_alpha and "-)" in beta_to_alpha

"""`tandem judge share`: each family's rows replayed through the online cloud-share controller."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import orjson

from judge.calibrate import OnlineThreshold
from judge.cli import main
from judge.features import feature_index
from judge.rows import write_rows
from judge.share import interleave, replay_decisions, warm_up
from tests.judge.helpers import synthetic_rows


def test_runs_interleave_as_a_gateway_serves_them() -> None:
    runs = [np.asarray([0.1, 0.2, 0.3]), np.asarray([0.4]), np.asarray([0.5, 0.6])]
    assert interleave(runs, 2) == [(0, 0.1), (1, 0.4), (0, 0.2), (2, 0.5), (0, 0.3), (2, 0.6)]
    assert [run for run, _ in interleave(runs, 1)] == [0, 0, 0, 1, 2, 2]


def test_the_warm_up_is_where_the_rest_of_the_steps_hold_the_share() -> None:
    decisions = np.asarray([True] * 200 + [True, False, False, True, False] * 100)  # 100% then 40%
    start = warm_up(decisions, 0.4)
    assert start is not None and 100 < start <= 200
    assert warm_up(np.ones(100, dtype=bool), 0.4) is None
    # Each run's own counts reach the controller: one that used more than its share is held back.
    controller = OnlineThreshold(0.4, 0.5)
    decided = replay_decisions([np.full(30, 0.55)], controller, concurrent=1)
    assert 0.2 < decided.mean() < 0.6


def _rows(tmp_path: Path) -> Path:
    rows = synthetic_rows(trajectories=240, steps=10)
    error = feature_index("err_any")
    for row in rows:
        number = int(row["trajectory_id"][1:])
        row["family"] = "seen" if number < 120 else "unseen"
        if row["family"] == "unseen":  # an agent whose every step shows an error: it scores high
            row["features"][error] = 1.0
    data = tmp_path / "rows.jsonl"
    write_rows(data, rows)
    return data


def test_each_family_lands_in_the_band_after_the_warm_up(tmp_path: Path, capsys: Any) -> None:
    data = _rows(tmp_path)
    model = tmp_path / "judge.onnx"
    seen = tmp_path / "seen.jsonl"
    write_rows(seen, [orjson.loads(line) for line in data.read_bytes().splitlines() if b'"seen"' in line])
    assert main(["train", "--data", str(seen), "--out", str(model), "--model", "logreg", "--labels", "agreement"]) == 0
    capsys.readouterr()
    assert main(["share", "--data", str(data), "--model", str(model), "--json"]) == 0
    results = {r["family"]: r for r in orjson.loads(capsys.readouterr().out)}
    assert set(results) == {"seen", "unseen"}
    unseen = results["unseen"]
    assert unseen["steps"] == 1200 and unseen["runs"] == 120
    assert unseen["fixed_share"] > 0.6  # the card's threshold alone: far from 40% on the family it never saw
    for result in results.values():
        assert abs(result["after_share"] - 0.4) <= 0.07 and result["within"], result
        assert result["warm_up"] is not None and result["warm_up"] <= 200, result
    assert main(["share", "--data", str(data), "--model", str(model), "--family", "unseen"]) == 0
    table = capsys.readouterr().out
    assert "| unseen | 120 | 1200 |" in table and "| seen |" not in table
    assert main(["share", "--data", str(data), "--model", str(model), "--family", "nobody"]) == 2

"""`tandem judge lofo`: each family left out in turn, trained on the others, scored with counts, an
AUC interval, its cloud share and a plot; a family with few positives is counted, not scored."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson

from judge.cli import main
from judge.lofo import POOLED
from judge.rows import write_rows
from tests.judge.helpers import synthetic_rows

FAMILIES = ("alpha-1", "beta-0", "gamma-2")


def _rows() -> list[dict[str, Any]]:
    rows = synthetic_rows(trajectories=150, steps=6)
    for row in rows:
        number = int(row["trajectory_id"][1:])
        row["family"] = FAMILIES[number % 3]
        row["action_failed"], row["edge_wrong"], row["teacher_label"] = row["edge_wrong"], None, None
    # A fourth family with a handful of failures: counted, not given an AUC.
    for row in synthetic_rows(trajectories=10, steps=6, seed=3):
        row.update(family="delta-1", trajectory_id="d" + row["trajectory_id"], edge_wrong=None, teacher_label=None)
        row["action_failed"] = int(row["step"] == 2 and row["trajectory_id"] < "dt5")
        rows.append(row)
    return rows


def test_lofo_scores_every_family_left_out_with_counts_intervals_and_plots(tmp_path: Path, capsys: Any) -> None:
    data = tmp_path / "rows.jsonl"
    write_rows(data, _rows())
    out = tmp_path / "lofo"
    args = ["lofo", "--data", str(data), "--model", "logreg", "--bootstrap", "50", "--out", str(out)]
    assert main(args) == 0
    table = capsys.readouterr().out
    assert table == (out / "lofo.md").read_text()
    assert table.startswith("# Leave one family out: rows.jsonl, logreg, failed labels, sees state")
    results = {r["family"]: r for r in orjson.loads((out / "lofo.json").read_bytes())}
    assert set(results) - {"pooled (each family scored by the model trained without it)"} == {*FAMILIES, "delta-1"}
    for family in FAMILIES:
        r = results[family]
        assert r["positives"] >= 20 and r["negatives"] > r["positives"] and r["trajectories"] == 50
        # The label depends on two features in every family: learnable across them.
        assert r["auc"] > 0.7 and r["interval"][0] < r["auc"] < r["interval"][1] <= 1.0
        assert 0.2 < r["cloud_share"] < 0.6 and r["caught"] > r["cloud_share"]
        assert (out / f"lofo-{family}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"| {family} | 50 | {r['positives']} | {r['negatives']} | {r['auc']} |" in table
    delta = results["delta-1"]
    assert (delta["positives"], delta["negatives"]) == (5, 55)
    assert delta["auc"] is None and delta["note"] == "fewer than 20 positives: not scored"
    assert "| delta-1 | 10 | 5 | 55 |  |  |" in table
    # All the families' left-out scores together: the off-family figure for any agent.
    pooled = results["pooled (each family scored by the model trained without it)"]
    assert pooled["positives"] == sum(results[f]["positives"] for f in (*FAMILIES, "delta-1"))
    assert pooled["trajectories"] == 160 and pooled["auc"] > 0.7 and 0.2 < pooled["cloud_share"] < 0.6
    assert pooled["interval"][0] < pooled["auc"] < pooled["interval"][1]
    assert (out / "lofo-pooled.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_lofo_on_one_family_says_there_is_nothing_to_train_on(tmp_path: Path, capsys: Any) -> None:
    rows = synthetic_rows(trajectories=40, steps=4)
    for row in rows:
        row["family"] = "mini-swe-agent-1"
    data = tmp_path / "rows.jsonl"
    write_rows(data, rows)
    assert main(["lofo", "--data", str(data), "--model", "logreg"]) == 0
    captured = capsys.readouterr()
    assert (
        "| mini-swe-agent-1 | 40 |" in captured.out and "the only family: no other family to train on" in captured.out
    )
    assert "one family only" in captured.err


def test_lofo_breaks_a_family_down_by_what_failed(tmp_path: Path, capsys: Any) -> None:
    """A family whose failures are of two kinds: one the features say (learnt on the other
    families), one at random (a harness's own limit no other family shows): the family's figure
    mixes them, the breakdown tells them apart."""
    rows = _rows()
    rng = random.Random(7)
    for row in rows:
        if row["family"] != "alpha-1":
            continue
        if row["action_failed"]:
            row["failure"] = "exit code 1"
        elif rng.random() < 0.2:
            row["action_failed"], row["failure"] = 1, "alpha error message"
    data = tmp_path / "rows.jsonl"
    write_rows(data, rows)
    out = tmp_path / "lofo"
    assert main(["lofo", "--data", str(data), "--model", "logreg", "--bootstrap", "20", "--out", str(out)]) == 0
    table = capsys.readouterr().out
    alpha = {r["family"]: r for r in orjson.loads((out / "lofo.json").read_bytes())}["alpha-1"]
    (exits, exits_auc), (refused, refused_auc) = (
        alpha["by_failure"]["exit code 1"],
        alpha["by_failure"]["alpha error message"],
    )
    assert exits + refused == alpha["positives"] and refused >= 20
    assert exits_auc > 0.75 and 0.35 < refused_auc < 0.65
    assert exits_auc > alpha["auc"] > refused_auc
    assert f"| alpha-1 | exit code 1 | {exits} | {exits_auc} |" in table
    assert f"| alpha-1 | alpha error message | {refused} | {refused_auc} |" in table
    # Apart from the harness's own messages: the failures the command's result reports.
    assert alpha["by_failure"]["all but the harness's own messages"] == [exits, exits_auc]
    # Rows that name no reason are counted under one.
    assert "| beta-0 | not given |" in table
    # The pooled row too: every family's left-out scores by reason.
    pooled = {r["family"]: r for r in orjson.loads((out / "lofo.json").read_bytes())}[POOLED]
    assert pooled["by_failure"]["alpha error message"][0] == refused
    assert pooled["by_failure"]["exit code 1"][0] == exits

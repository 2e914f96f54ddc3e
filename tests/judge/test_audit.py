"""`tandem judge audit`: the status label's precision and recall against hand-read verdicts, per
family and sample; the shipped audit covers every family the shipped models are trained on and
its labels are the ones the shipped rows carry."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from judge.audit import read_audit, scores
from judge.cli import main
from judge.rows import load_rows

DATA = Path(__file__).resolve().parents[2] / "judge" / "data"


def entry(family: str, sample: int, verdict: int, new: int, old: int, **extra: Any) -> dict[str, Any]:
    return {"family": family, "sample": sample, "step_id": "r:1", "verdict": verdict, "new_label": new,
            "old_label": old, **extra}  # fmt: skip


def test_precision_and_recall_per_family_and_sample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    entries = [
        entry("a-1", 1, 1, 1, 0),
        entry("a-1", 1, 1, 0, 1),
        entry("a-1", 1, 0, 1, 1),
        entry("a-1", 1, 0, 0, 0),
        entry("a-1", 2, 1, 1, 1, stratified=True),
        entry("b-0", 1, 0, 0, 0),
    ]
    path = tmp_path / "audit.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(e) for e in entries) + b"\n")
    table = scores(read_audit(path))
    a = table[("a-1", "1")]
    assert (a.steps, a.failed, a.marked, a.right) == (4, 2, (2, 2), (1, 1))
    # The stratified sample is reported on its own and left out of the random samples' figures.
    assert table[("a-1", "random samples")].steps == 4 and table[("a-1", "2")].steps == 1
    assert main(["audit", "--file", str(path)]) == 0
    out = capsys.readouterr().out
    assert "| a-1 | 1 | 4 | 2 | 0.500 (1/2) | 0.500 (1/2) | 0.500 (1/2) | 0.500 (1/2) |" in out
    assert "| b-0 | 1 | 1 | 0 | – (0/0) | – (0/0) |" in out


def test_a_broken_audit_line_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_bytes(orjson.dumps(entry("a-1", 1, 1, 1, 0)) + b"\n" + b'{"family": "a-1"}\n')
    assert main(["audit", "--file", str(path)]) == 2
    assert "audit.jsonl:2: missing sample, verdict, new_label, old_label" in capsys.readouterr().err


def test_the_shipped_audit_covers_each_family_trained_on_with_the_shipped_labels() -> None:
    audit = read_audit(DATA / "label-audit.jsonl")
    rows = {f"{r['trajectory_id']}:{r['step']}": r for r in load_rows(DATA / "real-runs.jsonl.gz", show_progress=False)}
    random_steps = Counter(e["family"] for e in audit if not e.get("stratified"))
    assert {r["family"] for r in rows.values()} <= {f for f, n in random_steps.items() if n >= 100}
    for e in audit:
        assert rows[e["step_id"]]["action_failed"] == e["new_label"], e["step_id"]
        assert rows[e["step_id"]]["family"] == e["family"]

"""The left-out AUC the docs quote for the shipped judges is the pooled row of `tandem judge lofo`
(judge/data/lofo/{state,draft}/lofo.md): docs/judge.md and docs/strategies.md say the same."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]


def _pooled(sees: str) -> str:
    """The pooled left-out AUC of `judge/data/lofo/<sees>/lofo.md`, to three decimals."""
    table = (ROOT / "judge" / "data" / "lofo" / sees / "lofo.md").read_text()
    row = re.search(r"^\| pooled \(each family scored by the model trained without it\) \|(.*)$", table, re.M)
    assert row is not None, f"no pooled row in judge/data/lofo/{sees}/lofo.md"
    auc = row.group(1).split("|")[3].strip()
    return f"{float(auc):.3f}"


def _said(path: str) -> str:
    return " ".join((ROOT / path).read_text().split())  # lines joined: a figure may wrap


def test_the_docs_quote_the_pooled_left_out_auc_of_both_judges() -> None:
    draft, state = _pooled("draft"), _pooled("state")
    assert f"left-out AUC {draft} pooled against {state} for the state alone" in _said("docs/strategies.md")
    assert f"pooled {draft} against {state}" in _said("docs/judge.md")

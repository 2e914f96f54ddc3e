"""Strategies only read the step's inner-call ledger: a verdict on one of their calls is returned
in `Decision.verdicts` and written by the decide stage (router/chain/decide.py). The engine
tests show the verdicts arrive in the record (tests/test_engine_strategies.py)."""

from __future__ import annotations

import ast
from pathlib import Path

POLICIES = Path(__file__).resolve().parents[1] / "router" / "policies"


def _writes_to_ledger(source: str) -> list[str]:
    """The assignment targets in `source` that reach into a step's inner calls (`….calls.…`)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            text = ast.unparse(target)
            if ".calls." in text or text.startswith("calls."):
                found.append(text)
    return found


def test_no_strategy_writes_into_the_inner_call_ledger() -> None:
    writes = {path.name: _writes_to_ledger(path.read_text()) for path in sorted(POLICIES.glob("*.py"))}
    assert {name: found for name, found in writes.items() if found} == {}


def test_the_check_finds_a_planted_write() -> None:
    planted = "def decide(step):\n    step.calls.made[0].status = 'invalid'\n"
    assert _writes_to_ledger(planted) == ["step.calls.made[0].status"]

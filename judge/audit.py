"""`tandem judge audit`: the harness-status label against a hand-read sample.

The audit file (`judge/data/label-audit.jsonl`) holds one step a line: its `family`, `sample`
(a number: samples drawn at different times, or stratified, are kept apart), `step_id`, `file`,
the reader's `verdict` (1: the action failed, as the agent would see it) and the labels the code
gave the step: `new_label` (`judge/status.py`) and `old_label` (`judge/signals.py`, any error
signal in what followed). Per family and sample, this prints the steps, the failures read, and
each label's precision and recall against the verdicts (with the counts behind them), so that
the figures in the docs can be made again from the file.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from judge.rows import JudgeTrainingError

LABELS = ("new_label", "old_label")


@dataclass
class Score:
    steps: int = 0
    failed: int = 0  # by the reader's verdict
    marked: tuple[int, int] = (0, 0)  # steps each label marks failed
    right: tuple[int, int] = (0, 0)  # of those, failed by the verdict


def read_audit(path: Path) -> list[dict[str, Any]]:
    entries = []
    for number, line in enumerate(path.read_bytes().splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise JudgeTrainingError(f"{path}:{number}: not JSON ({exc})") from None
        if not isinstance(entry, dict):
            raise JudgeTrainingError(f"{path}:{number}: a JSON {type(entry).__name__}, not an audited step (an object)")
        missing = [key for key in ("family", "sample", "verdict", *LABELS) if key not in entry]
        if missing:
            raise JudgeTrainingError(f"{path}:{number}: missing {', '.join(missing)}")
        entries.append(entry)
    if not entries:
        raise JudgeTrainingError(f"{path}: no audited step in it (one JSON object a line)")
    return entries


def scores(entries: list[dict[str, Any]]) -> dict[tuple[str, str], Score]:
    """Per (family, sample), and per (family, "all random") over the samples not stratified."""
    table: dict[tuple[str, str], Score] = defaultdict(Score)
    for entry in entries:
        keys = [(entry["family"], str(entry["sample"]))]
        if not entry.get("stratified"):
            keys.append((entry["family"], "random samples"))
        for key in keys:
            score = table[key]
            score.steps += 1
            score.failed += int(entry["verdict"])
            marked = [int(entry[label] or 0) for label in LABELS]
            score.marked = (score.marked[0] + marked[0], score.marked[1] + marked[1])
            right = [m * int(entry["verdict"]) for m in marked]
            score.right = (score.right[0] + right[0], score.right[1] + right[1])
    return dict(sorted(table.items()))


def _ratio(numerator: int, denominator: int) -> str:
    return f"{numerator / denominator:.3f} ({numerator}/{denominator})" if denominator else f"– (0/{denominator})"


def markdown(table: dict[tuple[str, str], Score]) -> str:
    lines = [
        "| family | sample | steps | failed (read) | status label precision | recall "
        "| error-signal label precision | recall |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (family, sample), s in table.items():
        cells = [family, sample, str(s.steps), str(s.failed)]
        for i in range(len(LABELS)):
            cells += [_ratio(s.right[i], s.marked[i]), _ratio(s.right[i], s.failed)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def add_parser(commands: Any) -> None:
    parser = commands.add_parser("audit", help="precision and recall of the status label on hand-read steps")
    parser.add_argument(
        "--file",
        type=Path,
        default=Path(__file__).parent / "data" / "label-audit.jsonl",
        help="the hand-read steps: one a line, with the reader's verdict and the labels given",
    )
    parser.add_argument("--json", action="store_true", help="the figures as JSON")


def run_audit(args: argparse.Namespace) -> int:
    table = scores(read_audit(args.file))
    if args.json:
        rows = [{"family": f, "sample": s, **vars(score)} for (f, s), score in table.items()]
        print(orjson.dumps(rows, option=orjson.OPT_INDENT_2).decode())
    else:
        print(markdown(table), end="")
    return 0

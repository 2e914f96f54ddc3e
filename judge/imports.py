"""`tandem judge import`: trajectory files of real agents -> judge rows (`judge.replay`)."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from judge.importers import TrajectoryFormatError, read_run
from judge.importers.outcomes import read_outcomes
from judge.progress import progress
from judge.replay import replay
from judge.rows import write_rows

# What a folder is searched for (files named on the command line are read whatever their name).
TEXT_FIELDS = ("task", "command", "excerpt")
PATTERNS = ("*.traj.json", "*.traj", "*.jsonl", "*trajectory*.json", "*events*.json")


def add_parser(commands: Any) -> None:
    parser = commands.add_parser("import", help="read agent trajectory files into judge rows")
    parser.add_argument("paths", nargs="+", type=Path, help="trajectory files, or folders searched for them")
    parser.add_argument("--out", type=Path, required=True, help="rows, JSON lines (.gz: compressed)")
    parser.add_argument("--outcomes", type=Path, action="append", default=[], help="run id -> resolved (JSON)")
    parser.add_argument("--keep-going", action="store_true", help="skip bad files (each one is reported)")
    parser.add_argument(
        "--no-text", action="store_true", help="leave out task, command and excerpt (small rows to check in)"
    )


def trajectory_files(paths: list[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            found = {file for pattern in PATTERNS for file in path.rglob(pattern) if file.is_file()}
            yield from sorted(found)
        else:
            yield path


def run_import(args: argparse.Namespace) -> int:
    outcomes: dict[str, bool] = {}
    for file in args.outcomes:
        outcomes.update(read_outcomes(file))
    families: Counter[str] = Counter()
    failures: list[str] = []
    runs = 0

    def rows() -> Iterator[dict[str, Any]]:
        nonlocal runs
        files = list(trajectory_files(args.paths))
        for file in progress(files, "importing trajectories"):
            try:
                run = read_run(file)
            except TrajectoryFormatError as exc:
                if not args.keep_going:
                    raise
                failures.append(str(exc))
                continue
            if run.outcome is None and run.trajectory_id in outcomes:
                run.outcome = {"success": outcomes[run.trajectory_id]}
            runs += 1
            for row in replay(run):
                families[run.family] += 1
                if args.no_text:
                    for key in TEXT_FIELDS:
                        row.pop(key, None)
                yield row

    count = write_rows(args.out, rows())
    for failure in failures:
        print(f"  skipped {failure}", file=sys.stderr)
    if runs == 0:
        raise TrajectoryFormatError(args.out, None, "no trajectory was read; nothing to write")
    by_family = ", ".join(f"{family} {n}" for family, n in sorted(families.items()))
    print(f"wrote {count} rows of {runs} runs to {args.out} ({by_family}); {len(failures)} file(s) skipped")
    return 0

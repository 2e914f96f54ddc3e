"""`tandem judge import`: trajectory files of real agents -> judge rows (`judge.replay`)."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from judge import arguments
from judge.importers import TrajectoryFormatError, family_of, read_runs
from judge.importers.outcomes import read_outcomes
from judge.progress import progress
from judge.replay import replay
from judge.rows import write_rows

# What a folder is searched for (files named on the command line are read whatever their name).
TEXT_FIELDS = ("task", "command", "excerpt")
PATTERNS = ("*.traj.json", "*.traj", "*.jsonl", "*trajectory*.json", "*events*.json")
# Also searched in a folder (chat logs are named anything): a file of these that is no run is
# reported and passed over, not an error (a folder of runs often holds a results .json too).
LOOSE_PATTERNS = ("*.json",)


def add_parser(commands: Any) -> None:
    parser = commands.add_parser("import", help="read agent trajectory files into judge rows")
    parser.add_argument("paths", nargs="+", type=Path, help="trajectory files, or folders searched for them")
    parser.add_argument("--out", type=arguments.output, required=True, help="rows, JSON lines (.gz: compressed)")
    parser.add_argument("--outcomes", type=Path, action="append", default=[], help="run id -> resolved (JSON)")
    parser.add_argument("--keep-going", action="store_true", help="skip bad files (each one is reported)")
    parser.add_argument(
        "--family", help="the agent family of every run read (harness and major version, e.g. my-agent-1)"
    )
    parser.add_argument(
        "--run-prefix",
        default="",
        help="put before every run id (several runs of one task set: one submission per model); "
        "outcomes are joined by the id before it",
    )
    parser.add_argument(
        "--no-text", action="store_true", help="leave out task, command and excerpt (small rows to check in)"
    )


def trajectory_files(paths: list[Path]) -> Iterator[tuple[Path, bool]]:
    """Each file to read, and whether it was found only by a loose pattern (a `.json` in a folder)."""
    for path in paths:
        if path.is_dir():
            found = {file for pattern in PATTERNS for file in path.rglob(pattern) if file.is_file()}
            loose = {file for pattern in LOOSE_PATTERNS for file in path.rglob(pattern) if file.is_file()} - found
            yield from sorted([(file, False) for file in found] + [(file, True) for file in loose])
        else:
            yield path, False


def unread_files(paths: list[Path]) -> list[Path]:
    """The files in the folders of `paths` that no pattern names (a `.txt` log, a `.md`): not
    read, and said so (hidden files and folders left out)."""
    named = {file for file, _ in trajectory_files([path for path in paths if path.is_dir()])}
    return sorted(
        file
        for path in paths
        if path.is_dir()
        for file in path.rglob("*")
        if file.is_file()
        and file not in named
        and not any(part.startswith(".") for part in file.relative_to(path).parts)
    )


def run_import(args: argparse.Namespace) -> int:
    outcomes: dict[str, bool] = {}
    for file in args.outcomes:
        outcomes.update(read_outcomes(file))
    families: Counter[str] = Counter()
    failures: list[str] = []
    passed_over: list[str] = []
    left_out: list[str] = []  # runs with no step to read, in files of several runs
    runs = 0

    def rows() -> Iterator[dict[str, Any]]:
        nonlocal runs
        files = list(trajectory_files(args.paths))
        for file, loose in progress(files, "importing trajectories"):
            try:
                read = read_runs(file, left_out)
            except TrajectoryFormatError as exc:
                if loose:
                    passed_over.append(str(exc))
                    continue
                if not args.keep_going:
                    raise
                failures.append(str(exc))
                continue
            for run in read:
                key = str(run.meta.get("instance_id") or run.trajectory_id)  # the task, where the run id says more
                if run.outcome is None and key in outcomes:
                    run.outcome = {"success": outcomes[key]}
                if args.family:
                    run.meta["family"] = args.family
                if args.run_prefix:
                    run.trajectory_id = f"{args.run_prefix}{run.trajectory_id}"
                runs += 1
                for row in replay(run):
                    families[family_of(run)] += 1
                    if args.no_text:
                        for key in TEXT_FIELDS:
                            row.pop(key, None)
                    yield row

    def said() -> None:
        for failure in failures:
            print(f"  skipped {failure}", file=sys.stderr)
        for note in passed_over:
            print(f"  passed over {note}", file=sys.stderr)
        for note in left_out:
            print(f"  {note}", file=sys.stderr)
        unread = unread_files(args.paths)
        if unread:
            kinds = ", ".join(sorted({file.suffix or file.name for file in unread})[:6])
            print(
                f"  not read: {len(unread)} file(s) whose names are not a trajectory's ({kinds}); "
                "name them on the command line to read them",
                file=sys.stderr,
            )

    def every_row() -> Iterator[dict[str, Any]]:
        yield from rows()
        said()
        if runs == 0:
            # Raised while the rows are written, so that no (empty) output file is left behind.
            reasons = failures + passed_over + left_out
            detail = ("; " + "; ".join(reasons[:5])) if reasons else "; no file matched in the folders given"
            raise TrajectoryFormatError(args.out, None, "no trajectory was read; nothing to write" + detail)

    count = write_rows(args.out, every_row())
    by_family = ", ".join(f"{family} {n}" for family, n in sorted(families.items()))
    empty = f", {len(left_out)} run(s) with no step left out" if left_out else ""
    print(f"wrote {count} rows of {runs} runs to {args.out} ({by_family}); {len(failures)} file(s) skipped{empty}")
    return 0

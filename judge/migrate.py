"""`python -m judge.migrate OLD NEW`: rows of feature version 3 brought to version 4 without their
runs: version 4 is version 3 with the run's own record appended (judge/record.py), and every
value of the record comes from fields the rows already hold (each step's `action` and
`action_failed`, in step order per run), so the result is what `tandem judge import` gives for
the same runs. Rows must come run by run, each run's steps in order (as an import writes them).
"""

from __future__ import annotations

import gzip
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from judge.actions import ActionType
from judge.features import FEATURE_VERSION, N_FEATURES
from judge.record import LaggedRecord
from judge.replay import DECIMALS
from judge.rows import N_DRAFT, JudgeTrainingError, write_rows

FROM_VERSION = 3


def migrate(rows: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    run: tuple[object, object] | None = None
    record = LaggedRecord()
    for number, row in enumerate(rows, 1):
        if row.get("feature_version") != FROM_VERSION:
            raise JudgeTrainingError(f"row {number}: feature_version {row.get('feature_version')}, expected 3")
        key = (row.get("family"), row["trajectory_id"])
        if key != run:
            if row["step"] != 1:
                raise JudgeTrainingError(f"row {number}: run {key} starts at step {row['step']}: rows out of order")
            run, record, last = key, LaggedRecord(), 0
        if row["step"] != last + 1:
            raise JudgeTrainingError(f"row {number}: step {row['step']} after step {last} of run {key}")
        last = row["step"]
        action = ActionType(row["action"])
        state = record.record.state_values()
        row = dict(row, feature_version=FEATURE_VERSION)
        row["features"] = [*row["features"], *_rounded(state)]
        if row.get("draft_features") is not None:
            # The draft a row carries is the action the run took: its type is the row's `action`.
            drafted = record.record.type_values(action)
            row["draft_features"] = [*row["draft_features"], *_rounded(drafted)]
        failed = row.get("action_failed")
        record.labelled(action, None if failed is None else bool(failed))
        if len(row["features"]) != N_FEATURES or (
            row.get("draft_features") is not None and len(row["draft_features"]) != N_DRAFT
        ):
            raise JudgeTrainingError(f"row {number}: not a version-3 vector")
        yield row


def _rounded(values: list[float]) -> list[float]:
    # As an import writes a vector's values: float32 (the features' type), then rounded.
    return [round(float(v), DECIMALS) for v in np.asarray(values, dtype=np.float32)]


def _read(path: Path) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb") as handle:
        for line in handle:
            if line.strip():
                yield orjson.loads(line)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m judge.migrate OLD.jsonl[.gz] NEW.jsonl[.gz]", file=sys.stderr)
        return 2
    rows = list(migrate(_read(Path(argv[0]))))  # read whole: OLD and NEW may be one file
    print(f"{write_rows(Path(argv[1]), rows)} rows at feature version {FEATURE_VERSION}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

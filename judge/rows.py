"""Training data: the `tandem.judge-row/1` JSON lines a judge is trained, calibrated and evaluated
on, one line per step (the schema is documented in judge/README.md)."""

from __future__ import annotations

import gzip
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import numpy.typing as npt
import orjson

from judge.draft import DRAFT_FEATURE_NAMES
from judge.features import FEATURE_VERSION, N_FEATURES, STATE_VERSIONS
from judge.progress import Progress
from judge.written import replaced_on_success

ROW_SCHEMA = "tandem.judge-row/1"
N_DRAFT = len(DRAFT_FEATURE_NAMES)
REQUIRED = ("trajectory_id", "step", "feature_version", "features", "target")


class JudgeTrainingError(Exception):
    """Training data or a training request that cannot give a sound model; says why."""


def validate(row: object, where: str) -> dict[str, Any]:
    if not isinstance(row, dict):
        raise JudgeTrainingError(f"{where}: a row must be a JSON object")
    missing = [key for key in REQUIRED if key not in row]
    if missing:
        raise JudgeTrainingError(f"{where}: missing field(s) {', '.join(missing)}")
    if row.get("schema", ROW_SCHEMA) != ROW_SCHEMA:
        raise JudgeTrainingError(f"{where}: schema {row.get('schema')!r}, expected {ROW_SCHEMA!r}")
    # A row without draft features of a version whose state features are this one's is as good.
    same_state = row.get("draft_features") is None and row["feature_version"] in STATE_VERSIONS
    if row["feature_version"] != FEATURE_VERSION and not same_state:
        raise JudgeTrainingError(
            f"{where}: feature_version {row['feature_version']}, this judge computes version {FEATURE_VERSION}; "
            "regenerate the rows with the current features"
        )
    features = row["features"]
    if not isinstance(features, list) or len(features) != N_FEATURES or not _numbers(features):
        size = len(features) if isinstance(features, list) else type(features).__name__
        raise JudgeTrainingError(f"{where}: features must be a list of {N_FEATURES} numbers, got {size}")
    draft = row.get("draft_features")
    if draft is not None and (not isinstance(draft, list) or len(draft) != N_DRAFT or not _numbers(draft)):
        raise JudgeTrainingError(f"{where}: draft_features must be a list of {N_DRAFT} numbers or null")
    if row["target"] not in ("edge", "cloud"):
        raise JudgeTrainingError(f"{where}: target must be 'edge' or 'cloud', got {row['target']!r}")
    # (Read by the split, the share's replay and the reports: a wrong type failed there, with
    # no file or line named.)
    if not isinstance(row["trajectory_id"], str) or not row["trajectory_id"]:
        raise JudgeTrainingError(f"{where}: trajectory_id must be a non-empty string, got {row['trajectory_id']!r}")
    if type(row["step"]) is not int or row["step"] < 0:
        raise JudgeTrainingError(f"{where}: step must be a whole number from 0, got {row['step']!r}")
    if row.get("family") is not None and not isinstance(row["family"], str):
        raise JudgeTrainingError(f"{where}: family must be a string or absent, got {row['family']!r}")
    return row


def _numbers(values: list[Any]) -> bool:
    return all(type(value) is float or type(value) is int for value in values)


def load_rows(path: Path, *, show_progress: bool = True) -> list[dict[str, Any]]:
    """Every row of a JSON-lines file, validated; `JudgeTrainingError` names the first bad line."""
    try:
        size = path.stat().st_size
        handle: IO[bytes] = gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb")  # type: ignore[assignment]  # noqa: SIM115
    except OSError as exc:
        raise JudgeTrainingError(f"{path}: cannot read the training data ({exc.strerror})") from exc
    bar = Progress(f"reading {path.name}", size, enabled=show_progress and size > 8 << 20)
    with handle:
        try:
            rows = _read(path, handle, bar)
        except (gzip.BadGzipFile, EOFError) as exc:
            raise JudgeTrainingError(f"{path}: not a whole gzip file ({exc})") from exc
    bar.close()
    if not rows:
        raise JudgeTrainingError(f"{path}: no rows")
    return rows


def _read(path: Path, handle: IO[bytes], bar: Progress) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(handle, 1):
        bar.advance(len(line))
        if not line.strip():
            continue
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise JudgeTrainingError(f"{path}:{number}: not valid JSON ({exc})") from exc
        rows.append(validate(row, f"{path}:{number}"))
    return rows


def write_rows(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    """Write the rows as JSON lines (.gz: compressed); the file appears only once every row is
    written, so an error or Ctrl-C while `rows` is read leaves what was at `path` as it was."""
    count = 0
    with replaced_on_success(path) as stream:
        # mtime 0: a gzip of the same rows is the same bytes (reproducible, diffable in review);
        # the header names `path`, as it would were the file written in place.
        opened = gzip.GzipFile(str(path), "wb", mtime=0, fileobj=stream) if path.suffix == ".gz" else stream
        with opened as handle:
            for row in rows:
                handle.write(orjson.dumps(row) + b"\n")
                count += 1
    return count


def matrix(rows: list[dict[str, Any]], sees: str = "state") -> npt.NDArray[np.float32]:
    """The rows' feature vectors; with `sees="draft"`, each followed by its `draft_features`."""
    state = np.asarray([row["features"] for row in rows], dtype=np.float32).reshape(-1, N_FEATURES)
    if sees == "state":
        return state
    missing = sum(row.get("draft_features") is None for row in rows)
    if missing:
        raise JudgeTrainingError(f"{missing} of {len(rows)} rows have no draft_features: a draft judge needs them")
    draft = np.asarray([row["draft_features"] for row in rows], dtype=np.float32).reshape(-1, N_DRAFT)
    return np.concatenate((state, draft), axis=1)


def rank(trajectory_id: str) -> float:
    """A trajectory's stable place in [0, 1): a hash, so that every step of a trajectory lands on
    the same side of a split (a split by row would leak a run into both)."""
    digest = hashlib.blake2b(trajectory_id.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def held_out(trajectory_id: str, fraction: float) -> bool:
    """Whether a trajectory belongs to the held-out split (`rank` under `fraction`)."""
    return rank(trajectory_id) < fraction


@dataclass(frozen=True)
class Split:
    train: list[int]
    test: list[int]


def split_by_trajectory(rows: list[dict[str, Any]], fraction: float) -> Split:
    train: list[int] = []
    test: list[int] = []
    for index, row in enumerate(rows):
        # A row marked `learn` (retrain's recent traffic, compared by cross-fitting instead) is
        # always trained on: held out by the hash, a fifth of what a family's runs teach is lost.
        out = not row.get("learn") and held_out(str(row["trajectory_id"]), fraction)
        (test if out else train).append(index)
    if not train or not test:
        trajectories = len({row["trajectory_id"] for row in rows})
        raise JudgeTrainingError(
            f"cannot hold out {fraction:.0%} of {trajectories} trajectories and keep both splits non-empty; "
            "add trajectories"
        )
    return Split(train, test)

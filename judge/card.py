"""The model card: a JSON file beside each `judge.onnx` (`judge.card.json`) that ties the model to
its feature version and says how it was made, with which threshold, and how well it did.

Only `feature_version`, `feature_names` and `threshold` are needed to serve; the rest is for the
people who decide whether to trust the model.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

CARD_SCHEMA = "tandem.judge-card/1"
CARD_SUFFIX = ".card.json"


class JudgeModelError(Exception):
    """A judge model or its card cannot be used; the message names the file and the problem."""


def card_path(model_path: Path) -> Path:
    """`judge.onnx` -> `judge.card.json`, in the same folder."""
    return model_path.with_name(model_path.stem + CARD_SUFFIX)


@dataclass
class ModelCard:
    feature_version: int
    feature_names: list[str]
    threshold: float
    target_cloud_share: float | None = None
    model: dict[str, Any] = field(default_factory=dict)  # kind, parameters, ONNX input/output
    labels: str = ""  # which label source trained it
    training_data: dict[str, Any] = field(default_factory=dict)
    evaluation: dict[str, Any] = field(default_factory=dict)
    made_by: str = ""  # the command that rebuilds it
    versions: dict[str, str] = field(default_factory=dict)
    sees: str = "state"  # "state": features of the state; "draft": the state and the edge's draft

    def as_dict(self) -> dict[str, Any]:
        return {
            "schema": CARD_SCHEMA,
            "feature_version": self.feature_version,
            "sees": self.sees,
            "threshold": self.threshold,
            "target_cloud_share": self.target_cloud_share,
            "labels": self.labels,
            "made_by": self.made_by,
            "model": self.model,
            "training_data": self.training_data,
            "evaluation": self.evaluation,
            "versions": self.versions,
            "feature_names": self.feature_names,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: Path) -> ModelCard:
        missing = [key for key in ("feature_version", "feature_names", "threshold") if key not in data]
        if missing:
            raise JudgeModelError(f"{source}: the model card lacks {', '.join(missing)}")
        names = data["feature_names"]
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            raise JudgeModelError(f"{source}: feature_names must be a list of strings")
        try:
            version = int(data["feature_version"])
            threshold = float(data["threshold"])
            share = data.get("target_cloud_share")
            share = None if share is None else float(share)
        except (TypeError, ValueError) as exc:
            raise JudgeModelError(f"{source}: a model card field has the wrong type ({exc})") from exc
        return cls(
            feature_version=version,
            feature_names=names,
            threshold=threshold,
            target_cloud_share=share,
            model=dict(data.get("model") or {}),
            labels=str(data.get("labels") or ""),
            training_data=dict(data.get("training_data") or {}),
            evaluation=dict(data.get("evaluation") or {}),
            made_by=str(data.get("made_by") or ""),
            versions={str(k): str(v) for k, v in (data.get("versions") or {}).items()},
            sees=str(data.get("sees") or "state"),
        )


def read_card(path: Path) -> ModelCard:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise JudgeModelError(f"{path}: model card not found (it must sit beside the .onnx file)") from None
    except OSError as exc:
        raise JudgeModelError(f"{path}: cannot read the model card ({exc.strerror})") from exc
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise JudgeModelError(f"{path}: the model card is not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise JudgeModelError(f"{path}: the model card must be a JSON object")
    return ModelCard.from_dict(data, path)


def atomic_write(path: Path, data: bytes) -> None:
    """Write beside the file, then rename over it: a reloading gateway never sees half a file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    except OSError as exc:
        # Named by the file asked for, not by a folder above it or the temporary file.
        raise OSError(exc.errno, exc.strerror, str(path)) from exc
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.chmod(temporary, 0o644)  # mkstemp makes it private; a gateway under another user must read it
        os.replace(temporary, path)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror, str(path)) from exc
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_card(path: Path, card: ModelCard) -> None:
    # Indented and key-ordered as built, so that a rebuild diffs cleanly against the shipped card.
    atomic_write(path, orjson.dumps(card.as_dict(), option=orjson.OPT_INDENT_2) + b"\n")

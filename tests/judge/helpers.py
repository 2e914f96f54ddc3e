"""Synthetic judge rows and a copy of the shipped model, for tests that need no simulation."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np

from judge.card import card_path
from judge.features import FEATURE_VERSION, N_FEATURES, feature_index
from judge.model import DEFAULT_MODEL
from judge.rows import ROW_SCHEMA


def synthetic_rows(trajectories: int = 120, steps: int = 8, seed: int = 0) -> list[dict[str, Any]]:
    """Rows whose `edge_wrong` depends on two features, with noise: something learnable."""
    rng = np.random.default_rng(seed)
    error, edit = feature_index("err_any"), feature_index("act1_read")
    rows = []
    for t in range(trajectories):
        success = bool(rng.random() < 0.6)
        for step in range(1, steps + 1):
            features = (rng.random(N_FEATURES) < 0.05).astype(np.float32)
            features[error], features[edit] = rng.random() < 0.3, rng.random() < 0.3
            risk = 0.05 + 0.6 * features[error] + 0.3 * features[edit]
            rows.append(
                {
                    "schema": ROW_SCHEMA,
                    "trajectory_id": f"t{t}",
                    "step": step,
                    "feature_version": FEATURE_VERSION,
                    "features": features.tolist(),
                    "target": "cloud" if rng.random() < 0.4 else "edge",
                    "edge_wrong": int(rng.random() < risk),
                    "teacher_label": int(rng.random() < risk),
                    "outcome": {"success": success},
                    "action": ["read", "edit", "test"][step % 3],
                }
            )
    return rows


def copy_shipped_model(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "judge.onnx"
    shutil.copyfile(DEFAULT_MODEL, target)
    shutil.copyfile(card_path(DEFAULT_MODEL), card_path(target))
    return target

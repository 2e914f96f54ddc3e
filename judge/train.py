"""Training: rows + a label source -> a scikit-learn model -> ONNX + model card.

Two model kinds: `logreg` (standardised logistic regression, the cheapest and easiest to read)
and `gbdt` (scikit-learn's gradient-boosted trees, which find interactions such as "the last
action was a read and the task is a fix"). HistGradientBoosting is not used: skl2onnx cannot
convert it. The ONNX export is checked against the Python model on every row before anything
is written; the evaluation figures come from trajectories held out of training.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from judge.calibrate import threshold_for_share
from judge.card import ModelCard, atomic_write, card_path, write_card
from judge.draft import as_served
from judge.features import FEATURE_VERSION
from judge.labels import Labels, make_labels
from judge.metrics import report
from judge.model import open_session
from judge.modes import DEPTH, RATE, TREES, blinded, ignored_columns, names_for, tree_params
from judge.rows import JudgeTrainingError, matrix, split_by_trajectory

ModelKind = Literal["logreg", "gbdt"]
PARITY_TOLERANCE = 1e-4  # max |ONNX score - Python score| accepted at export


@dataclass
class TrainConfig:
    model: ModelKind = "gbdt"
    labels: str = "agreement"
    cloud_share: float = 0.4
    held_out_fraction: float = 0.2
    seed: int = 0
    gbdt: dict[str, Any] = field(default_factory=lambda: tree_params(TREES, DEPTH, RATE))
    logreg_c: float = 1.0
    made_by: str = ""  # the command that rebuilds the model, for the card
    data_description: str = ""  # where the rows came from, for the card
    sees: str = "state"  # "draft": the state and the step's own action (`draft_features`)
    sources: Any = None  # the data's sources, licences and counts (`<data>.sources.json`), for the card
    # Features the model is not given (held at 0 while it is fitted: it never reads them; the
    # served vector keeps them), e.g. the draft's shape, whose meaning differs between harnesses.
    ignore: tuple[str, ...] = ()
    show_progress: bool = False  # a line on stderr as each stage starts (the CLI: fitting takes seconds)


def _stage(config: TrainConfig, started: float, text: str) -> None:
    if config.show_progress:
        print(f"train [{time.monotonic() - started:5.1f}s] {text}", file=sys.stderr, flush=True)


def _estimator(config: TrainConfig) -> Any:
    # Imported here: serving needs only onnxruntime, training brings scikit-learn.
    if config.model == "gbdt":
        from sklearn.ensemble import GradientBoostingClassifier  # type: ignore[import-untyped]

        return GradientBoostingClassifier(random_state=config.seed, **config.gbdt)
    if config.model == "logreg":
        from sklearn.linear_model import LogisticRegression  # type: ignore[import-untyped]
        from sklearn.pipeline import make_pipeline  # type: ignore[import-untyped]
        from sklearn.preprocessing import StandardScaler  # type: ignore[import-untyped]

        return make_pipeline(StandardScaler(), LogisticRegression(C=config.logreg_c, max_iter=5000))
    raise JudgeTrainingError(f"unknown model kind {config.model!r}; one of logreg, gbdt")


def _fit(estimator: Any, x: npt.NDArray[np.float32], y: npt.NDArray[np.int64], weight: Any) -> None:
    if hasattr(estimator, "steps"):
        estimator.fit(x, y, **{f"{estimator.steps[-1][0]}__sample_weight": weight})
    else:
        estimator.fit(x, y, sample_weight=weight)


def fit_estimator(config: TrainConfig, x: npt.NDArray[np.float32], y: npt.NDArray[np.int64], weight: Any) -> Any:
    """A fitted classifier of `config`'s kind (no export, no card): for reports that fit many."""
    estimator = _estimator(config)
    _fit(estimator, x, y, weight)
    return estimator


def export_onnx(estimator: Any, width: int) -> bytes:
    from skl2onnx import to_onnx  # type: ignore[import-untyped]

    final = estimator.steps[-1][1] if hasattr(estimator, "steps") else estimator
    sample = np.zeros((1, width), dtype=np.float32)
    # zipmap off: the probabilities come out as a plain float tensor, cheap to read per step.
    onnx_model = to_onnx(estimator, sample, options={type(final): {"zipmap": False}})
    onnx_model.doc_string = f"tandem judge, feature version {FEATURE_VERSION}"
    # skl2onnx lists the opset imports in set order, which varies between runs: sort them, so
    # that `make judge-model` rebuilds the same bytes.
    imports = sorted((entry.domain, entry.version) for entry in onnx_model.opset_import)
    del onnx_model.opset_import[:]
    for domain, version in imports:
        entry = onnx_model.opset_import.add()
        entry.domain, entry.version = domain, version
    return bytes(onnx_model.SerializeToString())


def check_parity(estimator: Any, model_bytes: bytes, x: npt.NDArray[np.float32]) -> float:
    """Max |ONNX - scikit-learn| probability over `x`; raises above `PARITY_TOLERANCE`."""
    session = open_session(model_bytes, Path("<exported model>"))
    onnx_scores = session.run(["probabilities"], {session.get_inputs()[0].name: x})[0][:, 1]
    python_scores = estimator.predict_proba(x)[:, 1]
    diff = float(np.max(np.abs(onnx_scores.astype(np.float64) - python_scores)))
    if diff > PARITY_TOLERANCE:
        raise JudgeTrainingError(f"the ONNX export disagrees with the Python model by {diff:.2e} (> 1e-4)")
    return diff


def _versions() -> dict[str, str]:
    versions = {}
    for package in ("scikit-learn", "skl2onnx", "onnx", "onnxruntime", "numpy"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "absent"
    return versions


def _summary(rows: list[dict[str, Any]], labels: Labels, train: list[int], test: list[int]) -> dict[str, Any]:
    # `train` and `test` index the labelled rows (`labels.rows`), not `rows`.
    def trajectories(indices: list[int]) -> int:
        return len({rows[i]["trajectory_id"] for i in indices})

    return {
        "rows": len(rows),
        "labelled_rows": len(labels.rows),
        "trajectories": trajectories(labels.rows),
        "positive_rate": round(float(labels.y.mean()), 4),
        "train_rows": len(train),
        "train_trajectories": trajectories([labels.rows[i] for i in train]),
        "held_out_rows": len(test),
        "held_out_trajectories": trajectories([labels.rows[i] for i in test]),
        "cloud_taken_share": round(sum(rows[i]["target"] == "cloud" for i in labels.rows) / len(labels.rows), 4),
        "families": dict(sorted(Counter(str(rows[i].get("family", "unknown")) for i in labels.rows).items())),
    }


@dataclass(frozen=True)
class TrainResult:
    card: ModelCard
    model_bytes: bytes
    estimator: Any
    parity_max_abs_diff: float


def train(rows: list[dict[str, Any]], config: TrainConfig, out: Path | None = None) -> TrainResult:
    """Fit, export, check, calibrate, evaluate; write `out` and its card when given."""
    if not 0.0 < config.cloud_share < 1.0:
        raise JudgeTrainingError(f"cloud share must be between 0 and 1, got {config.cloud_share}")
    started = time.monotonic()
    labels = make_labels(rows, config.labels)
    split = split_by_trajectory([rows[i] for i in labels.rows], config.held_out_fraction)
    _stage(config, started, f"{len(labels.rows):,} rows with {config.labels} labels, {len(split.train):,} to train on")
    names = names_for(config.sees)
    x_all = matrix([rows[i] for i in labels.rows], config.sees)
    try:
        ignored = ignored_columns(config.sees, config.ignore)
    except ValueError as exc:
        raise JudgeTrainingError(str(exc)) from None
    # Fitted blind to the ignored features; exported, checked and evaluated on the real vectors.
    x_train = blinded(x_all[split.train], ignored)
    y_train, y_test = labels.y[split.train], labels.y[split.test]
    if y_train.min() == y_train.max():
        raise JudgeTrainingError("the training split has only one label value; add trajectories")
    estimator = _estimator(config)
    _stage(config, started, f"fitting {config.model} ...")
    # A row's own `weight` (retrain: recent traffic counts for more than its row count) scales
    # its label's.
    weight = labels.weight * np.asarray([float(rows[i].get("weight", 1.0)) for i in labels.rows])
    _fit(estimator, x_train, y_train, weight[split.train])
    _stage(config, started, "exporting to ONNX and checking it scores as the fitted model does ...")
    model_bytes = export_onnx(estimator, len(names))
    parity = check_parity(estimator, model_bytes, x_all)
    _stage(config, started, "calibrating the threshold and evaluating on the held-out trajectories ...")
    session = open_session(model_bytes, Path("<exported model>"))
    raw = session.run(["probabilities"], {session.get_inputs()[0].name: x_all})[0][:, 1].astype(np.float64)
    scores = as_served(raw, x_all, config.sees)  # a draft judge's with its floors (judge.draft)
    # The threshold comes from the training split only, so that the held-out share is honest.
    threshold = threshold_for_share(scores[split.train], config.cloud_share)
    evaluation = report(y_test, scores[split.test], threshold)
    evaluation["split"] = f"by trajectory, {config.held_out_fraction:.0%} held out (stable hash of trajectory_id)"
    evaluation["train_auc"] = report(y_train, scores[split.train], threshold)["auc"]
    evaluation["onnx_python_max_abs_diff"] = float(f"{parity:.3g}")
    params = dict(config.gbdt) if config.model == "gbdt" else {"C": config.logreg_c, "scaler": "standard"}
    card = ModelCard(
        feature_version=FEATURE_VERSION,
        feature_names=list(names),
        sees=config.sees,
        threshold=threshold,
        target_cloud_share=config.cloud_share,
        model={
            "kind": config.model,
            "params": {**params, "random_state": config.seed},
            "onnx_input": "X",
            "onnx_output": "probabilities",
            "bytes": len(model_bytes),
            **({"ignored_features": list(config.ignore)} if config.ignore else {}),
        },
        labels=config.labels,
        training_data={
            "description": config.data_description,
            **_summary(rows, labels, split.train, split.test),
            **({"sources": config.sources} if config.sources is not None else {}),
        },
        evaluation=evaluation,
        made_by=config.made_by,
        versions=_versions(),
    )
    if out is not None:
        atomic_write(out, model_bytes)
        write_card(card_path(out), card)
    return TrainResult(card, model_bytes, estimator, parity)

"""The judge's trees walked for one step's score: the same probabilities as onnxruntime's
session, used only where they were checked to be, and onnxruntime for anything else."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

from judge.card import card_path
from judge.features import N_FEATURES
from judge.model import DEFAULT_MODEL, PROBE_ROWS, JudgeModel, _checked_trees
from judge.onnx_trees import read_trees
from judge.train import export_onnx
from router.policies.judge import DEFAULT_DRAFT_MODEL
from tests.judge.helpers import copy_shipped_model


def _attributes(path: Path) -> dict[str, object]:
    node = onnx.load(str(path)).graph.node[0]
    return {attribute.name: helper.get_attribute_value(attribute) for attribute in node.attribute}


@pytest.mark.parametrize("path", [DEFAULT_MODEL, DEFAULT_DRAFT_MODEL], ids=["state", "draft"])
def test_shipped_models_are_walked_and_agree_with_the_session(path: Path) -> None:
    model = JudgeModel.load(path)
    assert model.trees is not None
    width = len(model.card.feature_names)
    # What the reader took from the file is what the onnx package reads there.
    expected = _attributes(path)
    assert len(model.trees.roots) == len(set(expected["nodes_treeids"]))  # type: ignore[arg-type]
    assert model.trees.thresholds == pytest.approx(expected["nodes_values"], abs=0)
    assert model.trees.base == pytest.approx(expected["base_values"][0], abs=0)  # type: ignore[index]
    rng = np.random.default_rng(7)
    rows = (rng.normal(0.0, 2.0, size=(2000, width)) * (rng.random((2000, width)) < 0.5)).astype(np.float32)
    sessions = model.session.run(model.output_names, {model.input_name: rows})[0][:, 1]
    walked = np.array([model.trees.probability(row) for row in rows.tolist()])
    assert np.max(np.abs(walked - sessions)) <= 1e-6
    # `score` walks them (the draft's floors aside, the same as the batch's session scores).
    batch = model.score_batch(rows[:50])
    assert [model.score(row) for row in rows[:50]] == pytest.approx(batch.tolist(), abs=1e-6)
    # A float64 row is rounded to float32 first, as the session reads it.
    assert model.score(rows[0].astype(np.float64)) == model.score(rows[0])


def test_the_environment_keeps_every_score_on_the_session(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TANDEM_JUDGE_RUNTIME", "onnxruntime")
    assert JudgeModel.load().trees is None


def test_a_model_of_another_kind_is_scored_by_the_session() -> None:
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, N_FEATURES)).astype(np.float32)
    y = (x[:, 0] + 0.3 * rng.normal(size=200) > 0).astype(np.int64)
    model_bytes = export_onnx(LogisticRegression().fit(x, y), N_FEATURES)
    assert read_trees(model_bytes, "probabilities") is None


def test_trained_trees_are_walked_as_the_session_scores_them() -> None:
    from sklearn.ensemble import GradientBoostingClassifier

    rng = np.random.default_rng(1)
    x = rng.normal(size=(400, N_FEATURES)).astype(np.float32)
    y = (x[:, 3] - x[:, 5] + 0.5 * rng.normal(size=400) > 0.2).astype(np.int64)
    estimator = GradientBoostingClassifier(n_estimators=30, max_depth=4, random_state=0).fit(x, y)
    model_bytes = export_onnx(estimator, N_FEATURES)
    trees = read_trees(model_bytes, "probabilities")
    assert trees is not None and len(trees.roots) == 30
    walked = np.array([trees.probability(row) for row in x.tolist()])
    assert np.max(np.abs(walked - estimator.predict_proba(x)[:, 1])) <= 1e-5


def _rewritten(tmp_path: Path, change: str) -> Path:
    """A copy of the shipped judge whose trees are changed in one way."""
    path = copy_shipped_model(tmp_path)
    model = onnx.load(str(path))
    node = model.graph.node[0]
    for attribute in node.attribute:
        if change == "post_transform" and attribute.name == "post_transform":
            attribute.s = b"NONE"
        if change == "mode" and attribute.name == "nodes_modes":
            attribute.strings[0] = b"BRANCH_LT"
    path.write_bytes(model.SerializeToString())
    return path


@pytest.mark.parametrize("change", ["post_transform", "mode"])
def test_trees_the_walk_does_not_handle_are_left_to_the_session(tmp_path: Path, change: str) -> None:
    path = _rewritten(tmp_path, change)
    assert read_trees(path.read_bytes(), "probabilities") is None
    model = JudgeModel.load(path)  # still served, by onnxruntime
    assert model.trees is None and card_path(path).exists()
    row = np.zeros(N_FEATURES, dtype=np.float32)
    assert model.score(row) == pytest.approx(float(model.session.run(model.output_names, {"X": row[None]})[0][0, 1]))


def test_trees_that_disagree_with_the_session_are_not_used() -> None:
    model = JudgeModel.load()
    # One leaf's weight off in the file the trees are read from, the session the shipped model's.
    checked = _checked_trees(model.session, _broken_leaf(), model.input_name, model.output_names[0], N_FEATURES)
    assert checked is None
    assert PROBE_ROWS >= 100


def _broken_leaf() -> bytes:
    model = onnx.load(str(DEFAULT_MODEL))
    for attribute in model.graph.node[0].attribute:
        if attribute.name == "class_weights":
            attribute.floats[1] += 0.5
    return bytes(model.SerializeToString())


@pytest.mark.parametrize(
    "data",
    [b"", b"\x08", b"\x3a\xff\xff\xff\xff\x0f", b"\x3a\x05\x0a\x03\x22\x01", b"not a model at all" * 3],
    ids=["empty", "truncated varint", "overlong field", "truncated node", "text"],
)
def test_bytes_that_are_not_a_model_give_no_trees(data: bytes) -> None:
    assert read_trees(data, "probabilities") is None


def test_a_cycle_in_a_tree_gives_no_trees() -> None:
    model = onnx.load(str(DEFAULT_MODEL))
    for attribute in model.graph.node[0].attribute:
        if attribute.name == "nodes_truenodeids":
            attribute.ints[1] = 0  # node 1's yes branch back to the root: a walk would loop
    assert read_trees(model.SerializeToString(), "probabilities") is None

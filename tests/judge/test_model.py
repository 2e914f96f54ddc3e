"""The ONNX runtime wrapper: loading, clear errors on bad files, reloading without a restart."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import orjson
import pytest

from judge.card import card_path, read_card, write_card
from judge.features import FEATURE_VERSION, N_FEATURES, STATE_VERSIONS, TrajectoryCounters, step_features
from judge.model import DEFAULT_MODEL, JudgeModel, JudgeModelError, ReloadingJudge
from judge.rows import N_DRAFT, ROW_SCHEMA, JudgeTrainingError, validate
from router.policies.judge import DEFAULT_DRAFT_MODEL
from tests.judge.helpers import copy_shipped_model


def test_shipped_model_loads_scores_and_says_how_it_was_made() -> None:
    model = JudgeModel.load()
    assert DEFAULT_MODEL.stat().st_size <= 1 << 20
    card = model.card
    assert card.feature_version == FEATURE_VERSION
    # Trained on real runs (not the demo's simulation), for "the step's action fails", with the
    # sources and their licences on the card; the figures are those of its held-out runs.
    assert card.labels == "failed" and "real agent runs" in card.training_data["description"]
    assert card.made_by.startswith("tandem judge train --data real-runs.jsonl.gz")
    sources = card.training_data["sources"]
    assert sources and all(source["licence"] and source["runs"] > 0 for source in sources)
    assert card.training_data["trajectories"] == sum(source["runs"] for source in sources)
    assert card.target_cloud_share == 0.4 and 0.0 < card.threshold < 1.0
    assert card.evaluation["auc"] >= 0.65
    assert 0.35 <= card.evaluation["cloud_share"] <= 0.45
    messages = [{"role": "user", "content": "Task x: fix it"}]
    score = model.score(step_features(messages, TrajectoryCounters(step=1)))
    assert 0.0 <= score <= 1.0
    batch = model.score_batch(np.zeros((3, N_FEATURES), dtype=np.float32))
    assert batch.shape == (3,) and np.allclose(batch, batch[0])


def test_missing_model_file(tmp_path: Path) -> None:
    path = copy_shipped_model(tmp_path)
    path.unlink()
    with pytest.raises(JudgeModelError, match=r"judge\.onnx: model file not found"):
        JudgeModel.load(path)


def test_missing_card(tmp_path: Path) -> None:
    path = copy_shipped_model(tmp_path)
    card_path(path).unlink()
    with pytest.raises(JudgeModelError, match=r"judge\.card\.json: model card not found"):
        JudgeModel.load(path)


def test_corrupt_model_file(tmp_path: Path) -> None:
    path = copy_shipped_model(tmp_path)
    path.write_bytes(b"\x08\x07this is not an onnx graph" * 10)
    with pytest.raises(JudgeModelError, match=r"judge\.onnx: not a usable ONNX model"):
        JudgeModel.load(path)


def test_corrupt_card(tmp_path: Path) -> None:
    path = copy_shipped_model(tmp_path)
    card_path(path).write_text("{ not json")
    with pytest.raises(JudgeModelError, match=r"judge\.card\.json: the model card is not valid JSON"):
        JudgeModel.load(path)
    card_path(path).write_text('{"threshold": 0.5}')
    with pytest.raises(JudgeModelError, match="lacks feature_version, feature_names"):
        JudgeModel.load(path)


def test_feature_version_mismatch(tmp_path: Path) -> None:
    path = copy_shipped_model(tmp_path)
    card = read_card(card_path(path))
    card.feature_version = FEATURE_VERSION + 1
    write_card(card_path(path), card)
    with pytest.raises(JudgeModelError, match=rf"trained on feature version {FEATURE_VERSION + 1}.*retrain"):
        JudgeModel.load(path)


def test_a_card_or_row_of_a_version_whose_state_features_differ_is_refused(tmp_path: Path) -> None:
    """Version 6 changed what the state's action values say of a tool no table names: a state
    model or row of version 5 is refused (STATE_VERSIONS lists the versions served as they are)."""
    assert STATE_VERSIONS == (FEATURE_VERSION,)
    path = copy_shipped_model(tmp_path)
    card = read_card(card_path(path))
    card.feature_version = 5
    write_card(card_path(path), card)
    with pytest.raises(JudgeModelError, match="trained on feature version 5"):
        JudgeModel.load(path)
    row = {
        "schema": ROW_SCHEMA,
        "trajectory_id": "t",
        "step": 1,
        "feature_version": 5,
        "features": [0.0] * N_FEATURES,
        "target": "cloud",
    }
    with pytest.raises(JudgeTrainingError, match="feature_version 5, this judge computes version"):
        validate(dict(row, draft_features=None), "row 1")
    with pytest.raises(JudgeTrainingError, match="feature_version 5"):
        validate(dict(row, draft_features=[0.0] * N_DRAFT), "row 1")
    assert validate(dict(row, feature_version=FEATURE_VERSION), "row 1")["feature_version"] == FEATURE_VERSION


def test_feature_names_mismatch(tmp_path: Path) -> None:
    path = copy_shipped_model(tmp_path)
    data = orjson.loads(card_path(path).read_bytes())
    data["feature_names"] = data["feature_names"][:-1]
    card_path(path).write_bytes(orjson.dumps(data))
    with pytest.raises(JudgeModelError, match="feature_names differ"):
        JudgeModel.load(path)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _touch_later(path: Path) -> None:
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def test_reload_keeps_the_old_model_on_a_bad_file_and_takes_a_good_one(tmp_path: Path) -> None:
    path = copy_shipped_model(tmp_path)
    clock = Clock()
    failures: list[JudgeModelError] = []
    judge = ReloadingJudge(path, check_interval_s=1.0, clock=clock, on_failure=failures.append)
    features = np.zeros(N_FEATURES, dtype=np.float32)
    before = judge.score(features)
    old_model = judge.model

    path.write_bytes(b"garbage")
    clock.now = 0.5
    assert not judge.maybe_reload()  # within the check interval: not even looked at
    clock.now = 2.0
    assert judge.score(features) == before  # the bad file was tried, the old model answered
    assert judge.model is old_model and judge.reload_failures == 1 and len(failures) == 1
    assert "not a usable ONNX model" in (judge.last_error or "")
    clock.now = 4.0
    assert not judge.maybe_reload() and judge.reload_failures == 1  # unchanged bad file: not retried

    copy_shipped_model(tmp_path)
    card = read_card(card_path(path))
    card.threshold = 0.77
    write_card(card_path(path), card)
    _touch_later(path)
    clock.now = 6.0
    assert judge.maybe_reload()
    assert judge.model is not old_model and judge.threshold == 0.77 and judge.reloads == 1
    assert judge.last_error is None


def test_a_bad_file_at_start_up_is_an_error(tmp_path: Path) -> None:
    path = copy_shipped_model(tmp_path)
    path.write_bytes(b"")
    with pytest.raises(JudgeModelError, match=r"judge\.onnx"):
        ReloadingJudge(path)


def test_shipped_draft_model_sees_the_draft_and_beats_the_state_model() -> None:
    from judge.draft import STATE_AND_DRAFT_NAMES

    state, draft = JudgeModel.load().card, JudgeModel.load(DEFAULT_DRAFT_MODEL).card
    assert draft.sees == "draft" and tuple(draft.feature_names) == STATE_AND_DRAFT_NAMES
    assert draft.evaluation["auc"] >= 0.75 and draft.evaluation["auc"] > state.evaluation["auc"] + 0.05
    assert 0.35 <= draft.evaluation["cloud_share"] <= 0.45
    assert DEFAULT_DRAFT_MODEL.stat().st_size <= 1 << 20


def test_a_card_whose_mode_does_not_match_its_features_is_refused(tmp_path: Path) -> None:
    path = copy_shipped_model(tmp_path)
    card = read_card(card_path(path))
    card.sees = "draft"  # but the features are the state's only
    write_card(card_path(path), card)
    with pytest.raises(JudgeModelError, match=r"feature_names differ .* for sees: draft"):
        JudgeModel.load(path)
    card.sees = "telepathy"
    write_card(card_path(path), card)
    with pytest.raises(JudgeModelError, match=r"sees is 'telepathy'"):
        JudgeModel.load(path)


def test_scores_through_the_bound_buffers_equal_the_sessions_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TANDEM_JUDGE_RUNTIME", "onnxruntime")  # every score on the session
    model = JudgeModel.load()
    assert model.bound is not None and model.trees is None
    rows = np.random.default_rng(3).normal(0.0, 3.0, size=(300, N_FEATURES)).astype(np.float32)
    feed = model.input_name
    for row in rows:
        unbound = float(model.session.run(model.output_names, {feed: row.reshape(1, -1)})[0][0, -1])
        assert model.score(row) == unbound
    # A float64 vector is cast as before; a row of another width is refused as before.
    assert model.score(rows[0].astype(np.float64)) == model.score(rows[0])
    with pytest.raises(Exception):  # noqa: B017 (onnxruntime's own exception type)
        model.score(np.zeros(N_FEATURES + 1, dtype=np.float32))


def test_another_thread_scores_while_the_bound_buffers_are_in_use(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TANDEM_JUDGE_RUNTIME", "onnxruntime")
    model = JudgeModel.load()
    assert model.bound is not None
    row = np.linspace(0.0, 1.0, N_FEATURES, dtype=np.float32)
    expected = model.score(row)
    with model.bound._lock:  # held, as by another thread mid-step: the unbound run answers
        assert model.bound.score(row) is None
        assert model.score(row) == expected
    assert model.score(row) == expected


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"features": ["x"] + [0.0] * (N_FEATURES - 1)}, "features must be a list of"),
        ({"features": [True] + [0.0] * (N_FEATURES - 1)}, "features must be a list of"),
        ({"draft_features": ["x"] * N_DRAFT}, "draft_features must be a list of"),
        ({"step": "one"}, "step must be a whole number"),
        ({"step": -1}, "step must be a whole number"),
        ({"trajectory_id": None}, "trajectory_id must be a non-empty string"),
        ({"family": [1]}, "family must be a string"),
    ],
)
def test_a_field_of_the_wrong_type_is_named_with_its_row(change: dict[str, object], words: str) -> None:
    """Read later by the split, the share's replay and the reports, a wrong type failed there
    ("could not convert string to float: 'x'") with no file or line named."""
    row = {
        "schema": ROW_SCHEMA,
        "trajectory_id": "t",
        "step": 1,
        "feature_version": FEATURE_VERSION,
        "features": [0.0] * N_FEATURES,
        "target": "cloud",
    }
    assert validate(dict(row), "rows.jsonl:7") == row
    with pytest.raises(JudgeTrainingError, match=f"rows.jsonl:7: {words}"):
        validate({**row, **change}, "rows.jsonl:7")

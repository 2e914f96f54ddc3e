"""The judge at serve time: one onnxruntime session, scored inline on the caller's thread.

A tiny model runs in a few microseconds, less than a thread hop costs, so the session gets one
intra-op and one inter-op thread with spinning off (an idle spinning pool would burn the CPU the
gateway needs) and `score` is a plain synchronous call, into buffers bound to the session once
(`_Bound`). A model that is one binary tree ensemble (the shipped judges) scores a step by
walking its trees (`judge.onnx_trees`), once they gave the session's probabilities at load on
rows that take every branch: in the gateway, right after a request's parse, that is ~5 µs
against the session's ~47 (`TANDEM_JUDGE_RUNTIME=onnxruntime` keeps every score on the session).
Batches are always scored by the session. `ReloadingJudge` picks up a new model
file without a restart and keeps the old model when the new one is bad.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnxruntime as ort  # type: ignore[import-untyped]

from judge.card import JudgeModelError, ModelCard, card_path, read_card
from judge.draft import as_served, floored
from judge.features import FEATURE_VERSION, STATE_VERSIONS
from judge.modes import SEES, names_for
from judge.onnx_trees import read_trees
from judge.trees import Trees

__all__ = ["JudgeModel", "JudgeModelError", "ReloadingJudge"]

log = logging.getLogger("judge.model")

DEFAULT_MODEL = Path(__file__).parent / "models" / "judge.onnx"


def session_options() -> Any:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # One row of a small tree ensemble: nothing for an arena or a planned memory pattern to
    # save, and without them a step touches a little less memory (a few µs when the request's
    # parse has just flushed the CPU caches; benchmarks/judge_latency).
    options.enable_cpu_mem_arena = False
    options.enable_mem_pattern = False
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    options.log_severity_level = 3  # warnings about unused initialisers are noise here
    return options


def open_session(model_bytes: bytes, source: Path) -> Any:
    try:
        return ort.InferenceSession(model_bytes, session_options(), providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own untyped exceptions for bad graphs
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise JudgeModelError(f"{source}: not a usable ONNX model ({first_line[:300]})") from exc


def _probability_output(session: Any, source: Path) -> str:
    outputs = session.get_outputs()
    for output in outputs:
        if output.name == "probabilities":
            return str(output.name)
    tensors = [o for o in outputs if str(o.type).startswith("tensor(float")]
    if not tensors:
        raise JudgeModelError(f"{source}: the ONNX model has no float probability output")
    return str(tensors[-1].name)


def _run_of(session: Any) -> Any:
    """The session's `run(output_names, feed, options)`: onnxruntime's compiled session's own,
    where it has one, rather than its Python wrapper's, which checks the feed's names and
    handles execution-provider fallbacks (CPU only here) at about half of a step's scoring
    time (~12 µs of 25 for the shipped judge); the wrapper's where it has not."""
    compiled = getattr(session, "_sess", None)
    run = getattr(compiled, "run", None)
    return run if callable(run) else session.run


class _Bound:
    """The session's input and probability output bound once to arrays of this object
    (onnxruntime's IOBinding): a step copies its features into the input array and runs, with no
    feed dict, no tensor made from a new array and no output array allocated. That is little
    work on a warm CPU (~9 µs a step either way), and less on one whose caches the request's
    parse has just flushed, where each object touched is a miss (benchmarks/judge_latency).

    One caller at a time: another thread that finds it in use scores the unbound way."""

    __slots__ = ("_binding", "_input", "_lock", "_output", "_session", "width")

    def __init__(self, session: Any, input_name: str, output_name: str, width: int, classes: int) -> None:
        self.width = width
        self._session = session
        self._input = np.zeros((1, width), dtype=np.float32)
        self._output = np.zeros((1, classes), dtype=np.float32)
        self._binding = session.io_binding()
        self._binding.bind_cpu_input(input_name, self._input)
        self._binding.bind_output(output_name, "cpu", 0, np.float32, [1, classes], self._output.ctypes.data)
        self._lock = threading.Lock()

    def score(self, row: npt.NDArray[np.float32]) -> float | None:
        """The probability of the last class for `row` (`width` values); None when another
        thread is scoring with these buffers."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            self._input[0] = row
            self._session.run_with_iobinding(self._binding)
            return float(self._output[0, -1])
        finally:
            self._lock.release()


def _bind(session: Any, input_name: str, output_name: str, width: int) -> _Bound | None:
    """Bound buffers for a model whose probability output is a float tensor of one row per
    input row, checked against the unbound run; None for any other (scored the unbound way)."""
    zeros = np.zeros((1, width), dtype=np.float32)
    try:
        expected = _run_of(session)([output_name], {input_name: zeros}, None)[0]
        if not isinstance(expected, np.ndarray) or expected.dtype != np.float32 or expected.shape[:1] != (1,):
            return None
        bound = _Bound(session, input_name, output_name, width, int(expected.reshape(1, -1).shape[1]))
        found = bound.score(zeros[0])
    except Exception:  # onnxruntime's own exception types for a model it cannot bind this way
        return None
    return bound if found == float(expected.reshape(1, -1)[0, -1]) else None


# Where the walked trees and the session may differ: float32 sums in another order (~1e-7).
TREES_TOLERANCE = 1e-6
PROBE_ROWS = 256


def _checked_trees(session: Any, model_bytes: bytes, input_name: str, output_name: str, width: int) -> Trees | None:
    """The model's trees where they give the session's probabilities (within `TREES_TOLERANCE`)
    on probe rows: each feature a split threshold, the next float above it, zero or NaN, at
    random, so that every branch is taken; else None."""
    if os.environ.get("TANDEM_JUDGE_RUNTIME", "") == "onnxruntime":
        return None
    trees = read_trees(model_bytes, output_name)
    if trees is None or trees.width > width:
        return None
    choices: list[list[float]] = [[0.0, float("nan")] for _ in range(width)]
    for feature, threshold in zip(trees.split, trees.thresholds, strict=True):
        if feature >= 0:
            above = float(np.nextafter(np.float32(threshold), np.float32(np.inf)))
            choices[feature] += (threshold, above)
    random = np.random.default_rng(0)
    rows = np.array(
        [[values[random.integers(len(values))] for values in choices] for _ in range(PROBE_ROWS)],
        dtype=np.float32,
    )
    try:
        expected = np.asarray(_run_of(session)([output_name], {input_name: rows}, None)[0], dtype=np.float64)
    except Exception:  # onnxruntime's own exception types
        return None
    if expected.shape != (PROBE_ROWS, 2):
        return None
    found = np.array([trees.probability(row) for row in rows.tolist()])
    return trees if bool(np.all(np.abs(found - expected[:, 1]) <= TREES_TOLERANCE)) else None


@dataclass(frozen=True)
class JudgeModel:
    """A loaded judge: the session, its card, and where they came from."""

    path: Path
    card: ModelCard
    session: Any
    input_name: str
    output_names: list[str]
    bound: _Bound | None = field(default=None, compare=False, repr=False)
    trees: Trees | None = field(default=None, compare=False, repr=False)

    @property
    def threshold(self) -> float:
        return self.card.threshold

    @classmethod
    def load(cls, path: str | os.PathLike[str] = DEFAULT_MODEL) -> JudgeModel:
        """Load `path` (`…/judge.onnx`) and its card (`…/judge.card.json`); `JudgeModelError` if
        either is missing, corrupt, or made for other features than this code computes."""
        model_path = Path(path)
        if not model_path.exists():  # before its card: the file named is the one to say is missing
            raise JudgeModelError(f"{model_path}: model file not found")
        card = read_card(card_path(model_path))
        if card.feature_version != FEATURE_VERSION and not (
            card.sees == "state" and card.feature_version in STATE_VERSIONS
        ):
            raise JudgeModelError(
                f"{model_path}: the model was trained on feature version {card.feature_version}, "
                f"this judge computes version {FEATURE_VERSION}; retrain it (tandem judge train)"
            )
        if card.sees not in SEES:
            raise JudgeModelError(f"{model_path}: the card's sees is {card.sees!r}; one of {', '.join(SEES)}")
        expected = names_for(card.sees)
        if tuple(card.feature_names) != expected:
            raise JudgeModelError(
                f"{model_path}: the card's feature_names differ from feature version {FEATURE_VERSION}'s "
                f"for sees: {card.sees} ({len(card.feature_names)} names, expected {len(expected)})"
            )
        try:
            model_bytes = model_path.read_bytes()
        except FileNotFoundError:
            raise JudgeModelError(f"{model_path}: model file not found") from None
        except OSError as exc:
            raise JudgeModelError(f"{model_path}: cannot read the model file ({exc.strerror})") from exc
        session = open_session(model_bytes, model_path)
        inputs = session.get_inputs()
        width = inputs[0].shape[-1] if inputs and inputs[0].shape else None
        if len(inputs) != 1 or (isinstance(width, int) and width != len(expected)):
            raise JudgeModelError(
                f"{model_path}: the ONNX model takes {len(inputs)} input(s) of width {width}, "
                f"expected one input of {len(expected)} features"
            )
        input_name, output_name = str(inputs[0].name), _probability_output(session, model_path)
        bound = _bind(session, input_name, output_name, len(expected))
        trees = _checked_trees(session, model_bytes, input_name, output_name, len(expected))
        model = cls(model_path, card, session, input_name, [output_name], bound, trees)
        model.score(np.zeros(len(expected), dtype=np.float32))  # fail now, not on the first step
        return model

    def score(self, features: npt.NDArray[np.float32]) -> float:
        """The probability that the step needs the cloud, in [0, 1] (a draft judge's raised to
        the floors of the draft's slips: `judge.draft.SLIP_FLOORS`)."""
        score = self._score(features)
        return floored(score, features.reshape(-1)) if self.card.sees == "draft" else score

    def _score(self, features: npt.NDArray[np.float32]) -> float:
        trees = self.trees
        if trees is not None and features.shape == (len(self.card.feature_names),):
            # float32 values, as the session reads them: a float64 row is rounded first.
            return trees.probability(features.astype(np.float32, copy=False).tolist())
        bound = self.bound
        if bound is not None and features.shape == (bound.width,):
            found = bound.score(features)
            if found is not None:
                return found
        row = features.reshape(1, -1)
        if row.dtype != np.float32:
            row = row.astype(np.float32)
        probabilities = _run_of(self.session)(self.output_names, {self.input_name: row}, None)[0]
        return float(probabilities[0, -1])

    def score_batch(self, features: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        """Scores of many rows at once (evaluation, calibration), as `score` gives each."""
        rows = np.ascontiguousarray(features, dtype=np.float32).reshape(-1, len(self.card.feature_names))
        probabilities = self.session.run(self.output_names, {self.input_name: rows})[0]
        scores = np.asarray(probabilities[:, -1], dtype=np.float64)
        return as_served(scores, rows, self.card.sees)


Signature = tuple[tuple[int, int] | None, tuple[int, int] | None]


def _signature(model_path: Path) -> Signature:
    def one(path: Path) -> tuple[int, int] | None:
        try:
            stat = path.stat()
        except OSError:
            return None
        return (stat.st_mtime_ns, stat.st_size)

    return one(model_path), one(card_path(model_path))


class ReloadingJudge:
    """A `JudgeModel` that reloads itself when its files change on disk.

    Checks the files' mtime and size at most every `check_interval_s`. A bad new file (missing,
    corrupt, other feature version) is logged and counted in `reload_failures`; the old model
    stays in service, and the next change of the files is tried again. With `sees`, a new model
    made for the other input (a draft judge dropped where a state judge is served, or the
    reverse) is such a bad file too: it loads, but it cannot score the rows its caller computes,
    so taking it would fail every step until the file was put right.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = DEFAULT_MODEL,
        *,
        check_interval_s: float = 1.0,
        on_failure: Callable[[JudgeModelError], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sees: str | None = None,
    ) -> None:
        self.path = Path(path)
        self.sees = sees  # the input the caller scores (None: any); checked on each reload
        self._seen = _signature(self.path)
        self.model = JudgeModel.load(self.path)  # a bad file at start-up is the caller's error
        self.check_interval_s = check_interval_s
        self.reloads = 0
        self.reload_failures = 0
        self.last_error: str | None = None
        self._on_failure = on_failure
        self._clock = clock
        self._next_check = clock() + check_interval_s

    @property
    def threshold(self) -> float:
        return self.model.threshold

    @property
    def card(self) -> ModelCard:
        return self.model.card

    def score(self, features: npt.NDArray[np.float32]) -> float:
        self.maybe_reload()
        return self.model.score(features)

    def maybe_reload(self) -> bool:
        """Reload if the check interval has passed and the files changed; True if reloaded."""
        now = self._clock()
        if now < self._next_check:
            return False
        self._next_check = now + self.check_interval_s
        return self.reload_if_changed()

    def reload_if_changed(self) -> bool:
        signature = _signature(self.path)
        if signature == self._seen:
            return False
        self._seen = signature
        try:
            model = JudgeModel.load(self.path)
            if self.sees is not None and model.card.sees != self.sees:
                raise JudgeModelError(
                    f"{self.path}: the new model was trained for sees: {model.card.sees}, "
                    f"this judge is served for sees: {self.sees}"
                )
        except JudgeModelError as exc:
            self.reload_failures += 1
            self.last_error = str(exc)
            log.warning("judge reload failed, keeping the model loaded before: %s", exc)
            if self._on_failure is not None:
                self._on_failure(exc)
            return False
        self.model = model
        self.reloads += 1
        self.last_error = None
        log.info("judge reloaded from %s (threshold %.4f)", self.path, model.threshold)
        return True

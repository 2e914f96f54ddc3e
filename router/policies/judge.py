"""The judge strategy: the small ONNX classifier scores how much a step needs the cloud, from
features of the trajectory's state (judge/features.py), inline on the CPU in microseconds.

The score is the judged chance that the step's action fails; at or above the threshold → cloud.
By default the threshold is held online at the cloud share the model card was calibrated to
(`target_cloud_share: card`), per trajectory and globally (judge/calibrate.py's OnlineThreshold,
starting from the card's threshold): an agent family the judge never saw scores on a scale of
its own, and a fixed threshold gave such families 5–69% of their steps on the cloud instead of
40%. A number holds that share; `target_cloud_share: null`, or a fixed `threshold` without a
number, keeps a fixed threshold. Steps spilled to the cloud for load (`edge_full`) are left out
of the counts the controller reads. A judge that fails sends the step to `on_failure` and
counts it.

`sees: draft`: the edge drafts the step first; the judge scores the state together with the draft
(judge/draft.py) with its own model and calibrated threshold (judge/models/judge-draft.onnx). An
accepted draft is the step's answer (no second edge call); a rejected one goes to the cloud. An
edge that fails to draft sends the step to `on_failure`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import judge as judge_package
from router import notes
from router.config.strategies import JudgeRoute
from router.inner import InnerCallError
from router.policies.base import AsksModels, Builder, Decision, Reason, RouteBase, StepView, Target
from router.policies.common import ask_edge, count_failure, prepared
from router.protocol.text import first_message

if TYPE_CHECKING:
    from judge.features import TrajectoryCounters
    from judge.record import RunRecord

# onnxruntime and numpy (~25 MB of a gateway's memory) are imported only when a route uses the
# judge: the imports below sit inside the functions that need them.
DEFAULT_MODEL = Path(judge_package.__file__).parent / "models" / "judge.onnx"
DEFAULT_DRAFT_MODEL = DEFAULT_MODEL.with_name("judge-draft.onnx")


def model_path(settings: JudgeRoute) -> Path:
    return settings.model_file()


def counters_of(step: StepView) -> TrajectoryCounters:
    from judge.features import TrajectoryCounters
    from judge.record import RunRecord

    return _counters(step, TrajectoryCounters, RunRecord)


def _counters(step: StepView, make: type[TrajectoryCounters], record: type[RunRecord]) -> TrajectoryCounters:
    trajectory = step.trajectory
    counts = trajectory.counts
    answered = counts["cloud_steps"] + counts["edge_steps"]
    last_cloud = counts["last_cloud_step"]
    since = answered if last_cloud == 0 else max(step.step - 1 - last_cloud, 0)
    # The run's own record: kept with the trajectory's counts when the recorder wrote the records
    # before this step, off the answer's path (judge/record.py).
    return make(step.step, counts["cloud_steps"], answered, since, step.request.size, record.from_counts(counts))


class JudgePolicy:
    def __init__(self, settings: JudgeRoute) -> None:
        from judge.calibrate import OnlineThreshold
        from judge.features import TrajectoryCounters, step_features
        from judge.model import ReloadingJudge
        from judge.record import RunRecord

        # Bound once here rather than imported in `decide`: an import statement costs a lookup
        # in sys.modules and the module's attribute every step.
        self._counters_type = TrajectoryCounters
        self._record_type = RunRecord
        self._step_features = step_features
        self._settings = settings
        # `sees`: a reload that brings a model for the other input keeps the model before.
        self.judge = ReloadingJudge(model_path(settings), check_interval_s=settings.reload_check_s, sees=settings.sees)
        if self.judge.card.sees != settings.sees:
            raise ValueError(
                f"{model_path(settings)}: the model was trained for sees: {self.judge.card.sees}, "
                f"the route has sees: {settings.sees}"
            )
        share = settings.held_share(self.judge.card.target_cloud_share)
        self._online = (
            OnlineThreshold(
                target_share=share,
                initial=settings.threshold if settings.threshold is not None else self.judge.threshold,
                lower=settings.threshold_bounds[0],
                upper=settings.threshold_bounds[1],
                rate=settings.adapt_rate,
                trajectory_gain=settings.trajectory_gain,
            )
            if share is not None
            else None
        )

    async def decide(self, step: AsksModels) -> Decision:
        settings = self._settings
        draft: tuple[dict[str, Any], int] | None = None
        if settings.sees == "draft":
            try:
                draft = await ask_edge(step, "draft")
            except InnerCallError:
                # Counted as every strategy counts an inner call it fell back from: without it a
                # dead edge drafting nothing shows only as a cloud share that rose.
                count_failure(step, "draft")
                return Decision(target=settings.on_failure, reason=Reason.INNER_FAILED)
        metrics = step.metrics
        started = time.perf_counter()
        reloads_failed = self.judge.reload_failures
        try:
            counters = _counters(step, self._counters_type, self._record_type)
            tools = step.request.raw.get("tools")
            features = self._step_features(step.request.messages, counters, tools)
            if draft is not None:
                import numpy as np

                from judge.draft import draft_features

                drafted = draft_features(first_message(draft[0]), step.request.messages, tools, counters.record)
                features = np.concatenate((features, drafted))
            score = self.judge.score(features)
        except Exception:  # a broken judge must not break the agent's step: fall back, count
            metrics.judge_failures.labels("score").inc()
            return Decision(target=settings.on_failure, reason=Reason.INNER_FAILED)
        finally:
            if self.judge.reload_failures > reloads_failed:
                metrics.judge_failures.labels("reload").inc()
        if self._online is not None:
            # Steps sent to the cloud because the edge was full were not the judge's choice.
            spills = int(step.trajectory.notes.get(notes.POOL_SPILLS, "0") or 0)
            cloud_steps, answered = counters.cloud_steps - spills, counters.answered_steps - spills
            cloud, _threshold = self._online.decide(score, max(cloud_steps, 0), max(answered, 0))
        else:
            threshold = settings.threshold if settings.threshold is not None else self.judge.threshold
            cloud = score >= threshold
        metrics.judge_scored(step.route, score, time.perf_counter() - started)
        target: Target = "cloud" if cloud else "edge"
        recorded = [round(float(v), 5) for v in features] if settings.record_features else None
        # An accepted draft is the answer: the edge is not asked the same question twice.
        answer = prepared(*draft) if draft is not None and not cloud else None
        return Decision(target=target, reason=Reason.JUDGE, score=round(score, 5), features=recorded, answer=answer)


# The route settings this module's policy is built from (router/policies/registry.py).
BUILDS: dict[type[RouteBase], Builder] = {JudgeRoute: JudgePolicy}

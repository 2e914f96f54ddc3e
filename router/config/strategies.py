"""Each strategy's route settings (`routes.<name>`, chosen by `strategy:`), and the union a route
is read as. Each class also says what its strategy's steps can be recorded with (the reasons it
gives, its inner calls, the failures it counts: router/metrics/route_labels.py declares the metrics'
series from them). A new strategy adds its settings class here, to the union, and its policy as a
module of router/policies/ naming the class it builds (`BUILDS`): two files."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal, TypeAlias

from pydantic import Field, field_validator, model_validator

import judge as judge_package
from judge.defaults import ADAPT_RATE, MAX_TRAJECTORY_GAIN, THRESHOLD_BOUNDS, TRAJECTORY_GAIN
from router.config.routes import BOTH, Reasons, RouteBase
from router.result import Reason, Target

# The tools the gateway offers the edge by default (router/policies/prompts.py has the words).
ADVISOR_TOOL = "advisor"
DELEGATE_TOOL = "delegate_to_cloud"


# Built by router/policies/fixed.py.
class EdgeRoute(RouteBase):
    strategy: Literal["edge"]
    # Edge-only means the data never leaves: no failover to the cloud unless asked for.
    failover: bool = False

    def sends_to_cloud(self) -> bool:
        return False

    def reasons(self) -> Reasons:
        return ((Reason.ROUTE_FIXED, ("edge",)),)


class CloudRoute(RouteBase):
    strategy: Literal["cloud"]

    def reasons(self) -> Reasons:
        return ((Reason.ROUTE_FIXED, ("cloud",)),)


# Built by router/policies/random.py.
class RandomRoute(RouteBase):
    strategy: Literal["random"]
    p: float = Field(0.4, ge=0.0, le=1.0, description="probability that a step goes to the cloud")
    seed: int | None = Field(None, description="makes the draws reproducible; null: a salt drawn at start")

    def intended_cloud_share(self) -> float | None:
        share = self.constraints.max_cloud_share
        return self.p if share is None else share

    def reasons(self) -> Reasons:
        return ((Reason.RANDOM_DRAW, BOTH),)


# Built by router/policies/task.py.
class TaskRoute(RouteBase):
    strategy: Literal["task"]
    cloud_if_matches: str | None = Field(None, description="regex on the task; a match sends the run to the cloud")
    cloud_if_longer_than: int | None = Field(
        None, ge=0, description="tasks longer than this (characters) go to the cloud"
    )
    default: Target = Field("edge", description="target of runs that no rule sends to the cloud")

    @field_validator("cloud_if_matches")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from exc
        return value

    def reasons(self) -> Reasons:
        return ((Reason.TASK_ROUTED, BOTH),)


# Built by router/policies/entropy.py.
class EntropyRoute(RouteBase):
    strategy: Literal["entropy"]
    threshold: float = Field(1.7, ge=0, description="entropy (nats) above which the cloud answers")
    top_logprobs: int = Field(20, ge=2, le=20, description="log-probabilities asked of the probe's token")
    fallback: Target = Field("cloud", description="target when the edge gives no logprobs or the probe fails")

    def reasons(self) -> Reasons:
        return ((Reason.ENTROPY, BOTH),)

    def inner_calls(self) -> set[tuple[str, str]]:
        return {("probe", "edge")}

    def failure_kinds(self) -> tuple[str, ...]:
        return ("probe", "probe_unreadable", "inner_call")


# Built by router/policies/llm_judge.py.
class LLMJudgeRoute(RouteBase):
    strategy: Literal["llm_judge"]
    judge: str = Field("edge", description="the upstream asked: edge (free), cloud, or another named upstream")
    mode: Literal["binary", "score"] = Field("binary", description="binary: a yes/no verdict; score: a 0-1 score")
    threshold: float = Field(0.5, ge=0, le=1, description="score mode: at or above, the cloud answers")
    sees: Literal["task", "last_k", "full"] = Field(
        "last_k", description="what the judge is shown: the task, the last k steps, or the whole history"
    )
    k: int = Field(4, ge=1, description="sees: last_k: steps of history shown")
    max_chars: int = Field(12_000, ge=500, description="size bound of the transcript the judge sees")
    on_failure: Target = Field("cloud", description="target when the judge fails or its reply cannot be parsed")

    def upstreams_used(self) -> list[str]:
        return [self.judge]

    def reasons(self) -> Reasons:
        return ((Reason.LLM_JUDGE, BOTH),)

    def inner_calls(self) -> set[tuple[str, str]]:
        return {("judge", self.judge)}

    def failure_kinds(self) -> tuple[str, ...]:
        return ("judge", "judge_unreadable", "inner_call")


# Built by router/policies/draft.py.
class DraftRoute(RouteBase):
    strategy: Literal["draft_verify"]
    verifier: str = Field("edge", description="the upstream that scores drafts")
    threshold: float = Field(0.5, ge=0, le=1, description="drafts scoring below this are regenerated by the cloud")
    k: int = Field(4, ge=1, description="steps of history the verifier sees")
    max_chars: int = Field(12_000, ge=500, description="size bound of the transcript the verifier sees")
    on_failure: Target = Field("edge", description="when the verifier fails: keep the draft (edge) or ask the cloud")

    def upstreams_used(self) -> list[str]:
        return [self.verifier]

    def reasons(self) -> Reasons:
        return (
            (Reason.DRAFT_ACCEPTED, ("edge",)),
            (Reason.DRAFT_REJECTED, ("cloud",)),
            (Reason.INNER_FAILED, ("cloud",)),
        )

    def inner_calls(self) -> set[tuple[str, str]]:
        return {("draft", "edge"), ("verify", self.verifier)}

    def failure_kinds(self) -> tuple[str, ...]:
        return ("draft", "verify", "verify_unreadable", "inner_call")


# Built by router/policies/delegation.py.
class DelegationRoute(RouteBase):
    strategy: Literal["self_delegation"]
    tool_name: str = Field(
        DELEGATE_TOOL, min_length=1, description="name of the tool offered to the edge to hand the step to the cloud"
    )
    marker: str | None = Field(None, description="text in the edge's answer that also means: delegate")

    def reasons(self) -> Reasons:
        return (
            (Reason.SELF_DELEGATED, ("cloud",)),
            (Reason.EDGE_ANSWERED, ("edge",)),
            (Reason.INNER_FAILED, ("cloud",)),
        )

    def inner_calls(self) -> set[tuple[str, str]]:
        return {("edge", "edge")}

    def failure_kinds(self) -> tuple[str, ...]:
        return ("edge", "inner_call")


# Built by router/policies/advisor.py.
class AdvisorRoute(RouteBase):
    strategy: Literal["advisor"]
    tool_name: str = Field(ADVISOR_TOOL, min_length=1, description="name of the tool offered to the edge")
    max_words: int = Field(500, ge=10, description="length bound asked of the advice (words)")
    max_chars: int = Field(24_000, ge=1000, description="transcript size the cloud sees")

    def reasons(self) -> Reasons:
        return ((Reason.EDGE_ANSWERED, ("edge",)), (Reason.ADVISED, ("edge",)), (Reason.INNER_FAILED, ("edge",)))

    def inner_calls(self) -> set[tuple[str, str]]:
        return {("edge", "edge"), ("advisor", "cloud")}

    def failure_kinds(self) -> tuple[str, ...]:
        return ("edge", "advisor", "inner_call")


# Built by router/policies/sketch.py.
class SketchRoute(RouteBase):
    strategy: Literal["sketch"]
    max_plan_steps: int = Field(8, ge=1, description="steps asked of the cloud's plan at most")
    max_plan_tokens: int = Field(400, ge=16, description="token bound of the plan call")

    def reasons(self) -> Reasons:
        return ((Reason.SKETCH, ("edge",)),)

    def inner_calls(self) -> set[tuple[str, str]]:
        return {("plan", "cloud")}

    def failure_kinds(self) -> tuple[str, ...]:
        return ("plan", "inner_call")


# Built by router/policies/escalation.py.
class EscalationRoute(RouteBase):
    strategy: Literal["escalation"]
    errors_in_a_row: int = Field(2, ge=1, description="tool results with errors in a row that send steps to the cloud")

    def reasons(self) -> Reasons:
        return (
            (Reason.FAILING, ("cloud",)),
            (Reason.INVALID_TOOL_CALL, ("cloud",)),
            (Reason.EDGE_ANSWERED, ("edge",)),
            (Reason.INNER_FAILED, ("cloud",)),
        )

    def inner_calls(self) -> set[tuple[str, str]]:
        return {("edge", "edge")}

    def failure_kinds(self) -> tuple[str, ...]:
        return ("edge", "inner_call")


# Built by router/policies/judge.py.
class JudgeRoute(RouteBase):
    strategy: Literal["judge"]
    model: Path | None = Field(None, description="an .onnx file with its .card.json; default: the shipped model")
    threshold: float | None = Field(None, ge=0, le=1, description="fixed threshold; default: the model card's")
    target_cloud_share: float | Literal["card"] | None = Field(
        "card",
        description=(
            "hold this cloud share per trajectory and globally by moving the threshold online; card: the share "
            "the model card was calibrated to; null (or a fixed threshold without a number here): a fixed threshold"
        ),
    )
    threshold_bounds: tuple[float, float] = Field(
        THRESHOLD_BOUNDS, description="lowest and highest threshold when holding target_cloud_share"
    )
    adapt_rate: float = Field(ADAPT_RATE, gt=0, le=0.5, description="threshold step per decision when holding a share")
    trajectory_gain: float = Field(
        TRAJECTORY_GAIN,
        ge=0,
        le=MAX_TRAJECTORY_GAIN,
        description="when holding a share: how much a run's own cloud share moves its threshold, relative to the "
        "threshold (0.5: a run 0.6 over the share needs a score 30% higher); 0: the share is held globally only",
    )
    on_failure: Target = Field("cloud", description="target when the judge fails (or, in draft mode, the draft)")
    record_features: bool = Field(False, description="keep each step's features in its record (for retraining)")
    reload_check_s: float = Field(1.0, gt=0, description="how often the model file is checked for a new version")
    sees: Literal["state", "draft"] = Field(
        "state", description="draft: the edge drafts first and the judge scores the state with the draft"
    )

    @model_validator(mode="after")
    def _bounds(self) -> JudgeRoute:
        # The model itself is loaded (and checked against `sees`) when the route is built, by
        # the engine or by `tandem serve` before it starts: validating settings reads no file.
        low, high = self.threshold_bounds
        if not 0 <= low <= high <= 1:
            raise ValueError(f"threshold_bounds must be 0 <= low <= high <= 1, got {self.threshold_bounds}")
        return self

    def model_file(self) -> Path:
        """The .onnx file the route serves: `model`, else the shipped one for its `sees`."""
        shipped = Path(judge_package.__file__).parent / "models"
        return self.model or shipped / ("judge-draft.onnx" if self.sees == "draft" else "judge.onnx")

    def held_share(self, card_share: float | None) -> float | None:
        """The cloud share the route's controller holds (`card_share`: the card's), or None for a
        fixed threshold."""
        share = self.target_cloud_share
        if share == "card":
            # A threshold written in the config is meant to be used as written.
            return card_share if self.threshold is None else None
        return share

    def intended_cloud_share(self) -> float | None:
        share = self.held_share(_card_share(self.model_file()) if self.target_cloud_share == "card" else None)
        return self.constraints.max_cloud_share if share is None else share

    def reasons(self) -> Reasons:
        return ((Reason.JUDGE, BOTH),)

    def inner_calls(self) -> set[tuple[str, str]]:
        return {("draft", "edge")} if self.sees == "draft" else set()

    def failure_kinds(self) -> tuple[str, ...]:
        # The draft call's failure is caught and counted by the policy (router/policies/judge.py).
        return ("draft",) if self.sees == "draft" else ()


def _card_share(model: Path) -> float | None:
    """The card's target share, read without loading the model (the metrics' target series)."""
    from judge.card import JudgeModelError, card_path, read_card

    try:
        return read_card(card_path(model)).target_cloud_share
    except JudgeModelError:
        return None


RouteSettings: TypeAlias = (
    EdgeRoute
    | CloudRoute
    | RandomRoute
    | TaskRoute
    | EntropyRoute
    | LLMJudgeRoute
    | DraftRoute
    | DelegationRoute
    | AdvisorRoute
    | SketchRoute
    | EscalationRoute
    | JudgeRoute
)

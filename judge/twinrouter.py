"""Tandem's state judge as a TwinRouterBench router, for its dynamic track.

TwinRouterBench (github.com/CommonstackAI/TwinRouterBench, Apache-2.0) runs a mini-swe-agent on
SWE-bench and asks a router, before every step, which model of its pool answers it: the harness
calls `select(ctx)` with a `swerouter.router.RouterContext` (the instance, the 0-based step index,
the messages so far, the tools, the pool) and takes a `RouterDecision(model_id, rationale)`. It
loads a router with `--router-import module:Factory` and passes each `--router-arg key=value` to
the factory as a string:

    twinrouterbench dynamic run --router-import judge.twinrouter:TandemJudgeRouter.from_cli_args \\
        --router-arg edge_model=deepseek/deepseek-v3.2 --router-arg cloud_model=anthropic/claude-opus-4.6 \\
        --router-label tandem_judge --output-dir runs/tandem ...

`TandemJudgeRouter` does what a Tandem `judge` route does: the step's features
(`features.step_features`, the gateway's function), the shipped state judge's score, and the
online controller holding the card's cloud share (per instance and globally, `OnlineThreshold`
with a route's defaults); at or above the threshold the `cloud_model` answers, else the
`edge_model`. The benchmark's types are imported from the benchmark itself when the router is
made (it must be installed where the router runs; this module needs nothing of it otherwise).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from judge.calibrate import OnlineThreshold
from judge.defaults import ADAPT_RATE, THRESHOLD_BOUNDS
from judge.features import TrajectoryCounters, step_features

# The benchmark's pool (data/dynamic/tier_to_model.json): its cheapest tier and its high baseline.
EDGE_MODEL = "deepseek/deepseek-v3.2"
CLOUD_MODEL = "anthropic/claude-opus-4.6"


class TandemJudgeRouter:
    """A TwinRouterBench `Router`: the state judge picks the edge or the cloud model per step."""

    def __init__(
        self,
        edge_model: str = EDGE_MODEL,
        cloud_model: str = CLOUD_MODEL,
        model: Path | None = None,
        target_cloud_share: float | None = None,
        fixed_threshold: bool = False,
        label: str = "tandem_judge",
    ) -> None:
        # The benchmark validates the decision's type: it must be its own class.
        from swerouter.router import RouterDecision  # type: ignore[import-not-found]

        from judge.model import DEFAULT_MODEL, JudgeModel

        self._decision = RouterDecision
        self.edge_model, self.cloud_model, self.label = edge_model, cloud_model, label
        self.judge = JudgeModel.load(model or DEFAULT_MODEL)
        if self.judge.card.sees != "state":
            raise ValueError(f"{model}: a draft judge needs the edge's draft, which a router is not given")
        share = target_cloud_share if target_cloud_share is not None else self.judge.card.target_cloud_share
        self.controller = (
            None
            if fixed_threshold or share is None
            else OnlineThreshold(share, self.judge.threshold, *THRESHOLD_BOUNDS, rate=ADAPT_RATE)
        )
        self._cloud_steps: dict[str, int] = {}
        self._answered: dict[str, int] = {}
        self._lock = threading.Lock()  # the harness may run instances on several threads

    @classmethod
    def from_cli_args(cls, **args: str) -> TandemJudgeRouter:
        """The `--router-import` factory: every `--router-arg` comes as a string."""
        known = {"edge_model", "cloud_model", "model", "target_cloud_share", "fixed_threshold", "label"}
        unknown = sorted(set(args) - known)
        if unknown:
            raise ValueError(f"unknown --router-arg {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        share = args.get("target_cloud_share", "card")
        return cls(
            edge_model=args.get("edge_model", EDGE_MODEL),
            cloud_model=args.get("cloud_model", CLOUD_MODEL),
            model=Path(args["model"]) if args.get("model") else None,
            target_cloud_share=None if share == "card" else float(share),
            fixed_threshold=args.get("fixed_threshold", "false").lower() in ("1", "true", "yes"),
            label=args.get("label", "tandem_judge"),
        )

    def select(self, ctx: Any) -> Any:
        """The `RouterDecision` for the step `ctx` (a `RouterContext`) is about to take."""
        pool = tuple(ctx.available_models)
        for role, chosen in (("edge_model", self.edge_model), ("cloud_model", self.cloud_model)):
            if chosen not in pool:
                raise ValueError(f"{self.label}: {role} {chosen!r} is not in the pool ({', '.join(pool)})")
        messages = [dict(message) for message in ctx.messages]  # the context's are read-only
        tools = [dict(tool) for tool in ctx.tools] or None
        instance = str(ctx.instance_id)
        with self._lock:
            cloud_steps, answered = self._cloud_steps.get(instance, 0), self._answered.get(instance, 0)
            counters = TrajectoryCounters(
                step=int(ctx.step_index) + 1, cloud_steps=cloud_steps, answered_steps=answered
            )
            score = self.judge.score(step_features(messages, counters, tools))
            if self.controller is None:
                threshold = self.judge.threshold
                cloud = score >= threshold
            else:
                cloud, threshold = self.controller.decide(score, cloud_steps, answered)
            self._cloud_steps[instance] = cloud_steps + int(cloud)
            self._answered[instance] = answered + 1
        model_id = self.cloud_model if cloud else self.edge_model
        return self._decision(model_id=model_id, rationale=f"tandem judge score {score:.4f}, threshold {threshold:.4f}")

"""Every strategy a route can name. A new strategy adds its settings class to the union."""

from __future__ import annotations

from typing import TypeAlias

from router.policies.advisor import AdvisorRoute
from router.policies.delegation import DelegationRoute
from router.policies.draft import DraftRoute
from router.policies.entropy import EntropyRoute
from router.policies.escalation import EscalationRoute
from router.policies.fixed import CloudRoute, EdgeRoute
from router.policies.judge import JudgeRoute
from router.policies.llm_judge import LLMJudgeRoute
from router.policies.random import RandomRoute
from router.policies.sketch import SketchRoute
from router.policies.task import TaskRoute

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

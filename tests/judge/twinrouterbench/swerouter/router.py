"""The router interface of TwinRouterBench's dynamic track: what `Router.select` is given and
returns. Field names and types as in the benchmark's `swerouter/router.py`
(github.com/CommonstackAI/TwinRouterBench, commit 7cbb0de, Apache-2.0); declared here for tests."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ModelCacheView:
    model_id: str
    last_call_ts: float | None
    prefix_token_count: int
    prefix_hash: str | None


@dataclass(frozen=True)
class CacheStateSnapshot:
    wallclock_ttl_sec: int
    now_ts: float
    by_model: Mapping[str, ModelCacheView]


@dataclass(frozen=True)
class RunConfig:
    max_steps: int
    budget_usd: float
    wallclock_ttl_sec: int
    select_timeout_sec: float


@dataclass(frozen=True)
class RouterContext:
    instance_id: str
    step_index: int  # 0-based
    messages: tuple[Mapping[str, Any], ...]
    tools: tuple[Mapping[str, Any], ...]
    available_models: tuple[str, ...]
    cache_state: CacheStateSnapshot
    budget_so_far_usd: float
    run_config: RunConfig


@dataclass(frozen=True)
class RouterDecision:
    model_id: str
    rationale: str | None = None


def validate_decision(decision: Any, *, available_models: tuple[str, ...]) -> RouterDecision:
    """The harness's check of what `select` returned: this class, and a model of the pool."""
    if not isinstance(decision, RouterDecision):
        raise TypeError(f"Router.select must return RouterDecision, got {type(decision).__name__}")
    if not decision.model_id or decision.model_id not in available_models:
        raise ValueError(f"RouterDecision.model_id={decision.model_id!r} is not in the pool")
    return decision

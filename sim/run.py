"""`tandem demo`: start the simulated edge and cloud, one real gateway per strategy, and the
built-in agent; work the tasks under each strategy side by side; print what each cost.

Every number in the table comes from the gateway's ledger (`GET /v1/trajectories/{id}`), not
from the demo's own arithmetic: the demo shows what the gateway measures.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import signal
import sys
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx

from judge.progress import Progress
from router.settings import Settings, load_settings
from sim.agent import run_task
from sim.catalog import CATALOG
from sim.gateway import running_gateway
from sim.report import banner, render
from sim.server import SimServer
from sim.strategies import STRATEGIES, Strategy
from sim.tasks import Task

PRICES = {
    "edge": {"input": 0.10, "cached_input": 0.10, "output": 0.15},  # qwen3.5-9b
    "cloud": {"input": 2.50, "cached_input": 0.25, "output": 15.00},  # gpt-5.4, context <= 272k
}


@dataclass
class TaskResult:
    task_id: str
    solved: bool
    steps: int
    ledger: dict[str, Any]  # the gateway's GET /v1/trajectories/{id} answer

    # Totals are summed from the per-step records, the part of the answer every version has.
    @property
    def records(self) -> list[dict[str, Any]]:
        records: list[dict[str, Any]] = self.ledger["records"]
        return records

    @property
    def cloud_steps(self) -> int:
        return sum(record["target"] == "cloud" for record in self.records)

    def total(self, key: str) -> float:
        """A money field of the records, or a token count of their usage."""
        if key.endswith("_usd"):
            return sum(float(record[key]) for record in self.records)
        return sum(int((record.get("usage") or {}).get(key, 0)) for record in self.records)

    @property
    def inner_calls(self) -> list[dict[str, Any]]:
        """The strategy's inner calls (probe, judge, draft, advisor, plan …) of every step."""
        return [call for record in self.records for call in record.get("inner") or []]


@dataclass
class StrategyResult:
    strategy: Strategy
    tasks: list[TaskResult] = field(default_factory=list)
    wall_s: float = 0.0

    @property
    def solved(self) -> int:
        return sum(task.solved for task in self.tasks)

    @property
    def steps(self) -> int:
        return sum(len(task.records) for task in self.tasks)

    @property
    def cloud_steps(self) -> int:
        return sum(task.cloud_steps for task in self.tasks)

    @property
    def cost_usd(self) -> float:
        return sum(task.total("cost_usd") for task in self.tasks)

    @property
    def counterfactual_usd(self) -> float:
        return sum(task.total("counterfactual_usd") for task in self.tasks)

    def tokens(self, usage_key: str) -> int:
        return int(sum(task.total(usage_key) for task in self.tasks))

    @property
    def inner_calls(self) -> list[dict[str, Any]]:
        return [call for task in self.tasks for call in task.inner_calls]

    @property
    def inner_tokens(self) -> int:
        """Prompt plus completion tokens of the inner calls (their usage is [prompt, cached, completion])."""
        return sum(int(call["usage"][0]) + int(call["usage"][2]) for call in self.inner_calls if call.get("usage"))

    @property
    def privacy_score(self) -> float | None:
        """EC2-Bench's privacy score, the mean over the runs (None when the gateway reports none)."""
        scores = [(task.ledger.get("privacy") or {}).get("score") for task in self.tasks]
        known = [float(score) for score in scores if isinstance(score, int | float)]
        return sum(known) / len(known) if known else None

    @property
    def cloud_calls(self) -> int:
        """Every call that reached the cloud: the steps it answered and the inner calls it got."""
        return self.cloud_steps + sum(1 for call in self.inner_calls if call["target"] == "cloud")


@dataclass
class DemoResult:
    seed: int
    strategies: list[StrategyResult]
    # What the simulated upstreams reported, per role and prompt_cache_key (= trajectory id):
    # [requests, prompt, cached, completion]; inner calls that carry no key are under "".
    upstream_usage: dict[str, dict[str, list[int]]]
    wall_s: float


def pick_tasks(count: int) -> list[Task]:
    """The first `count` tasks of the catalog, going round again with new ids when it runs out."""
    picked = []
    for index in range(count):
        task = CATALOG[index % len(CATALOG)]
        rounds = index // len(CATALOG)
        picked.append(dataclasses.replace(task, id=f"{task.id}-{rounds + 1}") if rounds else task)
    return picked


def gateway_settings(edge_url: str, cloud_url: str, route: dict[str, Any]) -> Settings:
    upstreams = {
        role: {
            "base_url": url,
            "model": model,
            "prices": PRICES[role],
            "timeouts": {"connect": 2, "first_byte": 30, "idle": 30},
        }
        for role, url, model in (("edge", edge_url, "qwen3.5-9b-sim"), ("cloud", cloud_url, "gpt-5.4-sim"))
    }
    # Explicit values, so that TANDEM_* variables of the environment cannot change the demo.
    return load_settings(
        upstreams=upstreams,
        routes={"tandem": route},
        client_api_keys=[],
        client_api_keys_file=None,
        unknown_model_route=None,
        redis_url=None,
        allow_target_header=False,
    )


async def fetch_ledger(client: httpx.AsyncClient, trajectory_id: str, steps: int) -> dict[str, Any]:
    """The gateway's record of a trajectory, once every step of it is accounted."""
    for _ in range(200):
        reply = await client.get(f"/trajectories/{trajectory_id}")
        reply.raise_for_status()
        ledger: dict[str, Any] = reply.json()
        # A streamed step is recorded when its relay ends, a moment after the agent's last byte.
        if len(ledger["records"]) >= steps:
            return ledger
        await asyncio.sleep(0.01)
    raise RuntimeError(f"the gateway recorded {len(ledger['records'])} of {steps} steps of {trajectory_id}")


async def post_outcome(
    client: httpx.AsyncClient, trajectory_id: str, solved: bool, strategy: str, task_id: str
) -> dict[str, Any] | None:
    """Tell the gateway whether the run solved its task, as an evaluation harness would."""
    body = {"success": solved, "labels": {"strategy": strategy, "task": task_id}}
    reply = await client.post(f"/trajectories/{trajectory_id}/outcome", json=body)
    reply.raise_for_status()
    outcome: dict[str, Any] | None = reply.json().get("outcome")
    return outcome


async def run_strategy(
    strategy: Strategy, tasks: list[Task], seed: int, edge: SimServer, cloud: SimServer, bar: Progress | None = None
) -> StrategyResult:
    settings = gateway_settings(edge.base_url, cloud.base_url, strategy.route_settings(seed))
    result = StrategyResult(strategy)
    started = time.perf_counter()
    async with (
        running_gateway(settings) as (base_url, _app),
        httpx.AsyncClient(base_url=base_url, timeout=60) as client,
    ):
        # One task after another: the random strategy's draws then come in a fixed order.
        for task in tasks:
            session = f"{strategy.key}-{task.id}"
            run = await run_task(client, task, model="tandem", session_id=session)
            ledger = await fetch_ledger(client, session, run.steps)
            ledger["outcome"] = await post_outcome(client, session, run.solved, strategy.key, task.id)
            result.tasks.append(TaskResult(task.id, run.solved, run.steps, ledger))
            if bar is not None:
                bar.advance()
    result.wall_s = time.perf_counter() - started
    return result


async def run_strategies(
    seed: int,
    tasks: int,
    *,
    latency_scale: float = 1.0,
    strategies: tuple[Strategy, ...] = STRATEGIES,
    show_progress: bool = False,
) -> DemoResult:
    """Start the simulated models, work every task under every strategy, stop everything."""
    picked = pick_tasks(tasks)
    started = time.perf_counter()
    edge = await SimServer("edge", picked, seed, latency_scale).start()
    cloud = await SimServer("cloud", picked, seed, latency_scale).start()
    # Standard error, so that the printed tables stay what standard output holds.
    bar = Progress("strategy x task runs", len(strategies) * len(picked), enabled=show_progress)
    try:
        results = await asyncio.gather(*(run_strategy(s, picked, seed, edge, cloud, bar) for s in strategies))
        bar.close()
    finally:
        await edge.stop()
        await cloud.stop()
    return DemoResult(
        seed=seed,
        strategies=list(results),
        upstream_usage={"edge": dict(edge.served), "cloud": dict(cloud.served)},
        wall_s=time.perf_counter() - started,
    )


T = TypeVar("T")
# Servers that log each request cut off when the run is cancelled, with its traceback: the
# simulated models (aiohttp) and the gateway (uvicorn's lifespan, the gateway's own log).
TEARDOWN_LOGGERS = ("aiohttp.server", "aiohttp.access", "uvicorn.error", "tandem")


async def _quiet_on_ctrl_c(work: Awaitable[T]) -> T:
    """`work`, cancelled by Ctrl-C with the servers' logs off first: cancelled, every request in
    flight fails, and each failure would print its traceback under the user's Ctrl-C."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()

    def interrupted() -> None:
        for name in TEARDOWN_LOGGERS:
            logging.getLogger(name).disabled = True
        if task is not None:
            task.cancel()

    try:
        loop.add_signal_handler(signal.SIGINT, interrupted)
    except (NotImplementedError, RuntimeError):  # no signal handlers here (not the main thread)
        return await work
    try:
        return await work
    finally:
        loop.remove_signal_handler(signal.SIGINT)


def run_demo(seed: int, tasks: int, edge_vllm: bool, *, latency_scale: float = 1.0) -> int:
    """Run the demo and print its tables; the exit status of `tandem demo`."""
    if tasks < 1:
        print(f"tandem demo: --tasks must be at least 1, got {tasks}")
        return 2
    if edge_vllm:
        from sim.vllm_mode import run_vllm_demo

        return run_vllm_demo(seed, min(tasks, 3))
    print(banner(seed, tasks, PRICES), flush=True)
    try:
        work = run_strategies(seed, tasks, latency_scale=latency_scale, show_progress=True)
        result = asyncio.run(_quiet_on_ctrl_c(work))
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("tandem demo: interrupted", file=sys.stderr)
        return 130
    print(render(result), flush=True)
    return 0

"""`tandem demo`: simulated models, the real gateway, the built-in agent, the printed tables."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from typing import Any

import httpx
import orjson
import pytest

from sim.catalog import CATALOG
from sim.report import STRATEGY_HEADER
from sim.run import PRICES, DemoResult, StrategyResult, run_demo, run_strategies
from sim.server import SimServer
from sim.strategies import HARD_TASKS, NO_INNER_CALLS, STRATEGIES
from sim.tasks import Task
from sim.workspace import TOOLS, Workspace, is_error

FAST = 0.02  # latency scale for the runs that check numbers, not time
LABEL = {s.key: s.label for s in STRATEGIES}
# Strategies that make inner model calls (and those that do not: NO_INNER_CALLS).
MAKES_INNER_CALLS = {s.key for s in STRATEGIES} - NO_INNER_CALLS
COLUMN = {name: index for index, name in enumerate(STRATEGY_HEADER)}


@pytest.fixture(scope="module")
def fast_run() -> DemoResult:
    return asyncio.run(run_strategies(7, 6, latency_scale=FAST))


def _tables(output: str) -> list[dict[str, list[str]]]:
    """Every printed table's rows, by first cell, cells split on the column gaps."""
    lines = output.splitlines()
    tables = []
    for index, line in enumerate(lines):
        if line.startswith("strategy ") and lines[index + 1].startswith("---"):
            rows = {}
            for row in lines[index + 2 :]:
                if not row.strip():
                    break
                cells = re.split(r"\s{2,}", row.strip())
                rows[cells[0]] = cells
            tables.append(rows)
    return tables


def test_demo_prints_every_strategy_in_under_a_minute(capsys: pytest.CaptureFixture[str]) -> None:
    started = time.perf_counter()
    status = run_demo(seed=7, tasks=6, edge_vllm=False)
    elapsed = time.perf_counter() - started
    output = capsys.readouterr().out
    assert status == 0
    assert elapsed < 60
    assert "SIMULATED" in output and "fail edits and error recovery more often" in output
    assert "2.50 / 0.25 / 15.00" in output
    main, mix, per_task = _tables(output)
    assert list(main) == [s.label for s in STRATEGIES]  # every strategy, side by side

    def cell(key: str, column: str) -> str:
        return main[LABEL[key]][COLUMN[column]]

    solved = {key: int(cell(key, "solved").split("/")[0]) for key in LABEL}
    cost = {key: float(cell(key, "cost $")) for key in LABEL}
    assert cell("edge-only", "cloud share") == "0%" and cell("cloud-only", "cloud share") == "100%"
    assert cell("edge-only", "cloud calls") == "0"
    # Sketch and advisor answer every step on the edge; the cloud only writes plans and advice.
    for key in ("sketch", "advisor"):
        assert cell(key, "cloud share") == "0%" and int(cell(key, "cloud calls")) > 0
    assert int(cell("sketch", "cloud calls")) == 6  # one plan per run
    # Nothing from the workspace reaches the cloud without a cloud step: the planner sees the task.
    assert cell("edge-only", "privacy") == cell("sketch", "privacy") == "1.00"
    for key in LABEL:
        extra = float(cell(key, "extra calls/step"))
        assert (extra > 0) == (key in MAKES_INNER_CALLS), (key, extra)
        assert (cell(key, "inner tok") != "0") == (key in MAKES_INNER_CALLS), key
    assert float(cell("entropy", "extra calls/step")) == 1.0  # one probe per step
    assert solved["cloud-only"] > solved["edge-only"]  # the strategies differ checkably
    assert solved["cloud-only"] >= solved["random"]
    assert cost["edge-only"] < cost["random"] < cost["cloud-only"]
    assert all(cost[key] < cost["cloud-only"] for key in LABEL if key != "cloud-only")
    assert "probe (edge) 1.00" in " ".join(mix[LABEL["entropy"]])
    assert set(mix) == {LABEL[key] for key in MAKES_INNER_CALLS}
    for key, label in LABEL.items():
        cells = per_task[label][1:]
        assert len(cells) == 6 and all(re.fullmatch(r"(ok|FAIL) \d+/\d+", c) for c in cells), (key, cells)
        assert sum(c.startswith("ok") for c in cells) == solved[key]


def _priced(usage: list[int], role: str) -> float:
    prompt, cached, completion = usage
    prices = PRICES[role]
    return ((prompt - cached) * prices["input"] + cached * prices["cached_input"] + completion * prices["output"]) / 1e6


def test_cost_is_the_gateways_ledger_and_matches_upstream_usage(fast_run: DemoResult) -> None:
    # Every call that reached an upstream is in the ledger once, with the tokens it reported:
    # the steps' main calls and the strategies' inner calls alike.
    ledgered = {role: [0, 0, 0, 0] for role in ("edge", "cloud")}
    for strategy in fast_run.strategies:
        for task in strategy.tasks:
            ledger = task.ledger
            records = ledger["records"]
            assert len(records) == task.steps == ledger["steps"]
            assert ledger["outcome"]["success"] is task.solved  # the gateway knows what was solved
            assert all(r["status"] == "ok" and r["usage"]["source"] == "upstream" for r in records)
            assert ledger["cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in records))
            for record in records:
                usage = record["usage"]
                main = [usage["prompt_tokens"], usage["cached_tokens"], usage["completion_tokens"]]
                calls = [(record["target"], main), *((c["target"], c["usage"]) for c in record["inner"])]
                for call in record["inner"]:
                    assert call["status"] == "ok" or call["status"].startswith("invalid:"), call
                    assert call["cost_usd"] == pytest.approx(_priced(call["usage"], call["target"]), rel=1e-9)
                # A step's dollars are its main call's and its inner calls', at the configured prices.
                assert record["cost_usd"] == pytest.approx(sum(_priced(u, role) for role, u in calls), rel=1e-9)
                # All-cloud: the same tokens at the cloud's prices, with the prompt cache an
                # all-cloud run would have had (router/ledger.py).
                all_cloud = [usage["prompt_tokens"], record["counterfactual_cached_tokens"], usage["completion_tokens"]]
                assert record["counterfactual_usd"] == pytest.approx(_priced(all_cloud, "cloud"), rel=1e-9)
                for role, tokens in calls:
                    for index, value in enumerate([1, *tokens]):
                        ledgered[role][index] += value
            if strategy.strategy.key in NO_INNER_CALLS:
                # Without inner calls, each run's calls are under its own prompt_cache_key.
                for role in ("edge", "cloud"):
                    requests = fast_run.upstream_usage[role].get(ledger["id"], [0, 0, 0, 0])[0]
                    assert requests == sum(r["target"] == role for r in records)
        assert strategy.cost_usd == pytest.approx(sum(t.ledger["cost_usd"] for t in strategy.tasks))
    for role in ("edge", "cloud"):
        served = [sum(counts[i] for counts in fast_run.upstream_usage[role].values()) for i in range(4)]
        assert served == ledgered[role], role
    # Only the cloud reports prompt-cache hits, and it gets some across a trajectory's steps.
    by_key = {s.strategy.key: s for s in fast_run.strategies}
    assert by_key["edge-only"].tokens("cached_tokens") == 0
    assert by_key["cloud-only"].tokens("cached_tokens") > 0


def _reasons(result: StrategyResult) -> list[tuple[str, str, list[str]]]:
    return [
        (r["target"], r["reason"], [f"{c['purpose']}:{c['target']}" for c in r["inner"]])
        for t in result.tasks
        for r in t.records
    ]


def test_each_strategy_routes_and_calls_as_it_should(fast_run: DemoResult) -> None:
    by_key = {s.strategy.key: s for s in fast_run.strategies}
    assert by_key["edge-only"].cloud_steps == 0 and not by_key["edge-only"].inner_calls
    assert by_key["cloud-only"].cloud_steps == by_key["cloud-only"].steps
    assert 0 < by_key["random"].cloud_steps < by_key["random"].steps
    for task in by_key["task"].tasks:  # one decision per run, by the pattern on the task
        message = next(t for t in CATALOG if t.id == task.task_id).message()
        hard = re.search(HARD_TASKS, message, re.IGNORECASE) is not None  # as the route compiles it
        assert {r["target"] for r in task.records} == {"cloud" if hard else "edge"}
    assert by_key["cloud-capped"].cloud_steps > 0
    assert all(task.cloud_steps <= 0.4 * task.steps for task in by_key["cloud-capped"].tasks)
    for key, purpose in (("entropy", "probe"), ("llm-judge", "judge")):
        steps = _reasons(by_key[key])
        assert all(inner == [f"{purpose}:edge"] for _, _, inner in steps)
        assert 0 < sum(target == "cloud" for target, _, _ in steps) < len(steps)
    for target, reason, inner in _reasons(by_key["draft-verify"]):
        rejected = reason == "draft_rejected"
        assert inner == (["draft:edge", "verify:edge"] if rejected else ["verify:edge"])
        assert target == ("cloud" if rejected else "edge")
    for key, reason in (("self-delegation", "self_delegated"), ("escalation", "invalid_tool_call")):
        steps = _reasons(by_key[key])
        assert any(r == reason for _, r, _ in steps), key
        # The edge's own answer is the step's main call, unless the cloud redid the step.
        assert all((inner == ["edge:edge"]) == (r == reason) for _, r, inner in steps), key
    advised = [inner for _, reason, inner in _reasons(by_key["advisor"]) if reason == "advised"]
    assert advised and all(inner == ["edge:edge", "advisor:cloud"] for inner in advised)
    assert by_key["advisor"].cloud_steps == by_key["sketch"].cloud_steps == 0
    for task in by_key["sketch"].tasks:  # the plan is written once, at the run's first step
        assert [c["purpose"] for c in task.records[0]["inner"]] == ["plan"]
        assert all(not r["inner"] for r in task.records[1:])


def test_same_seed_same_run(fast_run: DemoResult) -> None:
    again = asyncio.run(run_strategies(7, 6, latency_scale=FAST))

    def summary(result: DemoResult) -> list[Any]:
        return [
            (
                s.strategy.key,
                t.task_id,
                t.solved,
                t.steps,
                [(r["target"], r["reason"], r["score"], r["usage"], r["inner"]) for r in t.ledger["records"]],
            )
            for s in result.strategies
            for t in s.tasks
        ]

    assert summary(again) == summary(fast_run)
    other = asyncio.run(run_strategies(8, 6, latency_scale=FAST))
    assert summary(other) != summary(fast_run)


def _play(workspace: Workspace, tool: str, args: dict[str, str]) -> str:
    return workspace.call(tool, orjson.dumps(args).decode())


@pytest.mark.parametrize("task", CATALOG, ids=lambda t: t.id)
def test_each_task_is_solvable_and_its_slips_break_it(task: Task) -> None:
    assert len(task.plan) in range(5, 13)
    workspace = Workspace(task)
    assert not workspace.tests_pass(), "a task must start unsolved"
    for action in task.plan:
        result = _play(workspace, action.tool, action.args)
        assert is_error(result) == action.expect_fail, (action, result)
    assert workspace.solved
    for slip in (a for a in task.plan if a.buggy is not None):
        # The plan with this one step done wrong: every call still succeeds, the tests fail,
        # and the repair the simulated models know of makes them pass.
        slipped = Workspace(task)
        for action in task.plan[:-1]:
            args = slip.buggy if action is slip else action.args
            assert args is not None
            assert is_error(_play(slipped, action.tool, args)) == (action.expect_fail or action.tool == "run_tests")
        assert not slipped.tests_pass()
        assert not is_error(_play(slipped, slip.tool, slip.fix()))
        assert slipped.tests_pass()


def test_sim_answers_plain_and_streamed_like_an_openai_server() -> None:
    async def scenario() -> tuple[dict[str, Any], list[dict[str, Any]], list[str], dict[str, Any]]:
        task = CATALOG[0]
        sim = await SimServer("cloud", [task], seed=1, latency_scale=0).start()
        start = [{"role": "system", "content": "test"}, {"role": "user", "content": task.message()}]
        body: dict[str, Any] = {"model": "m", "messages": start, "tools": TOOLS}
        try:
            async with httpx.AsyncClient(base_url=sim.base_url) as client:
                plain = (await client.post("/chat/completions", json={**body, "prompt_cache_key": "a"})).json()
                stream_body = {
                    **body,
                    "stream": True,
                    "stream_options": {"include_usage": True},
                    "prompt_cache_key": "b",
                }
                async with client.stream("POST", "/chat/completions", json=stream_body) as reply:
                    lines = [line async for line in reply.aiter_lines() if line.startswith("data:")]
                models = (await client.get("/models")).json()
        finally:
            await sim.stop()
        events = [orjson.loads(line[5:]) for line in lines[:-1]]
        return plain, events, lines, models

    plain, events, lines, models = asyncio.run(scenario())
    message = plain["choices"][0]["message"]
    assert plain["choices"][0]["finish_reason"] == "tool_calls"
    assert message["tool_calls"][0]["function"]["name"] == "run_tests"
    assert plain["usage"]["prompt_tokens"] > 300 and plain["usage"]["completion_tokens"] > 0
    assert lines[-1] == "data: [DONE]"
    assert events[-1]["choices"] == [] and events[-1]["usage"] == plain["usage"]
    arguments = "".join(
        d["function"].get("arguments", "")
        for e in events[:-1]
        for c in e["choices"]
        for d in c["delta"].get("tool_calls", [])
    )
    assert arguments == message["tool_calls"][0]["function"]["arguments"]
    assert events[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert models["data"][0]["id"] == "gpt-5.4-sim"


def test_sim_stops_quietly_when_its_client_leaves_a_stream(caplog: pytest.LogCaptureFixture) -> None:
    """The gateway gives a call up when its own client leaves: the simulated model stops writing
    without a traceback in the demo's log."""

    async def scenario() -> None:
        task = CATALOG[0]
        sim = await SimServer("cloud", [task], seed=1, latency_s=0.6).start()
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": task.message()}]}
        try:
            for _ in range(3):
                async with (
                    httpx.AsyncClient(base_url=sim.base_url) as client,
                    client.stream("POST", "/chat/completions", json=body) as reply,
                ):
                    async for _line in reply.aiter_lines():
                        break  # the first event read, then the connection closed
            await asyncio.sleep(0.8)  # the streams' writes after the client left
        finally:
            await sim.stop()

    with caplog.at_level("DEBUG"):
        asyncio.run(scenario())
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()], caplog.text[:2000]


def test_tasks_below_one_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_demo(seed=7, tasks=0, edge_vllm=True) == 2
    assert "--tasks must be at least 1" in capsys.readouterr().out


def test_ctrl_c_mid_run_is_one_line_and_exit_130() -> None:
    """Cancelled mid-run, every request in flight failed, and the simulated models and the
    gateway printed a traceback for each under the user's Ctrl-C."""
    process = subprocess.Popen(
        [sys.executable, "-m", "router.cli", "demo"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("TANDEM_")},
    )
    assert process.stderr is not None
    said = []
    for line in process.stderr:  # the progress bar, a line a few runs: steps are in flight
        said.append(line)
        if re.search(r"runs \S+ ([1-9]\d*)/", line):
            break
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    err = "".join(said) + err
    assert process.returncode == 130, err
    assert "Traceback" not in err and "Error handling request" not in err, err
    assert "tandem demo: interrupted" in err
    assert "Per task" not in out  # no table of a run cut short

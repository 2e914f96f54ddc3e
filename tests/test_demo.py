"""`tandem demo`: simulated models, the real gateway, the built-in agent, the printed tables."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import httpx
import orjson
import pytest

from router.demo.catalog import CATALOG
from router.demo.run import PRICES, DemoResult, pick_tasks, run_demo, run_strategies
from router.demo.script import decide
from router.demo.sim import SimServer
from router.demo.tasks import Task
from router.demo.workspace import TOOLS, Workspace, is_error

FAST = 0.02  # latency scale for the runs that check numbers, not time


@pytest.fixture(scope="module")
def fast_run() -> DemoResult:
    return asyncio.run(run_strategies(7, 6, latency_scale=FAST))


def _rows(output: str) -> dict[str, list[str]]:
    """The per-strategy table's rows, by strategy label, cells split on the column gaps."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("strategy "))
    rows = {}
    for line in lines[start + 2 :]:
        if not line.strip():
            break
        cells = re.split(r"\s{2,}", line.strip())
        rows[cells[0]] = cells
    return rows


def test_demo_prints_tables_in_under_a_minute(capsys: pytest.CaptureFixture[str]) -> None:
    started = time.perf_counter()
    status = run_demo(seed=7, tasks=6, edge_vllm=False)
    elapsed = time.perf_counter() - started
    output = capsys.readouterr().out
    assert status == 0
    assert elapsed < 60
    assert "SIMULATED" in output and "fail edits and error recovery more often" in output
    assert "2.50 / 0.25 / 15.00" in output
    rows = _rows(output)
    assert set(rows) == {"edge-only", "cloud-only", "random p=0.4"}
    solved = {label: int(cells[1].split("/")[0]) for label, cells in rows.items()}
    cost = {label: float(cells[7]) for label, cells in rows.items()}
    assert rows["edge-only"][3] == "0%" and rows["cloud-only"][3] == "100%"
    assert solved["cloud-only"] >= solved["random p=0.4"] >= solved["edge-only"]
    assert solved["cloud-only"] > solved["edge-only"]  # the strategies differ checkably
    assert cost["edge-only"] < cost["random p=0.4"] < cost["cloud-only"]
    assert "Per task (" in output
    for task in pick_tasks(6):
        assert re.search(rf"^{task.id}\s+(solved|FAILED)", output, re.MULTILINE)


def test_cost_is_the_gateways_ledger_and_matches_upstream_usage(fast_run: DemoResult) -> None:
    for strategy in fast_run.strategies:
        for task in strategy.tasks:
            ledger = task.ledger
            records = ledger["records"]
            assert len(records) == task.steps == ledger["steps"]
            assert ledger["outcome"]["success"] is task.solved  # the gateway knows what was solved
            assert all(r["status"] == "ok" and r["usage"]["source"] == "upstream" for r in records)
            assert ledger["cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in records))
            # The ledger's dollars are the upstreams' reported tokens at the configured prices.
            expected = 0.0
            for role in ("edge", "cloud"):
                requests, prompt, cached, completion = fast_run.upstream_usage[role].get(ledger["id"], [0, 0, 0, 0])
                assert requests == sum(r["target"] == role for r in records)
                prices = PRICES[role]
                expected += (
                    (prompt - cached) * prices["input"]
                    + cached * prices["cached_input"]
                    + completion * prices["output"]
                ) / 1e6
            assert ledger["cost_usd"] == pytest.approx(expected, rel=1e-9)
        assert strategy.cost_usd == pytest.approx(sum(t.ledger["cost_usd"] for t in strategy.tasks))
    by_key = {s.strategy.key: s for s in fast_run.strategies}
    assert by_key["edge-only"].cloud_steps == 0
    assert by_key["cloud-only"].cloud_steps == by_key["cloud-only"].steps
    assert 0 < by_key["random"].cloud_steps < by_key["random"].steps
    # Only the cloud reports prompt-cache hits, and it gets some across a trajectory's steps.
    assert by_key["edge-only"].tokens("cached_tokens") == 0
    assert by_key["cloud-only"].tokens("cached_tokens") > 0


def test_same_seed_same_run(fast_run: DemoResult) -> None:
    again = asyncio.run(run_strategies(7, 6, latency_scale=FAST))

    def summary(result: DemoResult) -> list[Any]:
        return [
            (
                t.task_id,
                t.solved,
                t.steps,
                [r["target"] for r in t.ledger["records"]],
                [r["usage"] for r in t.ledger["records"]],
            )
            for s in result.strategies
            for t in s.tasks
        ]

    assert summary(again) == summary(fast_run)
    other = asyncio.run(run_strategies(8, 6, latency_scale=FAST))
    assert summary(other) != summary(fast_run)


def _conversation(task: Task, upto: int) -> list[dict[str, Any]]:
    """The messages of a run that followed the plan without a slip for `upto` steps."""
    workspace = Workspace(task)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "test"},
        {"role": "user", "content": task.message()},
    ]
    for index, action in enumerate(task.plan[:upto]):
        arguments = orjson.dumps(action.args).decode()
        call = {
            "id": f"call_{index}",
            "type": "function",
            "function": {"name": action.tool, "arguments": arguments},
        }
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append(
            {
                "role": "tool",
                "tool_call_id": f"call_{index}",
                "content": workspace.call(action.tool, arguments),
            }
        )
    return messages


def _slip_rate(task: Task, upto: int, role: str) -> float:
    messages = _conversation(task, upto)
    draws = [decide(task, messages, role, seed) for seed in range(400)]  # type: ignore[arg-type]
    return sum(step.wrong for step in draws) / len(draws)


def test_edge_slips_on_edits_and_recovery_more_than_on_reads() -> None:
    task = next(t for t in CATALOG if t.id == "fix-median")  # run_tests (fails), read, edit, ...
    assert [a.kind for a in task.plan[:3]] == ["test", "read", "edit"]
    edge_edit = _slip_rate(task, 2, "edge")
    edge_recover = _slip_rate(task, 1, "edge")  # the step after the failing test run
    edge_first = _slip_rate(task, 0, "edge")  # running the tests: as easy as a read
    cloud_edit = _slip_rate(task, 2, "cloud")
    assert edge_first < 0.12 < 0.3 < edge_edit < edge_recover
    assert cloud_edit < 0.08


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
        body: dict[str, Any] = {"model": "m", "messages": _conversation(task, 0), "tools": TOOLS}
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


def test_tasks_below_one_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_demo(seed=7, tasks=0, edge_vllm=True) == 2
    assert "--tasks must be at least 1" in capsys.readouterr().out

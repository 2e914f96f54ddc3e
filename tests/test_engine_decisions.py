"""What may overrule a strategy, in process: privacy, then the route's constraints (budgets,
cloud share and gap, the edge pin), then the x-tandem-target header, then the strategy; and
what the cloud is sent under each context mode. Cases of tests/test_strategies.py and
tests/test_trust_pipeline.py, without sockets."""

from __future__ import annotations

from typing import Any

import pytest

from router.notes import PIN
from router.result import Answer, Failure, StepResult
from tests.inprocess import InProcess, engine_settings, in_process

HI = [{"role": "user", "content": "hi"}]
EMAIL = "jane.doe@example.com"


def turns(count: int) -> list[dict[str, Any]]:
    """A history `count` steps long, so that each request is the trajectory's next step."""
    return [*HI, *[{"role": "assistant", "content": "ok"}, {"role": "user", "content": "go on"}] * count]


def route(allow_target_header: bool = True, **strategy: Any) -> Any:
    return engine_settings(routes={"tandem": strategy}, allow_target_header=allow_target_header)


async def step(env: InProcess, count: int, session: str = "s1", target: str | None = None) -> StepResult:
    headers = {"x-tandem-target": target} if target else {}
    return await env.run(session=session, headers=headers, messages=turns(count))


def decided(result: StepResult) -> tuple[str, str]:
    assert result.facts is not None
    return result.facts.target, result.facts.reason


# -- constraints ------------------------------------------------------------------------------


async def test_budget_in_calls_sends_the_rest_to_the_edge() -> None:
    async with in_process(route(strategy="cloud", constraints={"budget_calls": 2})) as env:
        results = [await step(env, i) for i in range(4)]
        assert [decided(r) for r in results] == [
            ("cloud", "route_fixed"),
            ("cloud", "route_fixed"),
            ("edge", "budget_exhausted"),
            ("edge", "budget_exhausted"),
        ]
        assert (len(env.cloud.received), len(env.edge.received)) == (2, 2)


async def test_budget_in_dollars_counts_what_was_spent() -> None:
    # 20 prompt + 5 completion tokens at 2.5 / 15 $ per M: $0.000125 a cloud call.
    async with in_process(route(strategy="cloud", constraints={"budget_usd": 0.0002})) as env:
        env.cloud.default = {"prompt_tokens": 20, "completion_tokens": 5}
        assert [decided(await step(env, i))[0] for i in range(2)] == ["cloud", "cloud"]
        assert decided(await step(env, 2)) == ("edge", "budget_exhausted")


async def test_budget_in_dollars_counts_inner_calls() -> None:
    # The cloud verifies each edge draft: 20 prompt + 5 completion tokens, $0.000125 a call.
    settings = route(strategy="draft_verify", verifier="cloud", constraints={"budget_usd": 0.0002})
    async with in_process(settings) as env:
        env.edge.default = {"prompt_tokens": 20, "completion_tokens": 5}
        env.cloud.default = {"prompt_tokens": 20, "completion_tokens": 5}
        env.cloud.push(
            {"text": "0.0", "prompt_tokens": 20, "completion_tokens": 5}
        )  # rejected: the cloud regenerates, $0.00025 in all
        assert decided(await step(env, 0)) == ("cloud", "draft_rejected")
        (first,) = await env.records("s1")
        assert [(c.purpose, c.target) for c in first.inner] == [("draft", "edge"), ("verify", "cloud")]
        assert first.cloud_spend_usd == pytest.approx(2 * 0.000125)
        # Without the verify call the spend would be $0.000125, under the budget.
        env.cloud.push({"text": "0.0"})
        assert decided(await step(env, 1)) == ("edge", "budget_exhausted")


async def test_max_share_and_min_gap() -> None:
    async with in_process(route(strategy="cloud", constraints={"max_cloud_share": 0.5})) as env:
        shares = [decided(await step(env, i))[0] for i in range(6)]
        assert shares == ["edge", "cloud", "edge", "cloud", "edge", "cloud"]
    async with in_process(route(strategy="cloud", constraints={"min_cloud_gap": 2})) as env:
        gaps = [decided(await step(env, i))[0] for i in range(6)]
        assert gaps == ["cloud", "edge", "edge", "cloud", "edge", "edge"]
        assert len(env.cloud.received) == 2


async def test_a_pinned_trajectory_stays_on_the_edge_even_when_it_is_down() -> None:
    async with in_process(route(strategy="cloud")) as env:
        await step(env, 0)
        await env.engine.tracker.store.note("s1", PIN, "edge")
        assert decided(await step(env, 1)) == ("edge", "pinned_edge")
        env.edge.push({"kind": "status", "status": 503})
        failed = await step(env, 2)
        assert isinstance(failed, Failure) and failed.status == 503
        assert len(env.cloud.received) == 1  # no failover to the cloud


# -- precedence: privacy > constraints > header > strategy -------------------------------------


@pytest.mark.parametrize(
    ("constraints", "reason"),
    [
        ({"budget_calls": 1}, "budget_exhausted"),
        ({"budget_usd": 0.0001}, "budget_exhausted"),
        ({"max_cloud_share": 0.2}, "max_cloud_share"),
        ({"min_cloud_gap": 5}, "min_cloud_gap"),
    ],
)
async def test_the_target_header_cannot_pass_the_route_constraints(constraints: dict[str, Any], reason: str) -> None:
    async with in_process(route(strategy="edge", constraints=constraints)) as env:
        env.cloud.default = {"prompt_tokens": 20, "completion_tokens": 5}
        results = [decided(await step(env, i, target="cloud")) for i in range(4)]
        if reason == "max_cloud_share":
            # A cloud step would make a share of 1/1, 1/2, 1/3, 1/4: over 0.2 each time.
            assert results == [("edge", reason)] * 4 and not env.cloud.received
        else:
            assert results == [("cloud", "header_forced")] + [("edge", reason)] * 3
            assert len(env.cloud.received) == 1


async def test_the_header_outranks_the_strategy_both_ways() -> None:
    async with in_process(route(strategy="cloud")) as env:
        assert decided(await step(env, 0, target="edge")) == ("edge", "header_forced")
        assert decided(await step(env, 1)) == ("cloud", "route_fixed")
    async with in_process(route(strategy="edge")) as env:
        assert decided(await step(env, 0, target="cloud")) == ("cloud", "header_forced")


async def test_the_header_is_ignored_where_it_is_not_allowed() -> None:
    async with in_process(route(allow_target_header=False, strategy="edge")) as env:
        assert decided(await step(env, 0, target="cloud")) == ("edge", "route_fixed")
        assert decided(await step(env, 1, target="moon")) == ("edge", "route_fixed")  # not even read
        assert not env.cloud.received


async def test_privacy_outranks_the_header_and_pins() -> None:
    async with in_process(route(strategy="cloud", privacy="keep_local")) as env:
        secret = [{"role": "user", "content": f"mail {EMAIL} the report"}]
        first = await env.run(session="private", headers={"x-tandem-target": "cloud"}, messages=secret)
        assert decided(first) == ("edge", "privacy_keep_local")
        trajectory = await env.engine.tracker.store.get("private")
        assert trajectory is not None and trajectory.notes[PIN] == "edge"
        again = await env.run(
            session="private",
            headers={"x-tandem-target": "cloud"},
            messages=[*secret, {"role": "assistant", "content": "ok"}],
        )
        assert decided(again)[0] == "edge" and decided(again)[1] in ("privacy_keep_local", "pinned_edge")
        assert not env.cloud.received


@pytest.mark.parametrize("forced", [None, "cloud"])
async def test_a_constraint_that_forbids_the_cloud_forbids_failing_over_to_it(forced: str | None) -> None:
    async with in_process(route(strategy="cloud", constraints={"budget_calls": 1})) as env:
        assert decided(await step(env, 0, target=forced))[0] == "cloud"
        env.edge.push({"kind": "status", "status": 503})
        failed = await step(env, 1, target=forced)
        assert isinstance(failed, Failure) and failed.status == 503
        assert decided(failed) == ("edge", "budget_exhausted")
        assert len(env.cloud.received) == 1  # the exhausted budget kept the failover off the cloud


async def test_a_step_forced_to_the_edge_never_fails_over_to_the_cloud() -> None:
    async with in_process(route(strategy="cloud", failover=True)) as env:
        env.edge.push({"kind": "status", "status": 500})
        failed = await step(env, 0, target="edge")
        assert isinstance(failed, Failure) and failed.status == 500
        assert decided(failed) == ("edge", "header_forced") and not env.cloud.received


@pytest.mark.parametrize("model", ["tandem", "tandem/edge"])
async def test_edge_routes_do_not_fail_over_to_the_cloud_by_default(model: str) -> None:
    async with in_process() as env:
        env.edge.push({"kind": "connect"})
        failed = await env.run(model=model)
        assert isinstance(failed, Failure) and failed.status == 503
        assert failed.facts is not None and failed.facts.target == "edge" and not env.cloud.received


async def test_an_edge_route_with_failover_true_fails_over() -> None:
    async with in_process(route(strategy="edge", failover=True)) as env:
        env.edge.push({"kind": "connect"})
        result = await env.run()
        assert isinstance(result, Answer) and (result.facts.target, result.facts.fallback) == ("cloud", True)
        assert len(env.cloud.received) == 1


# -- the cloud's context ----------------------------------------------------------------------


def history(steps: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}, {"role": "user", "content": "Fix it"}]
    for i in range(steps):
        arguments = f'{{"command": "step {i}"}}'
        call = {"id": f"c{i}", "type": "function", "function": {"name": "bash", "arguments": arguments}}
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"output {i}"},
        ]
    return messages


TOOLS = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]


async def test_context_last_k() -> None:
    async with in_process(route(strategy="cloud", context={"mode": "last_k", "k": 2})) as env:
        await env.run(messages=history(5), tools=TOOLS)
        sent = env.cloud.received[0].body
        assert sent["messages"][:2] == history(0)
        assert [m.get("content") for m in sent["messages"][2:] if m["role"] == "tool"] == ["output 3", "output 4"]
        assert sent["tools"] == TOOLS


async def test_context_last_k_applies_to_the_cloud_only() -> None:
    async with in_process(route(strategy="cloud", context={"mode": "last_k", "k": 2})) as env:
        env.cloud.push({"kind": "status", "status": 503})
        result = await env.run(messages=history(5))
        assert isinstance(result, Answer) and result.facts.fallback
        assert env.edge.received[0].body["messages"] == history(5)  # the failover got the whole history


async def test_context_flattened() -> None:
    async with in_process(route(strategy="cloud", context={"mode": "flattened"})) as env:
        await env.run(messages=history(3))
        sent = env.cloud.received[0].body["messages"]
        assert [m["role"] for m in sent] == ["system", "user"]
        assert "output 2" in sent[1]["content"] and "step 0" in sent[1]["content"]


async def test_context_summary_is_written_by_the_edge_and_cached() -> None:
    async with in_process(route(strategy="cloud", context={"mode": "summary", "k": 2})) as env:
        env.edge.push({"text": "Ran steps 0-2; tests fail in calc.add."})
        await env.run(messages=history(5))
        await env.run(messages=history(6))
        assert len(env.edge.received) == 1  # one summary, reused
        sent = env.cloud.received[1].body["messages"]
        assert "Ran steps 0-2" in sent[2]["content"]
        assert [m.get("content") for m in sent if m["role"] == "tool"] == ["output 4", "output 5"]
        first = (await env.records("s1"))[0]
        assert [(c.purpose, c.target) for c in first.inner] == [("summary", "edge")]

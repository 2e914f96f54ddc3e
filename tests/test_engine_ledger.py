"""The ledger and the step count in process: cost from the usage the upstream reported (cached
tokens at their price), an estimate flagged as such when it reported none, the all-cloud
counterfactual and the savings, inner calls charged to their step; client retries counted as
attempts of one step, and runs without a session id told apart. Cases of tests/test_chat.py,
tests/test_prompt_cache.py, tests/test_trajectories.py, tests/test_stitching.py and
tests/test_trust_pipeline.py, without sockets."""

from __future__ import annotations

from typing import Any

import pytest

from router.result import Answer, Failure, Stream
from tests.inprocess import drain, engine_settings, events, in_process

HI = [{"role": "user", "content": "hi"}]
TASK = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": "fix the failing test"}]
EDGE_IN, EDGE_CACHED, EDGE_OUT = 0.10, 0.10, 0.15
CLOUD_IN, CLOUD_CACHED, CLOUD_OUT = 2.50, 0.25, 15.0


def cloud_cost(prompt: int, cached: int, completion: int) -> float:
    return ((prompt - cached) * CLOUD_IN + cached * CLOUD_CACHED + completion * CLOUD_OUT) / 1e6


def edge_cost(prompt: int, completion: int) -> float:
    return (prompt * EDGE_IN + completion * EDGE_OUT) / 1e6


async def test_cost_is_the_reported_usage_at_the_targets_prices_cached_tokens_included() -> None:
    async with in_process(engine_settings(routes={"tandem": {"strategy": "cloud"}})) as env:
        env.cloud.push({"prompt_tokens": 3000, "cached_tokens": 2048, "completion_tokens": 40})
        await env.run()
        (record,) = await env.records("s1")
        assert record.usage is not None and record.usage.source == "upstream"
        assert (record.usage.prompt_tokens, record.usage.cached_tokens, record.usage.completion_tokens) == (
            3000,
            2048,
            40,
        )
        assert record.cost_usd == pytest.approx(cloud_cost(3000, 2048, 40), abs=1e-12)
        assert record.cloud_spend_usd == pytest.approx(record.cost_usd)


@pytest.mark.parametrize("stream", [False, True])
async def test_cached_tokens_past_the_prompt_are_charged_as_the_prompt_at_most(stream: bool) -> None:
    """A broken upstream's 500 cached tokens of a 30-token prompt were charged, all 500, at the
    cached price (and counted so in the record): 17 times the prompt's cost."""
    async with in_process(engine_settings(routes={"tandem": {"strategy": "cloud"}})) as env:
        env.cloud.push({"prompt_tokens": 30, "cached_tokens": 500, "completion_tokens": 4})
        result = await (env.run(stream=True, stream_options={"include_usage": True}) if stream else env.run())
        if isinstance(result, Stream):
            await drain(result)
        (record,) = await env.records("s1")
        assert record.usage is not None and record.usage.source == "upstream"
        assert (record.usage.prompt_tokens, record.usage.cached_tokens) == (30, 30)
        assert record.cost_usd == pytest.approx(cloud_cost(30, 30, 4), abs=1e-12)


async def test_an_edge_step_is_charged_at_edge_prices_and_saves_against_all_cloud() -> None:
    async with in_process() as env:
        env.edge.push({"prompt_tokens": 2000, "completion_tokens": 10})
        await env.run()
        (record,) = await env.records("s1")
        assert record.cost_usd == pytest.approx(edge_cost(2000, 10), abs=1e-12)
        assert record.counterfactual_usd == pytest.approx(cloud_cost(2000, 0, 10), abs=1e-12)
        assert record.savings_usd == pytest.approx(record.counterfactual_usd - record.cost_usd, abs=1e-12)
        assert record.cloud_spend_usd == 0


async def test_the_counterfactual_models_the_clouds_prompt_cache() -> None:
    async with in_process() as env:
        for n, prompt in enumerate((2000, 2500, 3000)):
            session = env.cloud if n == 2 else env.edge
            session.push({"prompt_tokens": prompt, "completion_tokens": 10, "cached_tokens": 0})
            headers = {"x-tandem-target": "cloud"} if n == 2 else {}
            await env.run(headers=headers, messages=[{"role": "user", "content": f"step with {prompt}"}])
        records = await env.records("s1")
        assert [r.counterfactual_cached_tokens for r in records] == [0, 1920, 2432]
        for record, (prompt, cached) in zip(records, ((2000, 0), (2500, 1920), (3000, 2432)), strict=True):
            assert record.counterfactual_usd == pytest.approx(cloud_cost(prompt, cached, 10), abs=1e-12)
        cloud_step = records[2]
        # The cloud never saw this run's prefix: it reports no cached tokens and is paid in full.
        assert cloud_step.cost_usd == pytest.approx(cloud_cost(3000, 0, 10), abs=1e-12)
        assert cloud_step.savings_usd < 0  # leaving the cloud cold cost more than all-cloud would have


async def test_a_plain_answer_without_usage_is_charged_an_estimate_flagged_as_such() -> None:
    async with in_process() as env:
        env.edge.push({"text": "a b c", "usage": False})
        result = await env.run()
        assert isinstance(result, Answer)
        (record,) = await env.records("s1")
        assert record.usage is not None and record.usage.source == "estimated"
        assert record.usage.prompt_tokens > 0 and record.cost_usd > 0


async def test_a_stream_without_usage_gets_an_estimated_usage_chunk() -> None:
    async with in_process() as env:
        env.edge.push({"text": "a b c", "usage": False})
        result = await env.run(stream=True)
        assert isinstance(result, Stream)
        chunks = events(await drain(result))
        assert chunks[-1] == "[DONE]"
        usage_chunk = chunks[-2]
        assert usage_chunk["choices"] == [] and usage_chunk["usage"]["tandem_estimated"] is True
        assert usage_chunk["usage"]["completion_tokens"] >= 3
        (record,) = await env.records("s1")
        assert record.usage is not None and record.usage.source == "estimated"


async def test_a_streams_reported_usage_is_relayed_and_charged() -> None:
    async with in_process(engine_settings(routes={"tandem": {"strategy": "cloud"}})) as env:
        env.cloud.push({"text": "a b c", "prompt_tokens": 500, "cached_tokens": 256, "completion_tokens": 3})
        result = await env.run(stream=True)
        assert isinstance(result, Stream)
        usage = [c["usage"] for c in events(await drain(result))[:-1] if c.get("usage")]
        assert usage == [
            {
                "prompt_tokens": 500,
                "completion_tokens": 3,
                "total_tokens": 503,
                "prompt_tokens_details": {"cached_tokens": 256},
            }
        ]
        (record,) = await env.records("s1")
        assert record.usage is not None and record.usage.source == "upstream"
        assert record.cost_usd == pytest.approx(cloud_cost(500, 256, 3), abs=1e-12)


async def test_inner_calls_are_charged_to_their_step() -> None:
    async with in_process(engine_settings(routes={"tandem": {"strategy": "draft_verify", "verifier": "cloud"}})) as env:
        # Rejected: the edge's draft and the cloud's verdict are inner calls; the cloud answers.
        env.edge.push({"kind": "tool_call", "prompt_tokens": 300, "completion_tokens": 20})
        env.cloud.push({"text": "0.1", "prompt_tokens": 400, "completion_tokens": 2})
        env.cloud.push({"prompt_tokens": 500, "completion_tokens": 30})
        result = await env.run()
        assert isinstance(result, Answer) and result.facts.reason == "draft_rejected"
        (record,) = await env.records("s1")
        draft, verify = record.inner
        assert (draft.purpose, draft.target) == ("draft", "edge")
        assert draft.cost_usd == pytest.approx(edge_cost(300, 20))
        assert (verify.purpose, verify.target) == ("verify", "cloud")
        assert verify.cost_usd == pytest.approx(cloud_cost(400, 0, 2))
        assert record.usage is not None and record.usage.prompt_tokens == 500  # the step's own call
        main = cloud_cost(500, 0, 30)
        assert record.cost_usd == pytest.approx(main + draft.cost_usd + verify.cost_usd)
        assert record.cloud_calls == 2 and record.cloud_spend_usd == pytest.approx(main + verify.cost_usd)

        # Accepted: the draft becomes the step's own call; the verdict stays an inner call.
        env.edge.push({"kind": "tool_call", "prompt_tokens": 300, "completion_tokens": 20})
        env.cloud.push({"text": "0.9", "prompt_tokens": 400, "completion_tokens": 2})
        accepted = await env.run(session="s2")
        assert isinstance(accepted, Answer) and accepted.facts.reason == "draft_accepted"
        (record,) = await env.records("s2")
        assert [c.purpose for c in record.inner] == ["verify"]
        assert record.usage is not None and record.usage.prompt_tokens == 300
        assert record.cost_usd == pytest.approx(edge_cost(300, 20) + cloud_cost(400, 0, 2))
        assert record.cloud_calls == 1


async def test_a_200_that_is_no_answer_fails_over_and_is_not_charged() -> None:
    for body in (b'{"error": {"message": "overloaded", "type": "server_error"}}', b"<html>Bad gateway</html>"):
        async with in_process(engine_settings(routes={"tandem": {"strategy": "edge", "failover": True}})) as env:
            env.edge.push({"kind": "raw", "body": body})
            result = await env.run()
            assert isinstance(result, Answer) and (result.facts.target, result.facts.fallback) == ("cloud", True)
            (record,) = await env.records("s1")
            assert record.cost_usd == pytest.approx(cloud_cost(100, 0, 10))  # the cloud's answer only


# -- steps, attempts and stitching --------------------------------------------------------------


async def test_a_client_retry_is_an_attempt_of_the_same_step() -> None:
    async with in_process() as env:
        env.edge.push({"kind": "status", "status": 500}, {"kind": "status", "status": 503}, {"text": "third time"})
        results = [await env.run(session="retrying", headers={"x-stainless-retry-count": str(n)}) for n in range(3)]
        assert [r.facts.step for r in results if r.facts] == [1, 1, 1]
        assert isinstance(results[2], Answer)
        assert results[2].completion["choices"][0]["message"]["content"] == "third time"
        records = await env.records("retrying")
        assert [(r.step, r.attempt, r.status) for r in records] == [(1, 1, "error"), (1, 2, "error"), (1, 3, "ok")]
        trajectory = await env.engine.tracker.store.get("retrying")
        assert trajectory is not None and trajectory.steps == 1 and trajectory.counts["errors"] == 2
        assert (trajectory.counts["edge_steps"], trajectory.counts["cloud_steps"]) == (1, 0)
        # Each attempt was sent as the client sent it; the retry header is not forwarded.
        assert len({repr(r.body) for r in env.edge.received}) == 1
        assert all("x-stainless-retry-count" not in r.headers for r in env.edge.received)


async def test_the_same_body_after_an_error_is_a_retry_and_a_longer_one_the_next_step() -> None:
    async with in_process() as env:
        env.edge.push({"kind": "status", "status": 503})
        failed = await env.run(session="same-body")
        assert isinstance(failed, Failure) and failed.status == 503
        again = await env.run(session="same-body")
        assert again.facts is not None and again.facts.step == 1
        longer = [*HI, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "next"}]
        nxt = await env.run(session="same-body", messages=longer)
        assert nxt.facts is not None and nxt.facts.step == 2


async def test_a_retry_keeps_the_target_its_first_attempt_drew() -> None:
    async with in_process(
        engine_settings(routes={"tandem": {"strategy": "random", "p": 0.5, "failover": False}})
    ) as env:
        env.edge.default = env.cloud.default = {"kind": "status", "status": 503}
        targets = {(await env.run(session="redraw", messages=TASK)).facts.target for _ in range(10)}  # type: ignore[union-attr]
        assert len(targets) == 1  # ten fresh draws would agree with probability 1/512
        assert len(await env.records("redraw")) == 10


def answered(result: Any) -> dict[str, Any]:
    assert isinstance(result, Answer)
    message: dict[str, Any] = result.completion["choices"][0]["message"]
    return {k: v for k, v in message.items() if v is not None}


async def test_runs_without_a_session_that_diverge_are_told_apart_by_their_answers() -> None:
    async with in_process() as env:
        env.edge.push({"text": "alpha"}, {"text": "beta"})
        run_a = await env.run(session=None, messages=TASK)
        run_b = await env.run(session=None, messages=TASK)  # the same body after A's answer: another run
        assert run_a.facts is not None and run_b.facts is not None
        a, b = run_a.facts.trajectory, run_b.facts.trajectory
        assert a != b and (run_a.facts.step, run_b.facts.step) == (1, 1)
        # B moves on first; each continues the trajectory that gave it its answer.
        b2 = await env.run(session=None, messages=[*TASK, answered(run_b), {"role": "user", "content": "next"}])
        a2 = await env.run(session=None, messages=[*TASK, answered(run_a), {"role": "user", "content": "next"}])
        assert a2.facts is not None and b2.facts is not None
        assert (a2.facts.trajectory, a2.facts.step, b2.facts.trajectory, b2.facts.step) == (a, 2, b, 2)


async def test_a_retry_of_step_one_without_a_session_stays_in_its_trajectory() -> None:
    async with in_process() as env:
        env.edge.push({"kind": "status", "status": 500})
        failed = await env.run(session=None, messages=TASK)
        assert isinstance(failed, Failure) and failed.status == 500
        retried = await env.run(session=None, messages=TASK)
        assert isinstance(retried, Answer)
        assert failed.facts is not None and retried.facts.trajectory == failed.facts.trajectory
        assert retried.facts.step == 1
        records = await env.records(retried.facts.trajectory)
        assert [(r.attempt, r.status) for r in records] == [(1, "error"), (2, "ok")]


async def test_cache_control_markers_moved_each_step_do_not_split_a_run() -> None:
    """SWE-agent moves Anthropic cache_control markers onto the latest messages every step, and
    sends string content one step and a list of parts the next."""
    marked = {"type": "ephemeral"}
    history: list[dict[str, Any]] = [
        {"role": "system", "content": [{"type": "text", "text": "You are an agent.", "cache_control": marked}]},
        {"role": "user", "content": [{"type": "text", "text": "fix it", "cache_control": marked}]},
    ]
    async with in_process() as env:
        ids = []
        for step in range(3):
            result = await env.run(session=None, messages=[dict(m) for m in history])
            assert result.facts is not None and result.facts.step == step + 1
            ids.append(result.facts.trajectory)
            for message in history:  # the markers move on: the old messages lose theirs
                if isinstance(message["content"], list):
                    message["content"] = message["content"][0]["text"]
            part = {"type": "text", "text": f"output {step}", "cache_control": marked}
            history += [answered(result), {"role": "user", "content": [part]}]
        assert len(set(ids)) == 1


# -- a step's target: the one that answered it ---------------------------------------------------


def steps_metric(env: Any, target: str, reason: str, status: str = "ok") -> float:
    return env.metric("tandem_steps_total", route="tandem", target=target, reason=reason, status=status)


async def test_a_failover_step_counts_under_the_target_that_answered_it() -> None:
    """Decided cloud, answered by the edge: edge in the ledger's totals, the metrics' step count
    and the record (which keeps the decision and the failed call's kind)."""
    async with in_process(engine_settings(routes={"tandem": {"strategy": "cloud", "failover": True}})) as env:
        env.cloud.push({"kind": "status", "status": 503})
        env.edge.push({"text": "from the edge"})
        result = await env.run(session="over")
        assert isinstance(result, Answer) and (result.facts.target, result.facts.fallback) == ("edge", True)
        (record,) = await env.records("over")
        assert (record.answered_by, record.decided, record.fallback) == ("edge", "cloud", True)
        assert record.failures == [("cloud", "status", 503)]
        shown = record.as_dict()
        assert shown["failures"] == [{"target": "cloud", "kind": "status", "http_status": 503}]
        assert (shown["decided"], shown["answered_by"]) == ("cloud", "edge")
        trajectory = await env.engine.tracker.store.get("over")
        assert trajectory is not None
        assert (trajectory.counts["edge_steps"], trajectory.counts["cloud_steps"]) == (1, 0)
        assert trajectory.cloud_share == 0 and trajectory.counts["last_cloud_step"] == 0
        assert steps_metric(env, "edge", "route_fixed") == 1
        assert steps_metric(env, "cloud", "route_fixed") == 0


async def test_blocked_and_failed_steps_count_as_neither_target() -> None:
    block = {"strategy": "cloud", "privacy": "block", "failover": False}
    async with in_process(engine_settings(routes={"tandem": block})) as env:
        card = [{"role": "user", "content": "charge card 4111 1111 1111 1111"}]
        blocked = await env.run(session="neither", messages=card)
        assert isinstance(blocked, Failure) and blocked.status == 403
        env.cloud.push({"kind": "status", "status": 500})
        failed = await env.run(session="failed", messages=[{"role": "user", "content": "run the tests"}])
        assert isinstance(failed, Failure) and failed.status == 500
        records = [*await env.records("neither"), *await env.records("failed")]
        # The block is a refusal on purpose, the upstream's 500 a failure: neither answered.
        assert [(r.target, r.answered_by, r.status) for r in records] == [
            ("cloud", "none", "refused"),
            ("cloud", "none", "error"),
        ]
        assert [r.cloud_calls for r in records] == [0, 0]
        assert records[0].failures == [] and records[1].failures == [("cloud", "status", 500)]
        for trajectory_id in ("neither", "failed"):
            trajectory = await env.engine.tracker.store.get(trajectory_id)
            assert trajectory is not None and trajectory.steps == 1
            assert (trajectory.counts["edge_steps"], trajectory.counts["cloud_steps"]) == (0, 0)
            assert trajectory.cloud_share == 0
        # Each in its own total, in both the ledger and the metrics: the step-error alert reads errors only.
        blocked_run, failed_run = [await env.engine.tracker.store.get(t) for t in ("neither", "failed")]
        assert blocked_run is not None and failed_run is not None
        assert (blocked_run.counts["refused"], blocked_run.counts["errors"]) == (1, 0)
        assert (failed_run.counts["refused"], failed_run.counts["errors"]) == (0, 1)
        assert steps_metric(env, "none", "route_fixed", "refused") == 1
        assert steps_metric(env, "none", "route_fixed", "error") == 1
        assert steps_metric(env, "cloud", "route_fixed", "error") == 0
        assert env.metric("tandem_step_latency_seconds_count", target="none") == 2
        assert env.metric("tandem_step_latency_seconds_count", target="cloud") == 0


async def test_a_retried_step_counts_once_under_the_target_that_answered_its_retry() -> None:
    """A step whose first attempt failed on the cloud and whose retry the edge answered (after
    failing over) counts once, as edge; the same body sent again after that answer is an
    attempt of the same step and does not count it twice."""
    async with in_process(engine_settings(routes={"tandem": {"strategy": "cloud", "failover": True}})) as env:
        env.cloud.push({"kind": "status", "status": 400})  # a 4xx is relayed: no failover
        assert isinstance(await env.run(session="retried"), Failure)
        env.cloud.push({"kind": "status", "status": 503})
        assert isinstance(await env.run(session="retried", headers={"x-stainless-retry-count": "1"}), Answer)
        assert isinstance(await env.run(session="retried"), Answer)  # the same body again: attempt 3
        records = await env.records("retried")
        assert [(r.step, r.attempt, r.answered_by) for r in records] == [
            (1, 1, "none"),
            (1, 2, "edge"),
            (1, 3, "cloud"),
        ]
        trajectory = await env.engine.tracker.store.get("retried")
        assert trajectory is not None and trajectory.steps == 1
        assert (trajectory.counts["edge_steps"], trajectory.counts["cloud_steps"]) == (1, 0)
        # The metrics count what the ledger counts: the failed attempt under none, the answer
        # under edge, and the answer sent again as a repeat, not a step.
        steps = env.metric_sum("tandem_steps_total", route="tandem")
        assert (steps["none"], steps["edge"], steps.get("cloud", 0.0)) == (1, 1, 0)
        assert env.metric("tandem_step_repeats_total", route="tandem", target="cloud") == 1

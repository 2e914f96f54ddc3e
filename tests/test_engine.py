"""The engine in process (no sockets, no HTTP): each pipeline case as `Engine.run` returns it,
an `Answer`, a `Stream` or a `Failure` with the step's facts, and the step's one record.
The upstreams are scripted sessions (tests/inprocess.py)."""

from __future__ import annotations

import asyncio

import orjson
import pytest

from router.protocol.chat import parse_chat_request
from router.result import Answer, Failure, StepMeta, Stream
from tests.inprocess import drain, engine_settings, in_process

HI = [{"role": "user", "content": "hi"}]


async def test_an_answer_carries_its_facts_and_its_record() -> None:
    async with in_process() as env:
        result = await env.run()
        assert isinstance(result, Answer)
        assert (result.facts.target, result.facts.route, result.facts.reason) == ("edge", "tandem", "route_fixed")
        assert (result.facts.trajectory, result.facts.step, result.facts.fallback) == ("s1", 1, False)
        # The parsed answer and the bytes the chat surface sends are the same answer.
        assert result.completion == orjson.loads(result.body)
        assert result.completion["choices"][0]["message"]["content"] == "edge-model says hi"
        assert env.edge.received[0].body["model"] == "edge-model" and not env.cloud.received
        (record,) = await env.records("s1")
        assert (record.step, record.target, record.status, record.http_status) == (1, "edge", "ok", 200)
        assert record.usage is not None and record.usage.prompt_tokens == 100


async def test_steps_of_one_session_are_numbered_and_a_new_session_starts_at_one() -> None:
    async with in_process() as env:
        history = list(HI)
        steps = []
        for n in range(3):
            steps.append(await env.run(messages=history))
            history = [*history, {"role": "assistant", "content": f"a{n}"}, {"role": "user", "content": f"u{n}"}]
        again = await env.run(messages=history[:-2])  # the same body again: a retry of step 3
        other = await env.run(session="s2")
        assert [s.facts.step for s in steps if isinstance(s, Answer)] == [1, 2, 3]
        assert isinstance(again, Answer) and again.facts.step == 3
        assert isinstance(other, Answer) and other.facts.step == 1
        assert [(r.step, r.attempt) for r in await env.records("s1")] == [(1, 1), (2, 1), (3, 1), (3, 2)]


async def test_a_stream_relays_the_chunks_and_records_the_reported_usage() -> None:
    async with in_process() as env:
        result = await env.run(stream=True)
        assert isinstance(result, Stream) and result.facts.target == "edge"
        data = await drain(result)
        assert data.endswith(b"data: [DONE]\n\n") and b"edge-model" in data
        # The usage chunk was asked of the upstream for the ledger.
        assert env.edge.received[0].body["stream_options"] == {"include_usage": True}
        (record,) = await env.records("s1")
        assert record.status == "ok" and record.usage is not None and record.usage.source != "estimated"


async def test_a_stream_never_read_is_closed_and_recorded_cancelled() -> None:
    # The client left before the relay began: the HTTP layer only closes the stream.
    async with in_process() as env:
        result = await env.run(stream=True)
        assert isinstance(result, Stream)
        await result.close()
        response = env.edge.received[0].response
        assert response is not None and response.closed  # the upstream's generation is stopped
        (record,) = await env.records("s1")
        assert record.status == "cancelled" and record.usage is not None and record.usage.source == "estimated"


async def test_a_failed_target_fails_over_to_the_other() -> None:
    async with in_process(engine_settings(routes={"tandem": {"strategy": "cloud"}})) as env:
        env.cloud.push({"kind": "status", "status": 503})
        result = await env.run()
        assert isinstance(result, Answer)
        assert (result.facts.target, result.facts.fallback) == ("edge", True)
        assert result.facts.headers()["x-tandem-fallback"] == "true"
        (record,) = await env.records("s1")
        assert (record.target, record.fallback) == ("edge", True)


async def test_an_edge_route_never_fails_over_and_relays_the_upstream_error() -> None:
    async with in_process() as env:
        env.edge.push({"kind": "status", "status": 503, "text": "edge is busy"})
        result = await env.run()
        assert isinstance(result, Failure) and result.status == 503
        assert result.facts is not None and result.facts.target == "edge"
        assert result.body is not None and b"edge is busy" in result.body  # relayed as it was
        assert result.error["message"] == "edge is busy"
        assert not env.cloud.received


async def test_no_upstream_reachable_is_a_503_with_retry_after() -> None:
    async with in_process(engine_settings(routes={"tandem": {"strategy": "cloud"}})) as env:
        env.cloud.push({"kind": "connect"})
        env.edge.push({"kind": "connect"})
        result = await env.run()
        assert isinstance(result, Failure) and result.status == 503
        assert result.error["code"] == "upstream_unavailable" and "Retry-After" in result.all_headers()
        assert result.all_headers()["x-tandem-route"] == "tandem"
        (record,) = await env.records("s1")
        assert (record.status, record.http_status) == ("error", 503)


async def test_a_200_that_is_no_answer_is_a_502() -> None:
    async with in_process() as env:
        env.edge.push({"kind": "raw", "body": b"<html>oops</html>"})
        result = await env.run()
        assert isinstance(result, Failure) and result.status == 502
        assert result.error["code"] == "upstream_invalid_answer" and result.body is None
        (record,) = await env.records("s1")
        assert record.usage is None and record.cost_usd == 0  # not charged


async def test_an_upstream_refusal_of_the_request_is_relayed_not_failed_over() -> None:
    async with in_process(engine_settings(routes={"tandem": {"strategy": "cloud"}})) as env:
        env.cloud.push({"kind": "status", "status": 400, "text": "max_tokens is too large"})
        result = await env.run()
        assert isinstance(result, Failure) and result.status == 400
        assert result.error["message"] == "max_tokens is too large"
        assert not env.edge.received


async def test_an_unknown_model_is_refused_before_it_is_a_step() -> None:
    async with in_process() as env:
        result = await env.run(model="gpt-9")
        assert isinstance(result, Failure) and result.status == 404 and result.facts is None
        assert result.error["code"] == "model_not_found" and "tandem" in result.error["message"]
        assert not env.edge.received and await env.records("s1") == []


async def test_a_bad_target_header_is_a_400_naming_it() -> None:
    settings = engine_settings(allow_target_header=True)
    async with in_process(settings) as env:
        result = await env.run(headers={"x-tandem-target": "moon"})
        assert isinstance(result, Failure) and result.status == 400
        assert "x-tandem-target" in result.error["message"]
        forced = await env.run(headers={"x-tandem-target": "cloud"})
        assert isinstance(forced, Answer) and (forced.facts.target, forced.facts.reason) == ("cloud", "header_forced")


async def test_redaction_sends_placeholders_to_the_cloud_and_restores_the_answer() -> None:
    settings = engine_settings(routes={"tandem": {"strategy": "cloud", "privacy": "redact"}})
    async with in_process(settings) as env:
        env.cloud.push({"kind": "text", "text": "I will write to [EMAIL_1] now"})
        messages = [{"role": "user", "content": "mail ada.lovelace@example.org the report"}]
        result = await env.run(messages=messages)
        sent = orjson.dumps(env.cloud.received[0].body)
        assert b"ada.lovelace@example.org" not in sent and b"[EMAIL_1]" in sent
        assert isinstance(result, Answer)
        assert result.completion["choices"][0]["message"]["content"] == "I will write to ada.lovelace@example.org now"
        assert b"ada.lovelace@example.org" in result.body  # the chat surface's bytes agree


async def test_a_blocked_step_is_a_403_with_its_record() -> None:
    settings = engine_settings(routes={"tandem": {"strategy": "cloud", "privacy": "block"}})
    async with in_process(settings) as env:
        result = await env.run(messages=[{"role": "user", "content": "my card is 4111 1111 1111 1111"}])
        assert isinstance(result, Failure) and result.status == 403
        assert result.error["code"] == "privacy_blocked" and result.facts is not None
        assert not env.cloud.received and not env.edge.received
        (record,) = await env.records("s1")
        # Refused on purpose by the route's policy, not failed: the step-error alert counts errors only.
        assert (record.status, record.http_status, record.answered_by) == ("refused", 403, "none")
        steps = {"route": "tandem", "target": "none", "reason": "route_fixed"}
        assert env.metric("tandem_steps_total", **steps, status="refused") == 1
        assert env.metric("tandem_steps_total", **steps, status="error") == 0


async def test_a_cancelled_step_stops_its_upstream_and_is_recorded() -> None:
    # What a client that leaves does to the step (the HTTP layer cancels the task).
    async with in_process() as env:
        env.edge.push({"kind": "hang"})
        task = asyncio.ensure_future(env.run())
        for _ in range(100):
            await asyncio.sleep(0.005)
            if env.edge.received:
                break
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        response = env.edge.received[0].response
        assert response is not None and response.closed
        (record,) = await env.records("s1")
        assert (record.status, record.http_status) == ("cancelled", 499)
        assert record.usage is not None and record.usage.source == "estimated"


async def test_on_begun_is_called_once_the_step_is_counted() -> None:
    async with in_process() as env:
        seen: list[int] = []

        def begun() -> None:
            seen.append(len(env.edge.received))  # before any upstream call

        request = parse_chat_request(orjson.dumps({"model": "tandem", "messages": HI}))
        result = await env.engine.run(request, StepMeta({"x-session-id": "b"}, "", on_begun=begun))
        assert isinstance(result, Answer) and seen == [0]
        refused = parse_chat_request(orjson.dumps({"model": "nope", "messages": HI}))
        await env.engine.run(refused, StepMeta({}, "", on_begun=begun))
        assert seen == [0]  # a refused request never begins


async def test_the_body_goes_as_the_client_sent_it_with_the_model_swapped() -> None:
    async with in_process() as env:
        await env.run(temperature=0.25, custom={"kept": [1, 2]})
        body = env.edge.received[0].body
        assert body == {
            "model": "edge-model",
            "messages": HI,
            "temperature": 0.25,
            "custom": {"kept": [1, 2]},
        }

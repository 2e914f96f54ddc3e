"""Failover and failing upstreams in process: each kind of failure before the first byte (a
refused connection, a first-byte timeout, an answer that is no answer, a retryable status),
errors relayed unchanged, and streams that fail after it (a cut, an idle gap) ending with an
error event and an `error` record. Cases of tests/test_failover.py and
tests/test_trust_pipeline.py, without sockets."""

from __future__ import annotations

import asyncio

import pytest

from router.result import Answer, Failure, Stream
from router.settings import Settings
from tests.inprocess import drain, engine_settings, events, in_process

EDGE_FAILS_OVER = {"tandem": {"strategy": "edge", "failover": True}}


def failing_over(**timeouts: float) -> Settings:
    overrides = {"edge": {"timeouts": {"connect": 1, "first_byte": 5, "idle": 2, **timeouts}}}
    return engine_settings(routes=EDGE_FAILS_OVER, upstream_overrides=overrides)


async def test_a_refused_connection_fails_over_to_the_other_target() -> None:
    async with in_process(engine_settings(routes=EDGE_FAILS_OVER)) as env:
        env.edge.push({"kind": "connect"})
        env.cloud.push({"text": "from the cloud"})
        result = await env.run()
        assert isinstance(result, Answer)
        assert result.completion["choices"][0]["message"]["content"] == "from the cloud"
        assert (result.facts.target, result.facts.fallback, result.facts.reason) == ("cloud", True, "route_fixed")
        assert env.cloud.received[0].body["model"] == "cloud-model"
        (record,) = await env.records("s1")
        assert (record.target, record.fallback, record.status) == ("cloud", True, "ok")
        assert env.metric("tandem_upstream_errors_total", upstream="edge", kind="connect") == 1
        fallback = {"route": "tandem", "from_target": "edge", "to_target": "cloud", "kind": "connect"}
        assert env.metric("tandem_fallbacks_total", **fallback) == 1


@pytest.mark.parametrize("status", [429, 500, 503])
async def test_a_retryable_status_fails_over(status: int) -> None:
    async with in_process(engine_settings(routes=EDGE_FAILS_OVER)) as env:
        env.edge.push({"kind": "status", "status": status})
        result = await env.run()
        assert isinstance(result, Answer) and result.facts.fallback
        assert len(env.edge.received) == 1 and len(env.cloud.received) == 1
        assert env.cloud.received[0].body == {**env.edge.received[0].body, "model": "cloud-model"}
        assert env.metric("tandem_upstream_errors_total", upstream="edge", kind="status") == 1


@pytest.mark.parametrize("stream", [False, True])
async def test_a_first_byte_timeout_fails_over_and_stops_the_hung_call(stream: bool) -> None:
    async with in_process(failing_over(first_byte=0.05)) as env:
        env.edge.push({"kind": "hang"})
        result = await env.run(stream=stream)
        assert result.facts is not None and result.facts.fallback and result.facts.target == "cloud"
        if isinstance(result, Stream):
            assert events(await drain(result))[-1] == "[DONE]" and env.cloud.received[0].body["stream"]
        hung = env.edge.received[0].response
        assert hung is not None and hung.closed  # the hung upstream request was cancelled
        assert env.metric("tandem_upstream_errors_total", upstream="edge", kind="timeout") == 1


async def test_a_delay_past_the_first_byte_timeout_fails_over() -> None:
    async with in_process(failing_over(first_byte=0.05)) as env:
        env.edge.push({"delay": 10})
        result = await env.run()
        assert isinstance(result, Answer) and result.facts.fallback
        assert env.metric("tandem_upstream_errors_total", upstream="edge", kind="timeout") == 1


async def test_a_delay_within_the_timeout_is_waited_for_and_timed() -> None:
    async with in_process(failing_over()) as env:
        env.edge.push({"delay": 0.05, "text": "slow but sure"})
        result = await env.run()
        assert isinstance(result, Answer) and not result.facts.fallback and not env.cloud.received
        (record,) = await env.records("s1")
        assert record.ttft_s >= 0.05 and record.latency_s >= 0.05


@pytest.mark.parametrize(
    "body",
    [b'{"error": {"message": "overloaded", "type": "server_error"}}', b"<html>Bad gateway</html>", b'{"choices": ['],
)
async def test_a_200_that_is_no_answer_fails_over(body: bytes) -> None:
    async with in_process(engine_settings(routes=EDGE_FAILS_OVER)) as env:
        env.edge.push({"kind": "raw", "body": body})
        result = await env.run()
        assert isinstance(result, Answer) and (result.facts.target, result.facts.fallback) == ("cloud", True)
        assert env.metric("tandem_upstream_errors_total", upstream="edge", kind="invalid_answer") == 1


async def test_a_streamed_step_fails_over_when_the_stream_dies_before_its_first_byte() -> None:
    async with in_process(engine_settings(routes=EDGE_FAILS_OVER)) as env:
        env.edge.push({"kind": "drop", "after": 0})
        env.cloud.push({"text": "rescued"})
        result = await env.run(stream=True)
        assert isinstance(result, Stream) and result.facts.fallback
        data = await drain(result)
        assert b"rescued" in data and events(data)[-1] == "[DONE]"
        assert env.metric("tandem_upstream_errors_total", upstream="edge", kind="disconnected") == 1


async def test_a_client_error_is_relayed_unchanged_without_failover() -> None:
    body = (
        b'{"error": {"message": "This model\'s maximum context length is 2048 tokens. However, your prompt'
        b' contains 4000", "type": "BadRequestError", "param": "input_tokens", "code": 400}}'
    )
    async with in_process(engine_settings(routes=EDGE_FAILS_OVER)) as env:
        env.edge.push({"kind": "raw", "status": 400, "body": body})
        result = await env.run()
        assert isinstance(result, Failure) and result.status == 400 and result.body == body
        assert result.facts is not None and result.facts.target == "edge" and not env.cloud.received


async def test_failover_off_relays_the_upstream_error_with_retry_after() -> None:
    async with in_process(engine_settings(routes={"tandem": {"strategy": "edge", "failover": False}})) as env:
        env.edge.push({"kind": "status", "status": 429, "text": "slow down", "retry_after": 7})
        result = await env.run()
        assert isinstance(result, Failure) and result.status == 429
        assert result.error["message"] == "slow down" and result.all_headers()["Retry-After"] == "7"
        assert not env.cloud.received


@pytest.mark.parametrize("stream", [False, True])
async def test_the_edges_refusal_after_the_cloud_failed_does_not_hide_the_clouds_429(stream: bool) -> None:
    # A long history the cloud was chosen for: the cloud is rate-limited, and the edge (its
    # smaller context) refuses the request. The client gets the 429 to retry, not a context
    # error that would make an agent condense its history.
    routes = {"tandem": {"strategy": "cloud", "failover": True}}
    async with in_process(engine_settings(routes=routes)) as env:
        env.cloud.push({"kind": "status", "status": 429, "text": "slow down", "retry_after": 7})
        context = b'{"error": {"message": "maximum context length is 8192 tokens", "type": "BadRequestError"}}'
        env.edge.push({"kind": "raw", "status": 400, "body": context})
        result = await env.run(stream=stream)
        assert isinstance(result, Failure) and result.status == 429
        assert result.error["message"] == "slow down" and result.all_headers()["Retry-After"] == "7"
        assert len(env.edge.received) == 1
        (record,) = await env.records("s1")
        assert (record.status, record.http_status, record.target, record.fallback) == ("error", 429, "edge", True)
        assert [(t, k, s) for t, k, s in record.failures] == [("cloud", "status", 429), ("edge", "status", 400)]
        assert "maximum context length" in (record.error or "")


async def test_the_clouds_refusal_after_the_edge_failed_is_relayed() -> None:
    # The other way round the cloud's 4xx is about the request itself: relayed as it said it.
    async with in_process(engine_settings(routes=EDGE_FAILS_OVER)) as env:
        env.edge.push({"kind": "status", "status": 503})
        env.cloud.push({"kind": "raw", "status": 400, "body": b'{"error": {"message": "bad tool schema"}}'})
        result = await env.run()
        assert isinstance(result, Failure) and result.status == 400
        assert result.error["message"] == "bad tool schema"


async def test_both_targets_down_is_a_503_naming_both() -> None:
    async with in_process(engine_settings(routes=EDGE_FAILS_OVER)) as env:
        env.edge.push({"kind": "connect"})
        env.cloud.push({"kind": "connect"})
        result = await env.run(stream=True)
        assert isinstance(result, Failure) and result.status == 503
        assert result.error["code"] == "upstream_unavailable"
        assert "edge" in result.error["message"] and "cloud" in result.error["message"]
        headers = result.all_headers()
        assert headers["Retry-After"] == "5" and headers["x-tandem-fallback"] == "true"
        (record,) = await env.records("s1")
        assert (record.status, record.http_status, record.cost_usd) == ("error", 503, 0.0)


async def test_the_upstream_key_reaches_the_upstream_but_never_the_result(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_CLOUD_KEY", "sk-secret-cloud-key")
    settings = engine_settings(
        routes={"tandem": {"strategy": "cloud", "failover": False}},
        upstream_overrides={"cloud": {"api_key_env": "TEST_CLOUD_KEY"}},
    )
    async with in_process(settings) as env:
        env.cloud.push({"kind": "status", "status": 401, "text": "bad key"})
        result = await env.run()
        assert env.cloud.received[0].headers["Authorization"] == "Bearer sk-secret-cloud-key"
        # The gateway's key was refused: a 502 of the gateway's setting, not the client's 401.
        assert isinstance(result, Failure) and result.status == 502
        assert "refused the gateway's key" in result.error["message"]
        assert "sk-secret" not in repr(result) and not env.edge.received


async def test_a_stream_cut_mid_way_ends_with_an_error_event_and_an_error_record() -> None:
    async with in_process(engine_settings(routes=EDGE_FAILS_OVER)) as env:
        env.edge.push({"kind": "drop", "after": 3, "text": "a b c d e f"})
        result = await env.run(stream=True)
        assert isinstance(result, Stream) and not result.facts.fallback  # past the first byte: no failover
        chunks = events(await drain(result))
        assert chunks[-1] == "[DONE]"
        error = chunks[-2]["error"]
        assert error["code"] == "upstream_stream_failed" and "edge" in error["message"]
        texts = [c["choices"][0]["delta"].get("content") for c in chunks[:-2] if c.get("choices")]
        assert "".join(t or "" for t in texts) == "a b"  # what came before the cut was relayed
        assert not env.cloud.received
        (record,) = await env.records("s1")
        assert record.status == "error" and "mid-stream" in (record.error or "")


async def test_an_idle_gap_ends_the_stream_with_an_error_event() -> None:
    async with in_process(failing_over(idle=0.05)) as env:
        env.edge.push({"kind": "stall", "after": 2})
        result = await env.run(stream=True)
        assert isinstance(result, Stream)
        chunks = events(await drain(result))
        assert chunks[-1] == "[DONE]" and chunks[-2]["error"]["code"] == "upstream_idle_timeout"
        response = env.edge.received[0].response
        assert response is not None and response.closed
        (record,) = await env.records("s1")
        assert record.status == "error"


async def test_a_client_leaving_mid_stream_is_charged_an_estimate() -> None:
    async with in_process() as env:
        env.edge.push({"text": "w " * 200, "usage": False})
        result = await env.run(stream=True)
        assert isinstance(result, Stream)
        async for _ in result.chunks:
            break
        await result.close()
        response = env.edge.received[0].response
        assert response is not None and response.closed  # the upstream's generation is stopped
        (record,) = await env.records("s1")
        assert record.status == "cancelled" and record.usage is not None and record.usage.source == "estimated"
        assert record.cost_usd > 0


@pytest.mark.parametrize("stream", [False, True])
async def test_a_client_leaving_before_the_first_byte_is_charged_the_prompt_as_an_estimate(stream: bool) -> None:
    async with in_process() as env:
        env.edge.push({"delay": 10})
        task = asyncio.ensure_future(env.run(stream=stream))
        for _ in range(100):  # until the upstream has the request (a few loop turns)
            await asyncio.sleep(0)
            if env.edge.received:
                break
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        (record,) = await env.records("s1")
        assert record.status == "cancelled" and record.target == "edge"
        assert record.usage is not None and record.usage.source == "estimated"
        assert record.usage.completion_tokens == 0 and record.usage.prompt_tokens > 0 and record.cost_usd > 0
        assert isinstance(await env.run(session="after"), Answer)  # nothing was left behind


async def test_a_stream_cut_mid_way_is_charged_an_estimate() -> None:
    async with in_process(engine_settings(routes={"tandem": {"strategy": "cloud", "failover": False}})) as env:
        env.cloud.push({"kind": "drop", "after": 4, "text": "a b c d e f"})
        result = await env.run(stream=True)
        assert isinstance(result, Stream)
        await drain(result)
        (record,) = await env.records("s1")
        assert record.status == "error"
        assert record.usage is not None and record.usage.source == "estimated"
        assert record.usage.completion_tokens > 0 and record.cost_usd > 0


async def test_a_stream_of_keep_alive_comments_alone_fails_over_at_the_first_byte_timeout() -> None:
    """Comments are no answer: an upstream that sends `: keep-alive` and never an event held its
    step for the whole `timeouts.stream` (600 s) and never failed over."""
    async with in_process(failing_over(first_byte=1)) as env:
        env.edge.push({"kind": "keepalives"})
        env.cloud.push({"text": "rescued"})
        started = asyncio.get_running_loop().time()
        result = await env.run(stream=True)
        assert isinstance(result, Stream)
        data = await drain(result)
        assert b"rescued" in data and events(data)[-1] == "[DONE]"
        assert asyncio.get_running_loop().time() - started < 4
        assert (result.facts.target, result.facts.fallback) == ("cloud", True)
        assert env.metric("tandem_upstream_errors_total", upstream="edge", kind="timeout") == 1

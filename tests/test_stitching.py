"""Stitching requests without a session id as real clients send them (issue 14): per-request
markers and content shapes ignored, runs told from retries by what the gateway knows, retries
not counted as steps nor re-drawn. Real gateway and scripted upstreams, memory and Redis stores."""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import openai
import orjson
import pytest

from tests import both_stores
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, wait_until

MakeGateway = Callable[..., GatewayServer]
# Every test here runs against both stores: in memory, and a real redis-server.
make_gateway = both_stores.make_gateway
TASK = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": "fix the failing test"}]


@pytest.fixture()
def server(make_gateway: MakeGateway) -> GatewayServer:
    return make_gateway(routes={"tandem": {"strategy": "edge", "failover": False}})


def post(client: httpx.Client, server: GatewayServer, messages: list[dict[str, Any]], **extra: Any) -> httpx.Response:
    headers = extra.pop("headers", {})
    return client.post(
        f"{server.url}/v1/chat/completions", json={"model": "tandem", "messages": messages, **extra}, headers=headers
    )


def trajectory(client: httpx.Client, server: GatewayServer, trajectory_id: str) -> dict[str, Any]:
    detail: dict[str, Any] = {}

    def recorded() -> bool:
        detail.update(client.get(f"{server.url}/v1/trajectories/{trajectory_id}").json())
        return len(detail.get("records", [])) >= detail.get("steps", 0)

    assert wait_until(recorded)
    return detail


def answered(response: httpx.Response) -> dict[str, Any]:
    message: dict[str, Any] = response.json()["choices"][0]["message"]
    return {k: v for k, v in message.items() if v is not None}


def test_cache_control_markers_moved_each_step_do_not_split_a_run(server: GatewayServer, client: httpx.Client) -> None:
    """SWE-agent moves Anthropic cache_control markers onto the latest messages every step, and
    sends string content one step and a list of parts the next."""
    marked = {"type": "ephemeral"}
    history: list[dict[str, Any]] = [
        {"role": "system", "content": [{"type": "text", "text": "You are an agent.", "cache_control": marked}]},
        {"role": "user", "content": [{"type": "text", "text": "fix it", "cache_control": marked}]},
    ]
    ids = []
    for step in range(3):
        response = post(client, server, history)
        ids.append(response.headers["x-tandem-trajectory"])
        assert response.headers["x-tandem-step"] == str(step + 1)
        for message in history:  # the markers move on: the old messages lose theirs
            if isinstance(message["content"], list):
                message["content"] = message["content"][0]["text"]
        history += [
            answered(response),
            {"role": "user", "content": [{"type": "text", "text": f"output {step}", "cache_control": marked}]},
        ]
    assert len(set(ids)) == 1


def test_two_concurrent_runs_of_one_task_are_two_trajectories(
    server: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    edge.default = {"kind": "text", "text": "same answer", "delay": 0.4}  # both in flight at once
    with ThreadPoolExecutor(2) as pool:
        firsts = list(pool.map(lambda _: post(client, server, TASK), range(2)))
        histories = [[*TASK, answered(r), {"role": "user", "content": "go on"}] for r in firsts]
        seconds = list(pool.map(lambda h: post(client, server, h), histories))
    ids = {r.headers["x-tandem-trajectory"] for r in firsts}
    assert len(ids) == 2
    assert {r.headers["x-tandem-trajectory"] for r in seconds} == ids
    assert sorted(r.headers["x-tandem-step"] for r in seconds) == ["2", "2"]
    for trajectory_id in ids:
        assert trajectory(client, server, trajectory_id)["steps"] == 2


def test_runs_that_diverge_are_told_apart_by_the_answer_each_received(
    server: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    edge.push({"text": "alpha"}, {"text": "beta"})
    run_a = post(client, server, TASK)
    run_b = post(client, server, TASK)  # the same body after A's answer was delivered: another run
    a, b = run_a.headers["x-tandem-trajectory"], run_b.headers["x-tandem-trajectory"]
    assert a != b
    # B moves on first; each continues the trajectory that gave it its answer.
    b2 = post(client, server, [*TASK, answered(run_b), {"role": "user", "content": "next"}])
    a2 = post(client, server, [*TASK, answered(run_a), {"role": "user", "content": "next"}])
    assert (a2.headers["x-tandem-trajectory"], b2.headers["x-tandem-trajectory"]) == (a, b)


def streamed(client: httpx.Client, server: GatewayServer, messages: list[dict[str, Any]]) -> tuple[str, str]:
    """A streamed step: its trajectory id and the text the client put together from the deltas."""
    body = {"model": "tandem", "stream": True, "messages": messages}
    with client.stream("POST", f"{server.url}/v1/chat/completions", json=body) as response:
        trajectory_id = response.headers["x-tandem-trajectory"]
        raw = b"".join(response.iter_bytes())
    text = ""
    for line in raw.split(b"\n"):
        if line.startswith(b"data: {"):
            for choice in orjson.loads(line[6:]).get("choices", []):
                text += choice.get("delta", {}).get("content") or ""
    return trajectory_id, text


def test_streamed_runs_that_diverge_are_told_apart_by_the_answer_each_received(
    server: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    """A streamed answer is keyed as it goes by (the relay keeps no text for it): the key must be
    the one the client's resent message gives, leading and trailing whitespace included."""
    edge.push({"text": "  alpha one two three  \n"}, {"text": "\tbeta one two three "}, {"text": "gamma one two\n\n"})
    runs = [streamed(client, server, TASK) for _ in range(3)]
    assert len({trajectory_id for trajectory_id, _ in runs}) == 3
    # The newest run (its answer ends in whitespace) moves on first, then the middle one: a
    # key that differed from the resent message's would make the oldest candidate win.
    for trajectory_id, text in (runs[2], runs[1], runs[0]):
        history = [*TASK, {"role": "assistant", "content": text}, {"role": "user", "content": "next"}]
        assert post(client, server, history).headers["x-tandem-trajectory"] == trajectory_id, text


def test_a_retry_of_step_one_without_a_session_stays_in_its_trajectory(
    server: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    edge.push({"kind": "error", "status": 500})
    failed = post(client, server, TASK)
    assert failed.status_code == 500
    retried = post(client, server, TASK)
    assert retried.status_code == 200
    assert retried.headers["x-tandem-trajectory"] == failed.headers["x-tandem-trajectory"]
    assert retried.headers["x-tandem-step"] == "1"


def test_sdk_retries_are_attempts_not_steps(server: GatewayServer, edge: FakeUpstream, client: httpx.Client) -> None:
    edge.push({"kind": "error", "status": 500}, {"kind": "error", "status": 503}, {"text": "third time"})
    sdk = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=2)
    raw = sdk.chat.completions.with_raw_response.create(model="tandem", messages=TASK)  # type: ignore[arg-type]
    assert raw.parse().choices[0].message.content == "third time"
    assert wait_until(lambda: len(trajectory(client, server, raw.headers["x-tandem-trajectory"])["records"]) == 3)
    detail = trajectory(client, server, raw.headers["x-tandem-trajectory"])
    assert detail["steps"] == 1 and detail["errors"] == 2
    assert (detail["edge_steps"], detail["cloud_steps"]) == (1, 0)
    assert [r["attempt"] for r in detail["records"]] == [1, 2, 3]


def test_a_retry_gets_the_target_its_first_attempt_drew(
    make_gateway: MakeGateway, edge: FakeUpstream, cloud: FakeUpstream, client: httpx.Client
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "random", "p": 0.5, "failover": False}})
    edge.default = cloud.default = {"kind": "error", "status": 503}
    headers = {"X-Session-ID": "redraw"}
    targets = {post(client, server, TASK, headers=headers).headers["x-tandem-target"] for _ in range(10)}
    assert len(targets) == 1  # ten fresh draws would agree with probability 1/512


def test_the_audit_keeps_the_input_of_a_failed_cloud_attempt(
    make_gateway: MakeGateway, cloud: FakeUpstream, client: httpx.Client, tmp_path: Path
) -> None:
    path = tmp_path / "audit.jsonl"
    server = make_gateway(
        routes={"tandem": {"strategy": "cloud", "failover": False}}, audit={"mode": "content", "path": str(path)}
    )
    cloud.push({"kind": "error", "status": 500})
    assert post(client, server, TASK).status_code == 500
    assert wait_until(lambda: path.exists() and path.read_text().strip() != "")
    line = json.loads(path.read_text().splitlines()[0])
    assert line["status"] == "error" and line["input"] == TASK


def test_an_sdk_retry_while_its_first_attempt_is_in_flight_is_a_retry(
    server: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    """The SDK gave up waiting and retried (x-stainless-retry-count: 1) while the gateway still
    waits on the upstream: the same step, not another run."""
    edge.push({"text": "too slow", "delay": 1.5}, {"text": "in time"})
    sdk = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=1, timeout=0.5)
    raw = sdk.chat.completions.with_raw_response.create(model="tandem", messages=TASK)  # type: ignore[arg-type]
    assert raw.parse().choices[0].message.content == "in time"
    assert raw.headers["x-tandem-step"] == "1"
    assert edge.received[1].headers.get("x-stainless-retry-count") is None
    listed = client.get(f"{server.url}/v1/trajectories").json()["data"]
    assert [t["id"] for t in listed] == [raw.headers["x-tandem-trajectory"]]


@pytest.mark.parametrize("stream", [False, True])
def test_a_step_the_client_gave_up_on_and_sends_again_is_a_retry(
    server: GatewayServer, edge: FakeUpstream, client: httpx.Client, stream: bool
) -> None:
    """An agent's own retry loop (no retry header): the client timed out before any byte of the
    answer and left, then sends the same body again. The abandoned attempt is recorded
    `cancelled`; the body sent again is its retry, in the same run, not a run of its own."""
    edge.push({"text": "first"}, {"text": "too slow", "delay": 3.0}, {"text": "in time"})
    first = post(client, server, TASK)
    run = first.headers["x-tandem-trajectory"]
    history = [*TASK, answered(first), {"role": "user", "content": "the test still fails"}]
    with pytest.raises(httpx.TimeoutException):
        client.post(
            f"{server.url}/v1/chat/completions",
            json={"model": "tandem", "messages": history, "stream": stream},
            timeout=0.5,
        )
    assert wait_until(lambda: len(trajectory(client, server, run)["records"]) == 2)
    again = post(client, server, history)
    assert again.status_code == 200 and again.json()["choices"][0]["message"]["content"] == "in time"
    assert (again.headers["x-tandem-trajectory"], again.headers["x-tandem-step"]) == (run, "2")
    assert again.headers["x-tandem-stitch"] == "retry"
    detail = trajectory(client, server, run)
    assert [(r["step"], r["attempt"], r["status"]) for r in detail["records"]] == [
        (1, 1, "ok"),
        (2, 1, "cancelled"),
        (2, 2, "ok"),
    ]
    assert [t["id"] for t in client.get(f"{server.url}/v1/trajectories").json()["data"]] == [run]


def test_a_last_message_amended_with_an_error_continues_its_run_once(
    server: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    """smolagents reports a tool call that raised by appending the error to its last message and
    dropping the answer: that history continues the run answered at the shorter message (a
    rewrite), once; a task that merely begins with another run's task is another run."""
    edge.default = {"kind": "tool_call", "name": "write_file", "arguments": '{"path": "a/b"}', "call_id": "call_w"}
    first = post(client, server, TASK)
    run = first.headers["x-tandem-trajectory"]
    error = "\nError:\nError executing tool 'write_file': FileNotFoundError\nNow let's retry: take care not to"
    amended = [TASK[0], {"role": "user", "content": TASK[1]["content"] + error}]
    second = post(client, server, amended)
    assert (second.headers["x-tandem-trajectory"], second.headers["x-tandem-stitch"]) == (run, "rewritten")
    assert second.headers["x-tandem-step"] == "2"
    # The same amendment again is not that step's continuation a second time: another run.
    again = post(client, server, amended)
    assert again.headers["x-tandem-trajectory"] != run
    # Text appended without a line break (a longer task of its own) continues nothing.
    longer = post(client, server, [TASK[0], {"role": "user", "content": TASK[1]["content"] + " and the docs"}])
    assert longer.headers["x-tandem-trajectory"] not in (run, again.headers["x-tandem-trajectory"])
    assert longer.headers["x-tandem-stitch"] == "new"
    detail = trajectory(client, server, run)
    record = max(detail["records"], key=lambda r: r["step"])
    assert record["failed_before"] == 1  # read from the words appended (judge/status.py)


def test_a_history_given_an_answer_that_the_client_dropped_continues_its_run_once(
    server: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    """mini-swe-agent 2.x leaves a reply without a tool call out of its history and adds its
    format error after the history it was given: that request continues the run answered there
    (a rewrite), once; the same request again is another run."""
    edge.default = {"kind": "text", "text": "I think it is done."}
    run = post(client, server, TASK).headers["x-tandem-trajectory"]
    error = {"role": "user", "content": "Tool call error:\n\n<error>\nNo tool calls found in the response.\n</error>"}
    second = post(client, server, [*TASK, error])
    assert (second.headers["x-tandem-trajectory"], second.headers["x-tandem-stitch"]) == (run, "rewritten")
    again = post(client, server, [*TASK, error])
    assert again.headers["x-tandem-trajectory"] != run
    record = max(trajectory(client, server, run)["records"], key=lambda r: r["step"])
    assert (record["step"], record["failed_before"]) == (2, 1)

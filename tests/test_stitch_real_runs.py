"""Every real run is one trajectory (issue 30), through a real gateway, without session ids: real
public runs (tests/stitch_replay.py) played at once, step by step, streamed and not; runs of one
task with identical first requests and answers; retried steps; compacted, edited and
re-serialised histories. Each check reads the trajectory API: as many trajectories as runs, each
with its run's steps."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import httpx
import orjson
import pytest

from tests.fake_clock import FakeClock
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer
from tests.stitch_replay import Messages, Replay, Upstream, mini_swe_runs, steps_of, tau_runs

MakeGateway = Callable[..., GatewayServer]


@pytest.fixture()
def server(make_gateway: MakeGateway) -> GatewayServer:
    return make_gateway(routes={"tandem": {"strategy": "edge", "failover": False}})


def _replay(server: GatewayServer, edge: FakeUpstream, runs: list[Messages], **options: Any) -> Replay:
    upstream = Upstream(reasoning=options.pop("reasoning", False))
    edge.respond = upstream.respond
    return Replay(server.url, runs, upstream, **options)


def _check(replay: Replay, client: httpx.Client) -> None:
    replay.run_all()
    assert replay.problems(client) == []


def test_real_runs_at_once_streamed_and_not_are_one_trajectory_each(
    server: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    rng = random.Random(1)
    runs = [*mini_swe_runs(8), *tau_runs()]
    _check(_replay(server, edge, runs, stream=lambda run, step: rng.random() < 0.5), client)


def test_identical_runs_started_together_are_as_many_trajectories(
    server: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    """A deterministic agent on a deterministic model: every run twice, byte for byte, at once."""
    runs = [*mini_swe_runs(6), *tau_runs()[:6]]
    _check(_replay(server, edge, [*runs, *runs], stream=lambda run, step: step % 2 == 1), client)


@pytest.mark.parametrize("how", ["same", "header", "changed"])
def test_retried_steps_stay_attempts_of_their_step(
    server: GatewayServer, edge: FakeUpstream, client: httpx.Client, how: str
) -> None:
    rng = random.Random(2)
    # Runs whose first requests differ: the upstream fails an attempt by its history.
    firsts = {orjson.dumps(run[:2]): run for run in tau_runs()}
    runs = [*mini_swe_runs(5), *list(firsts.values())[:8]]
    _check(_replay(server, edge, runs, retry=lambda run, step: how if rng.random() < 0.3 else None), client)


def _compact_at(step: int, keep_last: int = 2) -> Callable[[Messages, int], Messages]:
    """From `step` on, the messages between the task and the last `keep_last` messages of that
    step's history replaced by a summary (a condenser, a compaction that keeps the last answer)."""

    def rewrite(messages: Messages, number: int) -> Messages:
        if number < step:
            return messages
        answers = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
        cut = answers[step - 1] + 2 - keep_last  # the history as it was at `step`, its tail kept
        summary = {"role": "user", "content": f"Summary of the conversation so far ({cut - 2} messages)."}
        return [*messages[:2], summary, *messages[cut:]]

    return rewrite


def _window(size: int) -> Callable[[Messages, int], Messages]:
    """A sliding window: every request keeps the first two messages and the last `size`."""

    def rewrite(messages: Messages, number: int) -> Messages:
        return messages if len(messages) <= size + 2 else [*messages[:2], *messages[-size:]]

    return rewrite


def _edit_task_at(step: int) -> Callable[[Messages, int], Messages]:
    def rewrite(messages: Messages, number: int) -> Messages:
        if number >= step:
            messages[1]["content"] = str(messages[1]["content"]) + "\n(edited: the file list was refreshed)"
        return messages

    return rewrite


@pytest.mark.parametrize(
    "rewrite",
    [_compact_at(3), _compact_at(4, keep_last=4), _window(6), _edit_task_at(3)],
    ids=["compact", "condense", "window", "edit"],
)
def test_rewritten_histories_stay_in_their_run(
    server: GatewayServer, edge: FakeUpstream, client: httpx.Client, rewrite: Callable[[Messages, int], Messages]
) -> None:
    runs = [*mini_swe_runs(7), *[r for r in tau_runs() if sum(m["role"] == "assistant" for m in r) >= 5][:6]]
    _check(_replay(server, edge, runs, rewrite=rewrite, stream=lambda run, step: step % 3 == 0), client)


def _reserialised(messages: Messages, number: int) -> Messages:
    """Answers as other SDKs resend them: keys in another order, arguments re-serialised with
    other whitespace, `content: null` left out or sent as "", text as a list of parts."""
    out = []
    for index, message in enumerate(messages):
        if message["role"] == "assistant":
            message = dict(reversed(list(message.items())))
            calls = message.get("tool_calls")
            if calls:
                message["tool_calls"] = [
                    {
                        "function": {
                            "arguments": orjson.dumps(orjson.loads(c["function"]["arguments"] or "{}")).decode()
                            if index % 2
                            else json.dumps(orjson.loads(c["function"]["arguments"] or "{}"), indent=1),
                            "name": c["function"]["name"],
                        },
                        "id": c["id"],
                        "type": "function",
                    }
                    for c in calls
                ]
                if message.get("content") is None:
                    if index % 2:
                        del message["content"]
                    else:
                        message["content"] = ""
            elif isinstance(message.get("content"), str) and index % 3 == 0:
                message["content"] = [{"type": "text", "text": message["content"]}]
        out.append(message)
    return out


def test_reserialised_answers_continue_their_run(
    server: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    runs = [*mini_swe_runs(5), *tau_runs()]
    replay = _replay(server, edge, runs, rewrite=_reserialised, reasoning=True, stream=lambda r, s: s % 2 == 0)
    _check(replay, client)


def _post(client: httpx.Client, server: GatewayServer, messages: Messages, **extra: Any) -> httpx.Response:
    headers = extra.pop("headers", {})
    body = {"model": "tandem", "messages": messages, **extra}
    return client.post(f"{server.url}/v1/chat/completions", json=body, headers={"Authorization": "Bearer k", **headers})


def _first_steps(count: int) -> list[tuple[Messages, dict[str, Any]]]:
    return steps_of(mini_swe_runs(count)[0])[:count]


def test_a_retry_that_changes_another_field_is_the_same_step(
    server: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    """A client retries a failed step with a lower `max_tokens`: its history is the failed
    attempt's, so it is stitched as that step's retry, and it is counted as that step too (it
    was counted as a step of its own: the stitch said `retry`, the step number moved on)."""
    steps = _first_steps(3)
    for number, (messages, answer) in enumerate(steps, 1):
        if number == 3:
            edge.push({"kind": "error", "status": 500})
            failed = _post(client, server, messages)
            assert failed.status_code == 500
            retried = _post(client, server, messages, max_tokens=1000, fake={"kind": "text", "text": answer["content"]})
            assert (retried.headers["x-tandem-stitch"], retried.headers["x-tandem-step"]) == ("retry", "3")
            continue
        response = _post(client, server, messages, fake={"kind": "text", "text": answer["content"]})
        assert response.headers["x-tandem-step"] == str(number)
    detail = client.get(f"{server.url}/v1/trajectories/{retried.headers['x-tandem-trajectory']}").json()
    assert detail["steps"] == 3


def test_a_retry_header_on_a_step_refused_before_it_was_stitched_is_a_new_step(
    make_gateway: MakeGateway, edge: FakeUpstream, client: httpx.Client
) -> None:
    """A step refused by the gateway's rate limit never reached the stitcher; the SDK sends it
    again with `x-stainless-retry-count: 1`. It extends its run as its next step (it was filed as
    another attempt of the step before it)."""
    clock = FakeClock()
    server = make_gateway(
        routes={"tandem": {"strategy": "edge", "failover": False}},
        client_api_keys=["k"],
        client_limits={"requests_per_minute": 2},
    )
    server.gateway.tracker.limits.clock = clock
    steps = _first_steps(3)
    ids = set()
    for number, (messages, answer) in enumerate(steps, 1):
        how = {"kind": "text", "text": answer["content"]}
        response = _post(client, server, messages, fake=how)
        if number == 3:
            assert response.status_code == 429
            clock.advance(60)
            response = _post(client, server, messages, fake=how, headers={"x-stainless-retry-count": "1"})
        assert response.status_code == 200
        assert (response.headers["x-tandem-step"], response.headers["x-tandem-stitch"]) == (
            str(number),
            "new" if number == 1 else "extended",
        )
        ids.add(response.headers["x-tandem-trajectory"])
    assert len(ids) == 1


def test_real_runs_through_the_messages_surface_are_one_trajectory_each(
    server: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    """The mini-swe-agent runs as an Anthropic client sends them (`/v1/messages`: the system
    prompt apart, text blocks), two of them twice, interleaved."""
    runs = mini_swe_runs(4)
    runs = [*runs, runs[0], runs[1]]
    upstream = Upstream()
    edge.respond = upstream.respond
    ids: dict[int, list[str]] = {index: [] for index in range(len(runs))}
    for number in range(4):
        for index, run in enumerate(runs):
            messages, answer = steps_of(run)[number]
            upstream.expect(messages, index, answer)
            body = {
                "model": "tandem",
                "max_tokens": 1024,
                "system": messages[0]["content"],
                "messages": [
                    {"role": m["role"], "content": [{"type": "text", "text": m["content"]}]} for m in messages[1:]
                ],
                "stream": number % 2 == 1,
            }
            response = client.post(f"{server.url}/v1/messages", json=body)
            assert response.status_code == 200, response.text
            assert response.headers["x-tandem-step"] == str(number + 1)
            ids[index].append(response.headers["x-tandem-trajectory"])
    # Runs 4 and 5 repeat runs 0 and 1 byte for byte: interchangeable, two trajectories each.
    assert all(len(set(steps)) == 1 for index, steps in ids.items() if index not in (0, 1, 4, 5))
    assert len({t for steps in ids.values() for t in steps}) == len(runs)
    listed = client.get(f"{server.url}/v1/trajectories").json()["data"]
    assert sorted(t["steps"] for t in listed) == [4] * len(runs)

"""Shadow labelling through a real gateway: the other target is asked a sampled step again after
its answer was sent; the agreement label reaches the judge rows; the client never notices; the
route's privacy, the daily budget (per process, or shared through Redis) and failures hold."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import httpx

from judge.features import FEATURE_VERSION, N_FEATURES
from router.cli import main as tandem_main
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, settings_for, wait_until

LS = {"kind": "tool_call", "name": "bash", "arguments": '{"command": "ls -la"}'}
PYTEST = {"kind": "tool_call", "name": "bash", "arguments": '{"command": "python -m pytest -q"}'}
EMAIL = "jane.doe@example.com"


def shadowed(strategy: str = "edge", rate: float = 1.0, budget: float = 5.0, **route: Any) -> dict[str, Any]:
    return {"tandem": {"strategy": strategy, "shadow": {"rate": rate, "budget_usd_per_day": budget}, **route}}


def step(client: httpx.Client, server: GatewayServer, session: str, content: str = "fix the bug") -> httpx.Response:
    body = {"model": "tandem", "messages": [{"role": "user", "content": content}]}
    response = client.post(f"{server.url}/v1/chat/completions", json=body, headers={"X-Session-ID": session})
    assert response.status_code == 200, response.text
    return response


def metric(client: httpx.Client, server: GatewayServer, series: str) -> float:
    text = client.get(f"{server.url}/metrics").text
    found = re.search(rf"^{re.escape(series)} (\S+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def shadow_calls(client: httpx.Client, server: GatewayServer, target: str, outcome: str) -> float:
    labels = f'outcome="{outcome}",route="tandem",target="{target}"'
    return metric(client, server, f"tandem_shadow_calls_total{{{labels}}}")


def notes(client: httpx.Client, server: GatewayServer, trajectory: str) -> dict[str, Any]:
    detail = client.get(f"{server.url}/v1/trajectories/{trajectory}").json()
    return detail


def test_a_sampled_step_is_asked_again_and_its_label_reaches_the_judge_rows(
    make_gateway: Any, edge: FakeUpstream, cloud: FakeUpstream, client: httpx.Client, tmp_path: Path
) -> None:
    """Any strategy (here a fixed edge route, which records no features): the shadow asks the
    cloud the same question, bounded and not streamed; the row gets its features, the label and
    `edge_wrong`; the shadow's dollars are in the cost metric as call="shadow", not in the run."""
    server = make_gateway(routes=shadowed("edge"))
    edge.push(LS, LS)
    cloud.push(LS, PYTEST)
    for index in range(2):
        messages = [{"role": "user", "content": "Fix the failing test in calc.py"}]
        if index:
            messages += [{"role": "assistant", "content": "looking"}, {"role": "user", "content": "go on"}]
        body = {"model": "tandem", "messages": messages, "stream": index == 1, "max_tokens": 99999}
        response = client.post(f"{server.url}/v1/chat/completions", json=body, headers={"X-Session-ID": "run"})
        assert response.status_code == 200
        assert not any("shadow" in key for key in response.headers)  # invisible to the client
    assert wait_until(lambda: len(cloud.received) == 2)
    asked = cloud.received[0].body
    assert asked["messages"][0]["content"] == "Fix the failing test in calc.py"
    assert asked["stream"] is False and asked["max_completion_tokens"] == 1024 and "max_tokens" not in asked and asked["model"] == "cloud-model"
    assert cloud.received[1].body["stream"] is False and "stream_options" not in cloud.received[1].body
    assert wait_until(lambda: shadow_calls(client, server, "cloud", "disagree") == 1)
    assert shadow_calls(client, server, "cloud", "agree") == 1
    shadow_cost = metric(client, server, 'tandem_cost_usd_total{call="shadow",route="tandem",target="cloud"}')
    assert shadow_cost == 2 * (20 * 2.50 + 5 * 15.0) / 1e6  # two cloud answers of 20 + 5 tokens
    detail = notes(client, server, "run")
    # Not in the trajectory's cost, its cloud spend or its savings: those are the steps' alone.
    assert detail["cost_usd"] == sum(record["cost_usd"] for record in detail["records"])
    assert detail["cloud_calls"] == 0 and detail["cloud_share"] == 0.0
    assert detail["savings_usd"] == sum(record["savings_usd"] for record in detail["records"])

    rows_file = tmp_path / "rows.jsonl"
    assert tandem_main(["trajectories", "export", "--url", server.url, "--judge-rows", "--out", str(rows_file)]) == 0
    rows = [json.loads(line) for line in rows_file.read_text().splitlines()]
    assert [row["step"] for row in rows] == [1, 2]
    first, second = rows
    assert first["shadow"] == {"target": "cloud", "action": "search", "agree": True, "cost_usd": shadow_cost / 2}
    assert second["shadow"]["action"] == "test" and second["shadow"]["agree"] is False
    assert [row["edge_wrong"] for row in rows] == [0, 1]
    assert (
        first["action"] == "search"
        and len(first["features"]) == N_FEATURES
        and first["feature_version"] == FEATURE_VERSION
    )
    steps_file = tmp_path / "steps.jsonl"
    assert tandem_main(["trajectories", "export", "--url", server.url, "--out", str(steps_file)]) == 0
    lines = [json.loads(line) for line in steps_file.read_text().splitlines()]
    assert lines[1]["shadow"]["agree"] is False and "features" not in lines[1]["shadow"]


class SentClock:
    """ASGI middleware: when each response's last byte was handed to the server."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.sent: list[float] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def timed(message: Any) -> None:
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                self.sent.append(time.monotonic())

        await self.app(scope, receive, timed)


def test_the_shadow_starts_after_the_answer_is_sent_and_a_hanging_one_delays_nothing(
    edge: FakeUpstream, cloud: FakeUpstream, client: httpx.Client
) -> None:
    clocks: list[SentClock] = []

    def wrap(app: Any) -> SentClock:
        clocks.append(SentClock(app))
        return clocks[-1]

    server = GatewayServer(settings_for(edge.base_url, cloud.base_url, routes=shadowed("edge")), wrap=wrap).start()
    plain = GatewayServer(settings_for(edge.base_url, cloud.base_url, routes={"tandem": {"strategy": "edge"}})).start()
    try:
        cloud.default = {"kind": "hang"}
        reference = step(client, plain, "plain")
        started = time.monotonic()
        for index in range(3):  # one keep-alive connection: a hanging shadow must not hold it
            response = step(client, server, "hung", f"step {index}")
            assert set(response.headers) == set(reference.headers)
        assert time.monotonic() - started < 2.0  # the shadows hang for an hour
        assert wait_until(lambda: len(cloud.received) == 3)
        answered = [t for t in clocks[0].sent]
        assert len(answered) >= 3
        # Each shadow call reached the cloud only after its step's answer had been sent.
        for sent, received in zip(answered[:3], cloud.received, strict=True):
            assert received.at > sent
        assert shadow_calls(client, server, "cloud", "failed") == 0  # still in flight
    finally:
        server.stop()  # drops the hanging shadow calls, quickly
        plain.stop()


def test_a_failed_shadow_is_counted_and_changes_nothing(
    make_gateway: Any, edge: FakeUpstream, cloud: FakeUpstream, client: httpx.Client
) -> None:
    server = make_gateway(routes=shadowed("cloud"))
    cloud.default = {"kind": "text", "text": "cloud answer"}
    edge.default = {"kind": "error", "status": 500}
    response = step(client, server, "failing")
    assert response.json()["choices"][0]["message"]["content"] == "cloud answer"
    assert wait_until(lambda: shadow_calls(client, server, "edge", "failed") == 1)
    assert not any(key.startswith("shadow:") for key in notes(client, server, "failing")["notes"])
    assert metric(client, server, 'tandem_cost_usd_total{call="shadow",route="tandem",target="edge"}') == 0.0


def test_privacy_keep_local_never_shadows_to_the_cloud_and_redact_sends_placeholders(
    make_gateway: Any, edge: FakeUpstream, cloud: FakeUpstream, client: httpx.Client
) -> None:
    kept = make_gateway(routes=shadowed("edge", privacy="keep_local"))
    step(client, kept, "kept", f"mail the report to {EMAIL}")
    assert wait_until(lambda: shadow_calls(client, kept, "cloud", "private") == 1)
    assert cloud.received == []
    blocked = make_gateway(routes=shadowed("edge", privacy="block"))
    step(client, blocked, "blocked", f"mail the report to {EMAIL}")
    assert wait_until(lambda: shadow_calls(client, blocked, "cloud", "private") == 1)
    assert cloud.received == []

    redacting = make_gateway(routes=shadowed("edge", privacy="redact"))
    step(client, redacting, "redacted", f"mail the report to {EMAIL}")
    assert wait_until(lambda: len(cloud.received) == 1)
    assert EMAIL.encode() not in cloud.received[0].raw and b"[EMAIL_1]" in cloud.received[0].raw
    assert wait_until(lambda: shadow_calls(client, redacting, "cloud", "agree") == 1)


def test_the_daily_budget_stops_shadowing(
    make_gateway: Any, edge: FakeUpstream, cloud: FakeUpstream, client: httpx.Client
) -> None:
    server = make_gateway(routes=shadowed("edge", budget=1e-6))  # one shadow costs 1.25e-4
    step(client, server, "a")
    assert wait_until(lambda: shadow_calls(client, server, "cloud", "agree") == 1)
    step(client, server, "b")
    assert wait_until(lambda: shadow_calls(client, server, "cloud", "over_budget") == 1)
    assert len(cloud.received) == 1


def test_the_budget_is_shared_through_redis(
    make_gateway: Any, edge: FakeUpstream, cloud: FakeUpstream, client: httpx.Client, redis_url: str
) -> None:
    first = make_gateway(routes=shadowed("edge", budget=1e-6), redis_url=redis_url)
    second = make_gateway(routes=shadowed("edge", budget=1e-6), redis_url=redis_url)
    step(client, first, "a")
    assert wait_until(lambda: shadow_calls(client, first, "cloud", "agree") == 1)
    step(client, second, "b")  # another replica: today's shadow dollars are spent already
    assert wait_until(lambda: shadow_calls(client, second, "cloud", "over_budget") == 1)
    assert len(cloud.received) == 1


def test_rate_zero_never_shadows_and_bad_settings_are_refused(
    make_gateway: Any, cloud: FakeUpstream, client: httpx.Client
) -> None:
    import pytest

    from router.settings import ConfigError, load_settings

    server = make_gateway(routes=shadowed("edge", rate=0.0))
    for index in range(5):
        step(client, server, f"r{index}")
    time.sleep(0.2)
    assert cloud.received == []
    with pytest.raises(ConfigError, match="rate"):
        load_settings(routes={"tandem": {"strategy": "edge", "shadow": {"rate": 2}}})
    with pytest.raises(ConfigError, match="budget"):
        load_settings(routes={"tandem": {"strategy": "edge", "shadow": {"budget_usd_per_day": -1}}})


def test_translated_surfaces_are_shadowed_too_and_in_flight_shadows_are_bounded(
    make_gateway: Any, edge: FakeUpstream, cloud: FakeUpstream, client: httpx.Client, monkeypatch: Any
) -> None:
    import router.shadow

    server = make_gateway(routes=shadowed("edge"))
    body = {"model": "tandem", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}
    for stream in (False, True):
        response = client.post(f"{server.url}/v1/messages", json={**body, "stream": stream})
        assert response.status_code == 200, response.text
    assert wait_until(lambda: shadow_calls(client, server, "cloud", "agree") == 2)
    assert all(received.body["max_completion_tokens"] == 64 for received in cloud.received)  # the client's, smaller

    monkeypatch.setattr(router.shadow, "MAX_IN_FLIGHT", 1)
    cloud.default = {"kind": "hang"}
    step(client, server, "slow-1")
    assert wait_until(lambda: len(cloud.received) == 3)
    step(client, server, "slow-2")  # the first shadow still hangs: this one is not started
    assert wait_until(lambda: shadow_calls(client, server, "cloud", "busy") == 1)
    assert len(cloud.received) == 3


def test_agreement_and_the_shadow_request() -> None:
    from router.shadow import agree, shadow_body

    def bash(command: str) -> dict[str, Any]:
        arguments = json.dumps({"command": command})
        return {"role": "assistant", "tool_calls": [{"function": {"name": "bash", "arguments": arguments}}]}

    assert agree(bash("grep -rn x ."), bash("ls src"))  # both search with the same tool
    assert not agree(bash("ls"), bash("python -m pytest"))  # search against test
    assert not agree(bash("ls"), {"role": "assistant", "tool_calls": [{"function": {"name": "glob"}}]})
    assert not agree({"role": "assistant", "tool_calls": [{"function": "broken"}]}, {"content": "done"})
    assert agree({"content": "```bash\nls\n```"}, {"content": "```bash\nfind . -name '*.py'\n```"})
    raw = {"messages": [], "stream": True, "stream_options": {}, "n": 2, "max_completion_tokens": 10, "seed_x": 1}
    assert shadow_body(raw, 100, frozenset({"seed_x"})) == {"messages": [], "max_completion_tokens": 10}
    assert shadow_body({"messages": [], "max_tokens": 5000}, 100, frozenset())["max_completion_tokens"] == 100

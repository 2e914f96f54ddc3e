"""Trajectories through the real gateway: identification, retries, namespaces, outcome, idle close."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from router.export import SCHEMA
from tests import both_stores
from tests.fake_clock import FakeClock
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

MakeGateway = Callable[..., GatewayServer]
# Every test here runs against both stores: in memory, and a real redis-server.
make_gateway = both_stores.make_gateway
HI = [{"role": "user", "content": "fix the failing test"}]


def post(
    client: httpx.Client,
    server: GatewayServer,
    path: str = "/v1/chat/completions",
    headers: dict[str, str] | None = None,
    **body: Any,
) -> httpx.Response:
    body.setdefault("model", "tandem")
    body.setdefault("messages", HI)
    return client.post(f"{server.url}{path}", json=body, headers=headers or {})


@pytest.mark.parametrize(
    ("path", "headers", "body", "expected"),
    [
        ("/s/from-path/v1/chat/completions", {"X-Session-ID": "header"}, {}, "from-path"),
        ("/v1/chat/completions", {"X-Session-ID": "xs"}, {"session_id": "body"}, "xs"),
        ("/v1/chat/completions", {"X-Claude-Code-Session-Id": "cc"}, {}, "cc"),
        ("/v1/chat/completions", {"session-id": "codex"}, {}, "codex"),
        ("/v1/chat/completions", {"x-litellm-session-id": "oh"}, {"prompt_cache_key": "pk"}, "oh"),
        ("/v1/chat/completions", {}, {"session_id": "terminus"}, "terminus"),
        ("/v1/chat/completions", {}, {"litellm_session_id": "ls"}, "ls"),
        ("/v1/chat/completions", {}, {"metadata": {"session_id": "md"}}, "md"),
        ("/v1/chat/completions", {}, {"prompt_cache_key": "pck", "user": "alice"}, "pck"),
        ("/v1/chat/completions", {"X-Session-ID": "has space/and slash"}, {}, "h-"),
    ],
)
def test_every_identification_source(
    gateway: GatewayServer,
    client: httpx.Client,
    path: str,
    headers: dict[str, str],
    body: dict[str, Any],
    expected: str,
) -> None:
    response = post(client, gateway, path, headers, **body)
    assert response.status_code == 200
    assert response.headers["x-tandem-trajectory"].startswith(expected)


@pytest.mark.parametrize("session", [".", ".."])
def test_a_dot_segment_session_is_hashed_into_an_id_the_api_can_read(
    gateway: GatewayServer, client: httpx.Client, session: str
) -> None:
    response = post(client, gateway, "/v1/chat/completions", {"X-Session-ID": session})
    trajectory_id = response.headers["x-tandem-trajectory"]
    assert trajectory_id.startswith("h-")
    detail = client.get(f"{gateway.url}/v1/trajectories/{trajectory_id}")
    assert detail.status_code == 200 and detail.json()["id"] == trajectory_id


def test_user_is_not_a_session(gateway: GatewayServer, client: httpx.Client) -> None:
    first = post(client, gateway, user="alice").headers["x-tandem-trajectory"]
    second = post(client, gateway, user="alice", messages=[{"role": "user", "content": "other"}])
    assert second.headers["x-tandem-trajectory"] != first


def test_stitching_by_message_history(gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream) -> None:
    edge.push({"kind": "tool_call", "name": "bash", "arguments": '{"command": "pytest"}'})
    first = post(client, gateway)
    call = first.json()["choices"][0]["message"]
    history = [
        *HI,
        call,
        {"role": "tool", "tool_call_id": "call_1", "content": "1 failed\nTraceback (most recent call last):"},
    ]
    second = post(client, gateway, messages=history)
    assert second.headers["x-tandem-trajectory"] == first.headers["x-tandem-trajectory"]
    assert second.headers["x-tandem-step"] == "2"
    detail = client.get(f"{gateway.url}/v1/trajectories/{first.headers['x-tandem-trajectory']}").json()
    assert detail["records"][0]["tools"] == ["bash"]
    assert set(detail["records"][1]["error_signals"]) >= {"traceback", "test_failure"}
    assert detail["task"] == "fix the failing test"


def test_sdk_retry_is_the_same_step(make_gateway: MakeGateway, edge: FakeUpstream) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "edge", "failover": False}})
    edge.push({"kind": "error", "status": 500}, {"text": "second try"})
    sdk = openai.OpenAI(
        base_url=server.base_url, api_key="x", max_retries=1, default_headers={"X-Session-ID": "retrying"}
    )
    raw = sdk.chat.completions.with_raw_response.create(model="tandem", messages=HI)
    assert raw.parse().choices[0].message.content == "second try"
    assert raw.headers["x-tandem-step"] == "1"
    assert edge.received[1].headers.get("x-stainless-retry-count") is None  # not forwarded upstream
    with httpx.Client() as http:
        detail = http.get(f"{server.url}/v1/trajectories/retrying").json()
    assert detail["steps"] == 1
    assert [(r["step"], r["attempt"], r["status"]) for r in detail["records"]] == [(1, 1, "error"), (1, 2, "ok")]


def test_trajectories_are_namespaced_by_client_key(make_gateway: MakeGateway, client: httpx.Client) -> None:
    server = make_gateway(client_api_keys=["key-a", "key-b"])
    ids = {}
    for key in ("key-a", "key-b"):
        response = post(client, server, headers={"Authorization": f"Bearer {key}", "X-Session-ID": "same"})
        ids[key] = response.headers["x-tandem-trajectory"]
    assert ids["key-a"] != ids["key-b"] and all(i.endswith(":same") for i in ids.values())
    as_a = {"Authorization": "Bearer key-a"}
    assert client.get(f"{server.url}/v1/trajectories/{ids['key-a']}", headers=as_a).status_code == 200
    assert client.get(f"{server.url}/v1/trajectories/{ids['key-b']}", headers=as_a).status_code == 404
    listed = client.get(f"{server.url}/v1/trajectories", headers=as_a).json()["data"]
    assert [t["id"] for t in listed] == [ids["key-a"]]
    assert client.get(f"{server.url}/v1/trajectories").status_code == 401


def test_admin_key_reads_every_trajectory_and_client_keys_none(make_gateway: MakeGateway, client: httpx.Client) -> None:
    server = make_gateway(client_api_keys=["key-a"], admin_api_keys=["admin"])
    post(client, server, headers={"Authorization": "Bearer key-a", "X-Session-ID": "s"})
    assert client.get(f"{server.url}/v1/trajectories", headers={"Authorization": "Bearer key-a"}).status_code == 401
    listed = client.get(f"{server.url}/v1/trajectories", headers={"Authorization": "Bearer admin"}).json()["data"]
    assert len(listed) == 1 and listed[0]["id"].endswith(":s")


def test_a_client_key_posts_the_outcome_of_its_own_runs_while_admin_keys_guard_the_rest(
    make_gateway: MakeGateway, client: httpx.Client
) -> None:
    """With admin keys on (the operator's view needs them), an agent still reports how its run
    ended with its own client key; another client's key does not find that run."""
    server = make_gateway(client_api_keys=["key-a", "key-b"], admin_api_keys=["admin"], ui={"enabled": True})
    as_a, as_b = {"Authorization": "Bearer key-a"}, {"Authorization": "Bearer key-b"}
    mine = post(client, server, headers={**as_a, "X-Session-ID": "mine"}).headers["x-tandem-trajectory"]
    theirs = post(client, server, headers={**as_b, "X-Session-ID": "theirs"}).headers["x-tandem-trajectory"]
    outcome = {"success": True, "labels": {"by": "agent"}}
    assert client.post(f"{server.url}/v1/trajectories/{mine}/outcome", json=outcome).status_code == 401
    wrong = client.post(
        f"{server.url}/v1/trajectories/{mine}/outcome", json=outcome, headers={"Authorization": "Bearer x"}
    )
    assert wrong.status_code == 401
    crossed = client.post(f"{server.url}/v1/trajectories/{mine}/outcome", json=outcome, headers=as_b)
    assert crossed.status_code == 404 and crossed.json()["error"]["code"] == "trajectory_not_found"
    closed = client.post(f"{server.url}/v1/trajectories/{mine}/outcome", json=outcome, headers=as_a)
    assert closed.status_code == 200, closed.text
    assert closed.json()["outcome"]["success"] is True and closed.json()["close_reason"] == "outcome"
    # Reading stays the admin's: the client key closes its run, it does not read the API.
    assert client.get(f"{server.url}/v1/trajectories/{mine}", headers=as_a).status_code == 401
    admin = {"Authorization": "Bearer admin"}
    detail = client.get(f"{server.url}/v1/trajectories/{mine}", headers=admin).json()
    assert detail["outcome"]["labels"] == {"by": "agent"}
    # The admin closes any run.
    by_admin = client.post(f"{server.url}/v1/trajectories/{theirs}/outcome", json={"success": False}, headers=admin)
    assert by_admin.status_code == 200 and by_admin.json()["outcome"]["success"] is False


def test_outcome_closes_once(gateway: GatewayServer, client: httpx.Client) -> None:
    post(client, gateway, headers={"X-Session-ID": "done"}, model="tandem/cloud")
    post(client, gateway, headers={"X-Session-ID": "done"}, messages=[*HI, {"role": "assistant", "content": "ok"}])
    url = f"{gateway.url}/v1/trajectories/done/outcome"
    response = client.post(url, json={"success": True, "score": 0.75, "labels": {"benchmark": "demo"}})
    assert response.status_code == 200
    body = response.json()
    assert body["outcome"]["success"] is True and body["close_reason"] == "outcome" and body["closed_at"]
    again = client.post(url, json={"success": False})
    assert again.status_code == 409 and "first one stands" in again.json()["error"]["message"]
    metrics = client.get(f"{gateway.url}/metrics").text
    assert 'tandem_trajectory_steps_count{route="tandem/cloud"} 1.0' in metrics
    assert 'tandem_trajectory_cloud_share_sum{route="tandem/cloud"} 0.5' in metrics


@pytest.mark.parametrize(
    ("path", "body", "status", "words"),
    [
        ("/v1/trajectories/nope/outcome", {"success": True}, 404, "nope"),
        ("/v1/trajectories/bad%20id/outcome", {"success": True}, 400, "trajectory id"),
        ("/v1/trajectories/known/outcome", {}, 400, "'success'"),
        ("/v1/trajectories/known/outcome", {"score": 2}, 400, "'score'"),
        ("/v1/trajectories/known/outcome", {"success": "yes"}, 400, "'success'"),
        ("/v1/trajectories/known/outcome", {"success": True, "extra": 1}, 400, "extra"),
        ("/v1/trajectories/known/outcome", {"success": True, "labels": {"a": 1}}, 400, "'labels'"),
    ],
)
def test_bad_outcomes(
    gateway: GatewayServer, client: httpx.Client, path: str, body: dict[str, Any], status: int, words: str
) -> None:
    post(client, gateway, headers={"X-Session-ID": "known"})
    response = client.post(f"{gateway.url}{path}", json=body)
    assert response.status_code == status
    assert words in response.json()["error"]["message"]


def test_trajectory_api_bad_input(gateway: GatewayServer, client: httpx.Client) -> None:
    assert client.get(f"{gateway.url}/v1/trajectories/unknown").status_code == 404
    assert client.get(f"{gateway.url}/v1/trajectories?limit=0").status_code == 400
    assert "ISO 8601" in client.get(f"{gateway.url}/v1/trajectories?since=yesterday").json()["error"]["message"]


def test_idle_trajectories_close_with_their_figures(make_gateway: MakeGateway, client: httpx.Client) -> None:
    server = make_gateway(trajectories={"idle_close_s": 600})
    tracker = server.gateway.tracker
    tracker.clock = clock = FakeClock(time.time())  # the sweep reads the test's clock
    post(client, server, headers={"X-Session-ID": "quiet"})

    def closed() -> bool:
        return client.get(f"{server.url}/v1/trajectories/quiet").json()["close_reason"] == "idle"

    clock.advance(599)
    assert server.run(tracker.sweep_once()) == 0 and not closed()  # not idle long enough yet
    clock.advance(2)
    assert server.run(tracker.sweep_once()) == 1 and closed()
    metrics = client.get(f"{server.url}/metrics").text
    assert 'tandem_trajectories_closed_total{reason="idle",route="tandem"} 1.0' in metrics


def test_list_filters_and_export(
    gateway: GatewayServer, client: httpx.Client, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for session, model in (("a", "tandem"), ("b", "tandem/cloud"), ("c", "tandem")):
        post(client, gateway, headers={"X-Session-ID": session}, model=model)
    listed = client.get(f"{gateway.url}/v1/trajectories", params={"route": "tandem"}).json()
    assert [t["id"] for t in listed["data"]] == ["c", "a"]
    page = client.get(f"{gateway.url}/v1/trajectories", params={"limit": 2}).json()
    assert [t["id"] for t in page["data"]] == ["c", "b"] and page["next_before"] is not None
    rest = client.get(f"{gateway.url}/v1/trajectories", params={"before": page["next_before"]}).json()
    assert [t["id"] for t in rest["data"]] == ["a"]
    out = tmp_path / "steps.jsonl"
    from router.cli import main

    assert main(["trajectories", "export", "--url", gateway.url, "--out", str(out)]) == 0
    assert "exporting to steps.jsonl 3 " in capsys.readouterr().err  # its progress, on stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 3 and all(line["schema"] == SCHEMA for line in lines)
    assert {line["trajectory_id"] for line in lines} == {"a", "b", "c"}
    assert all(line["task"] == "fix the failing test" and line["usage"]["prompt_tokens"] == 20 for line in lines)


def test_a_run_with_the_longest_plain_session_id_is_read_closed_and_exported(
    make_gateway: MakeGateway, client: httpx.Client, tmp_path: Path
) -> None:
    """A session id of 200 plain characters is kept as sent, behind the client key's namespace:
    the trajectory API, the operator's view and the export read the id the gateway handed out
    (it was refused as malformed, and the export of every run stopped at it)."""
    server = make_gateway(client_api_keys=["key-a"], admin_api_keys=["admin"], ui={"enabled": True})
    as_a, admin = {"Authorization": "Bearer key-a"}, {"Authorization": "Bearer admin"}
    long_id = post(client, server, headers={**as_a, "X-Session-ID": "s" * 200}).headers["x-tandem-trajectory"]
    post(client, server, headers={**as_a, "X-Session-ID": "short"})
    assert long_id.endswith(":" + "s" * 200) and len(long_id) > 200
    detail = client.get(f"{server.url}/v1/trajectories/{long_id}", headers=admin)
    assert detail.status_code == 200, detail.text
    assert detail.json()["steps"] == 1
    assert client.get(f"{server.url}/ui/t/{long_id}", headers=admin).status_code == 200
    out = tmp_path / "steps.jsonl"
    from router.cli import main

    assert main(["trajectories", "export", "--url", server.url, "--api-key", "admin", "--out", str(out)]) == 0
    exported = {json.loads(line)["trajectory_id"] for line in out.read_text().splitlines()}
    assert long_id in exported and len(exported) == 2
    closed = client.post(f"{server.url}/v1/trajectories/{long_id}/outcome", json={"success": True}, headers=as_a)
    assert closed.status_code == 200, closed.text
    # Past what any id can be, still a 400 that says what an id is.
    too_long = client.get(f"{server.url}/v1/trajectories/{'a' * 214}", headers=admin)
    assert too_long.status_code == 400 and "1 to 213 characters" in too_long.json()["error"]["message"]

"""`model_aliases:` (issue 14): client model names matched by fnmatch patterns to routes, with
the concrete names discovery lists; exact route names win, aliases come before
unknown_model_route; a client's side calls on another model name are steps of its trajectory."""

from __future__ import annotations

import re
from collections.abc import Callable

import anthropic
import httpx
import pytest

from router.settings import ConfigError
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, settings_for, wait_until

ALIASES = {
    "claude-*haiku*": {"route": "tandem/edge", "models": ["claude-haiku-4-5"]},
    "claude-*": {"route": "tandem", "models": ["claude-sonnet-4-6", "claude-opus-4-6"]},
    "gpt-5*": {"route": "tandem", "models": ["gpt-5-codex"]},
}


@pytest.fixture()
def aliased(make_gateway: Callable[..., GatewayServer]) -> GatewayServer:
    return make_gateway(
        routes={"tandem": {"strategy": "cloud"}, "claude-exact": {"strategy": "edge"}, "other": {"strategy": "edge"}},
        model_aliases=ALIASES,
        unknown_model_route="other",
    )


def route_of(client: httpx.Client, server: GatewayServer, model: str) -> str:
    response = client.post(
        f"{server.url}/v1/chat/completions", json={"model": model, "messages": [{"role": "user", "content": model}]}
    )
    assert response.status_code == 200, response.text
    return response.headers["x-tandem-route"]


def test_exact_names_win_then_aliases_in_order_then_unknown_model_route(
    aliased: GatewayServer, client: httpx.Client
) -> None:
    assert route_of(client, aliased, "claude-exact") == "claude-exact"
    assert route_of(client, aliased, "claude-haiku-4-5-20251001") == "tandem/edge"
    assert route_of(client, aliased, "claude-sonnet-4-6") == "tandem"
    assert route_of(client, aliased, "gpt-5.1-codex") == "tandem"
    assert route_of(client, aliased, "llama") == "other"


def test_discovery_lists_the_concrete_names_claude_code_keeps(aliased: GatewayServer) -> None:
    listed = anthropic.Anthropic(base_url=aliased.url, api_key="unused").models.list(limit=1000)
    ids = [m.id for m in listed.data]
    assert {"claude-haiku-4-5", "claude-sonnet-4-6", "claude-opus-4-6", "gpt-5-codex", "tandem"} <= set(ids)
    # Claude Code keeps the ids that name Claude models: the aliases' names are among them.
    assert [i for i in ids if i.startswith("claude-") and i != "claude-exact"] == [
        "claude-haiku-4-5",
        "claude-sonnet-4-6",
        "claude-opus-4-6",
    ]
    assert len(ids) == len(set(ids))


def test_side_calls_on_a_small_model_are_steps_of_the_same_trajectory(
    aliased: GatewayServer, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    client = anthropic.Anthropic(
        base_url=aliased.url, api_key="unused", default_headers={"X-Claude-Code-Session-Id": "cc-side"}
    )
    client.messages.create(model="claude-sonnet-4-6", max_tokens=16, messages=[{"role": "user", "content": "fix it"}])
    client.messages.create(
        model="claude-haiku-4-5", max_tokens=16, messages=[{"role": "user", "content": "a title for: fix it"}]
    )
    assert len(cloud.received) == 1 and len(edge.received) == 1
    with httpx.Client() as http:
        assert wait_until(lambda: len(http.get(f"{aliased.url}/v1/trajectories/cc-side").json()["records"]) == 2)
        records = http.get(f"{aliased.url}/v1/trajectories/cc-side").json()["records"]
    assert [(r["step"], r["route"], r["target"]) for r in records] == [
        (1, "tandem", "cloud"),
        (2, "tandem/edge", "edge"),
    ]


def test_an_alias_naming_no_route_stops_start_up() -> None:
    with pytest.raises(ConfigError, match=re.escape("model_aliases.claude-* names the route 'nope'")):
        settings_for("http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1", model_aliases={"claude-*": {"route": "nope"}})

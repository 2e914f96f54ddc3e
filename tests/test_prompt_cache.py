"""The all-cloud counterfactual models the cloud's prompt cache (OpenAI's documented rules by
default): an all-cloud run reads the prefix it shares with the previous step from the cache,
while a cloud step after edge steps pays what the cloud reported."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from router.config.prices import PromptCacheRules
from router.ledger import Usage, all_cloud_cached
from tests.gateway_server import GatewayServer

CLOUD_IN, CLOUD_CACHED, CLOUD_OUT = 2.50, 0.25, 15.0


def test_openai_rules_1024_tokens_then_128_token_increments() -> None:
    rules = PromptCacheRules()
    assert [rules.cached(n) for n in (0, 1023, 1024, 1151, 1152, 2000)] == [0, 0, 1024, 1024, 1152, 1920]


def test_the_cache_is_the_prefix_shared_with_the_previous_step_within_its_lifetime() -> None:
    rules = PromptCacheRules(ttl_s=600)
    usage = Usage(3000, 0, 10)
    assert all_cloud_cached(usage, "edge", rules, (2500, 1000.0), 1100.0) == 2432
    assert all_cloud_cached(usage, "edge", rules, (2500, 1000.0), 1700.0) == 0  # expired
    assert all_cloud_cached(usage, "edge", rules, None, 1100.0) == 0  # the run's first step
    assert all_cloud_cached(usage, "edge", None, (2500, 1000.0), 1100.0) == 0  # a provider without a cache
    # A prompt shorter than the previous one (the client compacted its history) shares at most itself.
    assert all_cloud_cached(Usage(1500, 0, 10), "edge", rules, (2500, 1000.0), 1100.0) == 1408
    # The cloud reported more than the model: what it reported stands; an edge's own cache does not count.
    assert all_cloud_cached(Usage(3000, 2900, 10), "cloud", rules, (2500, 1000.0), 1100.0) == 2900
    assert all_cloud_cached(Usage(3000, 2900, 10), "edge", rules, (2500, 1000.0), 1100.0) == 2432


def _step(client: httpx.Client, server: GatewayServer, prompt: int, **extra: Any) -> httpx.Response:
    fake = {"kind": "text", "prompt_tokens": prompt, "completion_tokens": 10, "cached_tokens": 0}
    body = {"model": "tandem", "messages": [{"role": "user", "content": f"step with {prompt}"}], "fake": fake}
    headers = {"X-Session-ID": "cached-run", **extra}
    response = client.post(f"{server.url}/v1/chat/completions", json=body, headers=headers)
    assert response.status_code == 200, response.text
    return response


def _cloud_cost(prompt: int, cached: int) -> float:
    return ((prompt - cached) * CLOUD_IN + cached * CLOUD_CACHED + 10 * CLOUD_OUT) / 1e6


def test_a_provider_without_a_cache(make_gateway: Callable[..., GatewayServer], client: httpx.Client) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "edge"}}, upstream_overrides={"cloud": {"prompt_cache": None}})
    _step(client, server, 2000)
    _step(client, server, 2500)
    records = client.get(f"{server.url}/v1/trajectories/cached-run").json()["records"]
    assert [r["counterfactual_cached_tokens"] for r in records] == [0, 0]

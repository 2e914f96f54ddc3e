"""`tandem demo --serve`: the simulated edge and cloud and a real gateway in front of them stay up,
so that a newcomer sends requests (curl, the openai SDK) and points a real agent (Codex,
OpenHands) at Tandem with no GPU and no key. It prints the base URL, a curl line and the
clients' settings, and stops cleanly on Ctrl-C (or SIGTERM).

The models are SIMULATED (sim/server.py): a request that is not one of the demo's tasks gets a
one-line answer saying so. The gateway is the real one: routing, headers, ledger, /metrics.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import Any

from router.settings import Settings, load_settings
from sim.catalog import CATALOG
from sim.gateway import running_gateway
from sim.run import PRICES
from sim.server import SimServer
from sim.strategies import STRATEGIES


def serve_settings(edge_url: str, cloud_url: str, seed: int) -> Settings:
    """The demo gateway's config: `tandem` (random, p=0.4, as the example config) and one route
    per strategy (`tandem/judge`, `tandem/advisor` …); any other model name goes to `tandem`, so
    a client's own default model name (Codex's `gpt-5-codex`) works too."""
    upstreams = {
        role: {"base_url": url, "model": model, "prices": PRICES[role]}
        for role, url, model in (("edge", edge_url, "qwen3.5-9b-sim"), ("cloud", cloud_url, "gpt-5.4-sim"))
    }
    routes: dict[str, dict[str, Any]] = {"tandem": {"strategy": "random", "p": 0.4, "seed": seed}}
    for strategy in STRATEGIES:
        if strategy.route["strategy"] not in ("edge", "cloud"):  # tandem/edge and tandem/cloud exist anyway
            routes[f"tandem/{strategy.key}"] = strategy.route_settings(seed)
    # Explicit values, so that TANDEM_* variables of the environment cannot change the demo.
    return load_settings(
        upstreams=upstreams,
        routes=routes,
        model_aliases={"gpt-*": {"route": "tandem", "models": ["gpt-5-codex"]}},
        unknown_model_route="tandem",
        client_api_keys=[],
        client_api_keys_file=None,
        redis_url=None,
    )


def instructions(base_url: str, routes: list[str]) -> str:
    """What the command prints once the gateway answers: where it is and how to use it."""
    root = base_url.removesuffix("/v1")
    return f"""Tandem demo gateway -- the models are SIMULATED (no GPU, no key)

  base URL: {base_url}
  models:   {", ".join(routes)} (any other name goes to tandem)

Send a request:
  curl -s -D - {base_url}/chat/completions -H 'content-type: application/json' \\
    -d '{{"model": "tandem", "messages": [{{"role": "user", "content": "hello"}}]}}'
  (the x-tandem-* headers say where the step went and why; the simulated models answer only
  the demo's built-in tasks, anything else with a line saying so)

Codex CLI, ~/.codex/config.toml (then: TANDEM_KEY=demo codex):
  model_provider = "tandem"
  model = "gpt-5-codex"

  [model_providers.tandem]
  name = "tandem"
  base_url = "{base_url}"
  wire_api = "responses"
  env_key = "TANDEM_KEY"      # any value: the demo asks for no key

OpenHands (environment):
  LLM_MODEL=litellm_proxy/tandem
  LLM_BASE_URL={root}
  LLM_API_KEY=demo

Trajectories: {base_url}/trajectories   metrics: {root}/metrics
Ctrl-C stops it."""


async def serve_demo(host: str, port: int, seed: int) -> None:
    """Run until SIGINT or SIGTERM; everything started is stopped before it returns."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    tasks = list(CATALOG)
    edge = await SimServer("edge", tasks, seed).start()
    cloud = await SimServer("cloud", tasks, seed).start()
    try:
        settings = serve_settings(edge.base_url, cloud.base_url, seed)
        async with running_gateway(settings, host, port) as (base_url, _app):
            print(instructions(base_url, list(settings.routes)), flush=True)
            await stop.wait()
    finally:
        await edge.stop()
        await cloud.stop()


def run_serve(host: str, port: int, seed: int) -> int:
    """`tandem demo --serve`'s exit status: 0 when stopped by Ctrl-C or SIGTERM."""
    try:
        asyncio.run(serve_demo(host, port, seed))
    except OSError as error:  # the port is taken, the address is not this machine's
        said = f"{error.strerror or error} (choose another --host or --port; --port 0 takes a free one)"
        print(f"tandem demo: cannot serve on {host}:{port}: {said}", file=sys.stderr)
        return 2
    print("tandem demo: stopped", file=sys.stderr, flush=True)
    return 0

"""`tandem demo --edge-vllm`: the demo's agent with a real vLLM server as the edge.

The edge is vLLM's own OpenAI server (CPU build, its own virtualenv) serving a tiny, randomly
initialised model, so its *text is random*: it rarely calls a tool and its steps do not solve
anything. What the mode shows is the wire: vLLM's real streamed chunks, usage chunk and errors
flowing through the gateway beside the simulated cloud, and the ledger built from them.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

import httpx

from sim.agent import AgentError, run_task
from sim.gateway import running_gateway
from sim.run import gateway_settings, pick_tasks
from sim.server import SimServer
from sim.vllm_edge import VLLMServer, VLLMServerError

NOTE = (
    "EDGE = a REAL vLLM server (CPU) serving a TINY RANDOM model: its text is random, so edge steps\n"
    "rarely call a tool and tasks are not expected to be solved. The cloud is still SIMULATED.\n"
    "What to look at: vLLM's real wire format (streamed chunks, usage, context-length 400s) going\n"
    "through the gateway, and the ledger the gateway builds from it."
)


async def _run(vllm: VLLMServer, seed: int, tasks: int) -> list[dict[str, Any]]:
    picked = pick_tasks(tasks)
    cloud = await SimServer("cloud", picked, seed).start()
    settings = gateway_settings(vllm.base_url, cloud.base_url, {"strategy": "random", "p": 0.4, "seed": seed})
    settings.upstreams["edge"].model = vllm.model
    rows: list[dict[str, Any]] = []
    try:
        async with (
            running_gateway(settings) as (base_url, _app),
            httpx.AsyncClient(base_url=base_url, timeout=120) as client,
        ):
            for task in picked:
                session = f"vllm-{task.id}"
                stopped = ""
                try:
                    # The tiny model's context is 2048 tokens; short answers keep runs going longer.
                    await run_task(client, task, model="tandem", session_id=session, extra={"max_tokens": 48})
                except AgentError as error:
                    stopped = str(error)[:110]
                ledger = (await client.get(f"/trajectories/{session}")).json()
                rows.append({"task": task.id, "ledger": ledger, "stopped": stopped})
    finally:
        await cloud.stop()
    return rows


def _render(rows: list[dict[str, Any]]) -> str:
    lines = [f"{'task':16} {'steps':>5} {'edge':>5} {'cloud':>5} {'edge tok in/out':>16} {'cost $':>8}  ended"]
    for row in rows:
        ledger = row["ledger"]
        edge_records = [r for r in ledger["records"] if r["target"] == "edge" and r["usage"]]
        tokens_in = sum(r["usage"]["prompt_tokens"] for r in edge_records)
        tokens_out = sum(r["usage"]["completion_tokens"] for r in edge_records)
        lines.append(
            f"{row['task']:16} {ledger['steps']:>5} {ledger['edge_steps']:>5} {ledger['cloud_steps']:>5} "
            f"{f'{tokens_in}/{tokens_out}':>16} {ledger['cost_usd']:>8.4f}  {row['stopped'] or 'step limit / submit'}"
        )
    return "\n".join(lines)


def run_vllm_demo(seed: int, tasks: int) -> int:
    print(NOTE, flush=True)
    print("starting vLLM (the first run installs it into its own virtualenv: minutes) ...", flush=True)
    with tempfile.TemporaryDirectory(prefix="tandem-demo-vllm-") as folder:
        try:
            with VLLMServer(Path(folder)) as vllm:
                print(f"vLLM ready in {vllm.startup_s:.1f} s at {vllm.base_url} (model {vllm.model})", flush=True)
                rows = asyncio.run(_run(vllm, seed, tasks))
        except VLLMServerError as error:
            print(f"tandem demo --edge-vllm: vLLM could not start: {error}")
            return 1
    print(_render(rows))
    return 0

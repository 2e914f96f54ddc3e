"""Real runs replayed through a live gateway: what the shipped judge does with them.

Each trajectory file is imported (`judge.importers`), and every step's state is sent, as its
agent would have sent it, to a gateway whose `tandem` route is `strategy: judge` with shipped
defaults (`--sees state|draft`; in draft mode the scripted edge drafts the action the run really
took). The judge's `x-tandem-score` and target are read from the responses and compared with
whether the step's action failed (an error signal in what followed it). Prints steps, failed
steps, AUC and cloud share.

    python -m benchmarks.judge_replay PATH [--held-out 0.2] [--sees state|draft]

`--held-out 0.2` keeps only the trajectories `tandem judge train` held out (the same stable
hash), so a model trained on those files is measured on runs it never saw.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from judge.importers import Run, read_run
from judge.imports import trajectory_files
from judge.metrics import auc
from judge.replay import replay
from judge.rows import held_out
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, settings_for


def _draft(message: dict[str, Any]) -> dict[str, Any]:
    calls = message.get("tool_calls")
    if calls:
        return {"kind": "tool_call", "arguments": calls[0]["function"]["arguments"]}
    content = message.get("content")
    return {"kind": "text", "text": content if isinstance(content, str) else ""}


def _replay(run: Run, client: httpx.Client, url: str, edge: FakeUpstream, sees: str) -> list[tuple[float, bool, int]]:
    seen = []
    assistants = [i for i, m in enumerate(run.messages) if m["role"] == "assistant"]
    for row, index in zip(replay(run), assistants, strict=True):
        if row["action_failed"] is None:
            continue
        if sees == "draft":
            edge.push(_draft(run.messages[index]))
        body = {"model": "tandem", "messages": run.messages[:index], **({"tools": run.tools} if run.tools else {})}
        response = client.post(f"{url}/v1/chat/completions", json=body, headers={"X-Session-ID": run.source})
        response.raise_for_status()
        seen.append(
            (
                float(response.headers["x-tandem-score"]),
                response.headers["x-tandem-target"] == "cloud",
                row["action_failed"],
            )
        )
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.judge_replay", description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--held-out", type=float, default=None)
    parser.add_argument("--sees", choices=("state", "draft"), default="state")
    args = parser.parse_args()
    edge = FakeUpstream(name="edge", model="edge-model").start()
    cloud = FakeUpstream(name="cloud", model="cloud-model").start()
    route = {"strategy": "judge", "sees": args.sees}
    server = GatewayServer(settings_for(edge.base_url, cloud.base_url, routes={"tandem": route})).start()
    started = time.perf_counter()
    seen: list[tuple[float, bool, int]] = []
    runs = 0
    try:
        with httpx.Client(timeout=30) as client:
            for path in trajectory_files(args.paths):
                run = read_run(path)
                if args.held_out is not None and not held_out(run.trajectory_id, args.held_out):
                    continue
                runs += 1
                seen += _replay(run, client, server.url, edge, args.sees)
    finally:
        server.stop()
        edge.stop()
        cloud.stop()
    scores = np.asarray([s for s, _, _ in seen])
    y = np.asarray([f for _, _, f in seen])
    share = float(np.mean([c for _, c, _ in seen])) if seen else float("nan")
    print(
        f"sees {args.sees}: {runs} runs, {len(y)} steps, {int(y.sum())} failed; AUC {auc(y, scores):.4f}, "
        f"cloud share {share:.4f} ({time.perf_counter() - started:.0f} s)"
    )


if __name__ == "__main__":
    main()

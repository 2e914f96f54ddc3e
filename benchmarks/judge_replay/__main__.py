"""Real runs replayed through a live gateway: what the shipped judge does with them.

Every run of each trajectory file is imported (`judge.importers`: a chat log, an evaluation's
`output.jsonl` or a results file holds several), and every step's state is sent, as its agent
would have sent it, to a gateway whose `tandem` route is `strategy: judge` with shipped defaults
(`--sees state|draft`). Both scripted upstreams answer a step with the turn the run really took,
its text and every tool call with its own id, name and arguments: in draft mode that turn is the
edge's draft the judge reads. The judge's `x-tandem-score` and target are read from the responses
and compared with whether the step's action failed (the harness-status label of the import).
Prints runs, steps, failed steps, AUC, cloud share, and how many live scores equal the score the
shipped model gives the imported row (the same features, served and imported).

    python -m benchmarks.judge_replay PATH [--held-out 0.2] [--sees state|draft] [--json]

`--held-out 0.2` keeps only the trajectories `tandem judge train` held out (the same stable
hash), so a model trained on those files is measured on runs it never saw.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import orjson

from judge.importers import Message, Run, TrajectoryFormatError, read_runs
from judge.imports import trajectory_files
from judge.metrics import auc
from judge.model import JudgeModel
from judge.replay import replay
from judge.rows import held_out
from router.policies.judge import DEFAULT_DRAFT_MODEL, DEFAULT_MODEL
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, settings_for

SCORE_TOLERANCE = 1e-4  # the import rounds features to 5 decimals


def completion(message: Message, model: str) -> dict[str, Any]:
    """A chat completion whose answer is `message`, the turn the run took: its text and all its
    tool calls, each with its own id, name and arguments."""
    content = message.get("content")
    answer: dict[str, Any] = {"role": "assistant", "content": content if isinstance(content, str) else None}
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        answer["tool_calls"] = [
            {
                "id": str(call.get("id") or f"call_{index}"),
                "type": "function",
                "function": {
                    "name": str(call["function"].get("name") or ""),
                    "arguments": str(call["function"].get("arguments") or "{}"),
                },
            }
            for index, call in enumerate(calls)
            if isinstance(call, dict) and isinstance(call.get("function"), dict)
        ]
    finish = "tool_calls" if answer.get("tool_calls") else "stop"
    return {
        "id": "chatcmpl-replay",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": answer, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def answering(upstream: FakeUpstream, turn: list[Message]) -> None:
    """Make `upstream` answer every request with the turn `turn[0]` (set before each step)."""

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        raw = orjson.dumps(completion(turn[0], upstream.model)).decode()
        return {"kind": "raw", "status": 200, "content_type": "application/json", "body": raw}

    upstream.respond = respond


def runs_of(paths: list[Path]) -> list[Run]:
    """Every run of every file (a file a folder search found that is no run is passed over; one
    named that is not readable stops the replay)."""
    runs: list[Run] = []
    for path, loose in trajectory_files(paths):
        left_out: list[str] = []
        try:
            runs += read_runs(path, left_out)
        except TrajectoryFormatError as exc:
            if not loose:
                raise
            print(f"  passed over {exc}", file=sys.stderr)
        for note in left_out:
            print(f"  {note}", file=sys.stderr)
    return runs


def replay_run(
    run: Run, session: str, client: httpx.Client, url: str, turn: list[Message], model: JudgeModel
) -> list[tuple[float, bool, int, bool]]:
    """(live score, sent to the cloud, failed, live score equal to the imported row's) of each
    labelled step of `run`."""
    seen = []
    assistants = [i for i, m in enumerate(run.messages) if m["role"] == "assistant"]
    for row, index in zip(replay(run), assistants, strict=True):
        turn[0] = run.messages[index]
        body = {"model": "tandem", "messages": run.messages[:index], **({"tools": run.tools} if run.tools else {})}
        response = client.post(f"{url}/v1/chat/completions", json=body, headers={"X-Session-ID": session})
        response.raise_for_status()
        # As an agent's next request comes after its tool ran: the step's record is written.
        client.get(f"{url}/v1/trajectories/{session}")
        if row["action_failed"] is None:
            continue
        score = float(response.headers["x-tandem-score"])
        vector = row["features"] + (row["draft_features"] if model.card.sees == "draft" else [])
        offline = model.score(np.asarray(vector, dtype=np.float32))
        seen.append(
            (
                score,
                response.headers["x-tandem-target"] == "cloud",
                int(row["action_failed"]),
                abs(score - offline) <= SCORE_TOLERANCE,
            )
        )
    return seen


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.judge_replay", description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--held-out", type=float, default=None)
    parser.add_argument("--sees", choices=("state", "draft"), default="state")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args(argv)
    runs = [run for run in runs_of(args.paths) if args.held_out is None or held_out(run.trajectory_id, args.held_out)]
    model = JudgeModel.load(DEFAULT_DRAFT_MODEL if args.sees == "draft" else DEFAULT_MODEL)
    turn: list[Message] = [{"role": "assistant", "content": ""}]
    edge = FakeUpstream(name="edge", model="edge-model")
    cloud = FakeUpstream(name="cloud", model="cloud-model")
    answering(edge, turn)
    answering(cloud, turn)
    edge.start()
    cloud.start()
    route = {"strategy": "judge", "sees": args.sees}
    server = GatewayServer(settings_for(edge.base_url, cloud.base_url, routes={"tandem": route})).start()
    started = time.perf_counter()
    seen: list[tuple[float, bool, int, bool]] = []
    try:
        with httpx.Client(timeout=30) as client:
            for index, run in enumerate(runs):
                # One session a run: runs of one file are runs of their own.
                seen += replay_run(run, f"replay-{index}", client, server.url, turn, model)
    finally:
        server.stop()
        edge.stop()
        cloud.stop()
    scores = np.asarray([s for s, _, _, _ in seen], dtype=np.float64)
    y = np.asarray([f for _, _, f, _ in seen])
    figures = {
        "sees": args.sees,
        "runs": len(runs),
        "steps": len(seen),
        "failed": int(y.sum()),
        "auc": auc(y, scores) if seen else float("nan"),
        "cloud_share": float(np.mean([c for _, c, _, _ in seen])) if seen else float("nan"),
        "scores_as_imported": sum(1 for *_, same in seen if same),
        "seconds": round(time.perf_counter() - started, 1),
    }
    if args.json:
        print(orjson.dumps(figures, option=orjson.OPT_SERIALIZE_NUMPY).decode())
    else:
        print(
            f"sees {args.sees}: {figures['runs']} runs, {figures['steps']} steps, {figures['failed']} failed; "
            f"AUC {figures['auc']:.4f}, cloud share {figures['cloud_share']:.4f}; "
            f"{figures['scores_as_imported']} of {figures['steps']} scores as imported ({figures['seconds']:.0f} s)"
        )
    return figures


if __name__ == "__main__":
    main()

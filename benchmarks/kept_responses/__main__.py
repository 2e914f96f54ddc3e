"""What continuing a conversation by `previous_response_id` costs the gateway, against resending
it whole: a Responses agent run of `--turns` tool round trips, kept turn by turn, then one step
that names its last answer.

    python -m benchmarks.kept_responses [--turns 60] [--runs 500] [--redis URL] [--json PATH]

Timed, CPU-side, per step (p50 and p99 over `--runs`):
- `resume`: reading the kept conversation back (the named record, then its chain's in one read)
  and writing the body whole (router/surfaces/responses/continued.py), what a continued step
  adds before the chat step a client that resent the conversation would make;
- `keep, continued`: keeping a continued step's answer (its own input is the one new item);
- `resent`: for a step that resends the whole conversation (the answers' items as given, then
  the new one) without `previous_response_id`: reading the kept conversation its items name and
  comparing it with the input item for item (read while the step runs), after which its answer
  is kept as a continued step's;
- `keep, resent`: keeping the answer of a step whose input is all of the conversation, what a
  client that rewrites its history at every step (nothing of it kept before) costs.

In this process's memory by default; with `--redis`, in that Redis (wall time then, round trips
included). The chat step itself (parse, stitching, the call) is the same for a continued step and
a resent one: its body is the same once resumed.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import orjson

from benchmarks.report import figure, write_result
from router.step import Route
from router.surfaces.responses.continued import Continuation
from router.surfaces.responses.ids import item_id
from router.surfaces.responses.kept import Keep, KeptResponses


def _turn(index: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One tool round trip: the step's new input (the last call's output) and its answer."""
    call = f"call_{index}"
    response_id = f"resp_{index:032x}"
    output = [
        {
            "type": "function_call",
            "id": item_id("fc", response_id, 0),
            "call_id": call,
            "name": "bash",
            "arguments": '{"command":"pytest -q"}',
        }
    ]
    new = [{"type": "function_call_output", "call_id": f"call_{index - 1}", "output": "x" * 900 + "\n"}]
    return new, {"id": response_id, "object": "response", "status": "completed", "output": output}


async def _timed(work: Callable[[], Awaitable[Any]], runs: int) -> dict[str, float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        await work()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return {"p50_ms": statistics.median(samples), "p99_ms": samples[int(len(samples) * 0.99) - 1]}


async def run(turns: int, runs: int, redis_url: str | None) -> dict[str, Any]:
    client = None
    if redis_url is not None:
        import redis.asyncio

        client = redis.asyncio.Redis.from_url(redis_url)
    kept = KeptResponses(client, "bench:", 3600.0, 256 << 20)
    chain: list[str] = []
    whole: list[dict[str, Any]] = [{"type": "message", "role": "user", "content": "fix the failing test"}]
    for index in range(turns):
        new, answer = _turn(index)
        await kept.keep(Keep("", new if chain else whole, list(chain)), answer)
        whole += [*new, *answer["output"]] if chain else answer["output"]
        chain.append(answer["id"])
    # The route a model names, as the continuation reads it: its privacy mode only.
    route = cast(Route, SimpleNamespace(settings=SimpleNamespace(privacy="allow")))
    new, answer = _turn(turns)
    body = {"model": "tandem", "instructions": "You are an agent.", "input": new, "previous_response_id": chain[-1]}

    async def resume() -> bytes | None:
        return await Continuation(kept, "", lambda _: route, 16 << 20).resume(body)

    resumed = await resume()
    if resumed is None or len(orjson.loads(resumed)["input"]) != len(whole) + 1:
        raise RuntimeError("the body resumed does not hold the whole run: the figures would not measure it")
    resent_body = {"model": "tandem", "instructions": "You are an agent.", "input": [*whole, *new]}

    async def resent() -> tuple[Any, Keep] | None:
        continuation = Continuation(kept, "", lambda _: route, 16 << 20)
        await continuation.resume(resent_body)
        return await continuation.keeping(resent_body)

    found = await resent()
    if found is None or found[1].chain != chain or found[1].input != new:
        raise RuntimeError("the resent conversation was not found kept: the figures would not measure it")
    report = {
        "turns": turns,
        "history_kb": round(len(resumed) / 1024, 1),
        "resume": await _timed(resume, runs),
        "keep_continued": await _timed(lambda: kept.keep(Keep("", new, chain), answer), runs),
        "resent": await _timed(resent, runs),
        "keep_resent": await _timed(lambda: kept.keep(Keep("", [*whole, *new], []), answer), runs),
    }
    if client is not None:
        await client.aclose()
    return report


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--redis", default=None, help="a Redis URL (a scratch database: keys under bench:)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    report = asyncio.run(run(args.turns, args.runs, args.redis))
    where = "Redis" if args.redis else "memory"
    print(f"{report['turns']} turns, {report['history_kb']} KB whole, kept in {where} (ms, p50 / p99):")
    for name in ("resume", "keep_continued", "resent", "keep_resent"):
        print(f"  {name:16} {report[name]['p50_ms']:.3f} / {report[name]['p99_ms']:.3f}")
    if args.json is not None:
        command = f"python -m benchmarks.kept_responses --turns {args.turns} --runs {args.runs}"
        command += " --redis URL" if args.redis else ""
        figures = [
            figure(f"{name.replace('_', ', ')} ({where}, {report['history_kb']} KB), {stat[:3]}", f"{value:.3f} ms")
            for name in ("resume", "keep_continued", "resent", "keep_resent")
            for stat, value in report[name].items()
        ]
        write_result(args.json, "kept_responses.redis" if args.redis else "kept_responses", command, figures)


if __name__ == "__main__":
    main()

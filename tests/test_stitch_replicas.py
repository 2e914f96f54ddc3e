"""Runs without a session id stitched by two gateway replicas sharing one Redis, at once: a
fleet of runs of one task (a CI matrix, a benchmark's seeds) whose first requests are identical
and whose steps land on either replica. Each run is one trajectory: no replica's note of an
answer is lost to another's written at the same instant (merges.py), and a step that reaches one
replica before the other has noted the answer it resends (or the failure of the attempt it
retries, when it says it is one) finds it, and a step's claim is in Redis before its answer
(stitch.py)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import random
from collections.abc import Callable
from typing import Any

import httpx

from router.trajectory import identify
from router.trajectory.redis_store import RedisStore
from router.trajectory.stitch import Stitcher
from tests.gateway_server import GatewayServer

MakeGateway = Callable[..., GatewayServer]
RUNS = 16  # at once, of one task
SYSTEM = {"role": "system", "content": "You are a coding agent with a bash tool."}


def _step(client: httpx.Client, server: GatewayServer, messages: list[dict[str, str]], answer: str) -> tuple[str, str]:
    body = {"model": "tandem", "messages": messages, "fake": {"kind": "text", "text": answer}}
    response = client.post(f"{server.url}/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text
    return response.headers["x-tandem-trajectory"], response.headers["x-tandem-stitch"]


def _second(task: list[dict[str, str]], run: int) -> list[dict[str, str]]:
    return [*task, {"role": "assistant", "content": f"run {run}: ls"}, {"role": "user", "content": f"output {run}"}]


def test_a_fleet_of_runs_on_two_replicas_is_one_trajectory_each(make_gateway: MakeGateway, redis_url: str) -> None:
    replicas = [make_gateway(redis_url=redis_url), make_gateway(redis_url=redis_url)]
    with httpx.Client(timeout=30) as client, concurrent.futures.ThreadPoolExecutor(RUNS) as pool:
        for fleet in range(4):
            task = [SYSTEM, {"role": "user", "content": f"Fix the failing test in module_{fleet}.py"}]
            firsts = list(
                pool.map(lambda run, task=task: _step(client, replicas[run % 2], task, f"run {run}: ls"), range(RUNS))
            )
            seconds = list(
                pool.map(
                    lambda run, task=task: _step(client, replicas[(run + 1) % 2], _second(task, run), "done"),
                    range(RUNS),
                )
            )
            assert len({trajectory for trajectory, _ in firsts}) == RUNS
            assert [trajectory for trajectory, _ in seconds] == [trajectory for trajectory, _ in firsts]
            assert {decision for _, decision in seconds} == {"extended"}


def test_a_step_sent_to_the_other_replica_at_once_continues_its_run(make_gateway: MakeGateway, redis_url: str) -> None:
    """Each run's next step sent the moment its answer arrives, to the replica that did not give
    it (whose notes are written after the answer, off its path)."""
    replicas = [make_gateway(redis_url=redis_url), make_gateway(redis_url=redis_url)]

    def run_of_two_steps(client: httpx.Client, task: list[dict[str, str]], run: int) -> tuple[str, str]:
        first, _ = _step(client, replicas[run % 2], task, f"run {run}: ls")
        second, decision = _step(client, replicas[(run + 1) % 2], _second(task, run), "done")
        assert decision == "extended", (run, decision)
        return first, second

    with httpx.Client(timeout=30) as client, concurrent.futures.ThreadPoolExecutor(RUNS) as pool:
        for fleet in range(4):
            task = [SYSTEM, {"role": "user", "content": f"Make the build pass in package_{fleet}"}]
            pairs = list(pool.map(lambda run, task=task: run_of_two_steps(client, task, run), range(RUNS)))
            assert len({first for first, _ in pairs}) == RUNS
            assert all(first == second for first, second in pairs), pairs


def _tool_loop(
    client: httpx.Client, replicas: list[GatewayServer], task: list[dict[str, Any]], seed: int
) -> list[tuple[str, str]]:
    """A run of 5 tool-call steps, each sent to a replica drawn at random, some streamed; some
    steps (after the first, whose retry no rule can tell from another run's identical first
    request: docs/concepts.md) fail once with a 500 and are sent again at once, to a replica drawn
    again, marked as a retry as the OpenAI and Anthropic SDKs mark theirs. (The stitch decision,
    trajectory) of each attempt."""
    rng = random.Random(seed)
    messages = list(task)
    attempts: list[tuple[str, str]] = []
    for step in range(5):
        call_id = f"call_{rng.getrandbits(40):x}"
        arguments = f'{{"cmd": "ls {step}"}}'
        how = {"kind": "tool_call", "call_id": call_id, "name": "bash", "arguments": arguments}
        if step > 0 and rng.random() < 0.2:
            body = {"model": "tandem", "messages": messages, "fake": {"kind": "error", "status": 500}}
            failed = client.post(f"{rng.choice(replicas).url}/v1/chat/completions", json=body)
            assert failed.status_code >= 500
            attempts.append(("failed", failed.headers["x-tandem-trajectory"]))
        body = {"model": "tandem", "messages": messages, "fake": how, "stream": rng.random() < 0.4}
        retry = {"x-stainless-retry-count": "1"} if attempts and attempts[-1][0] == "failed" else {}
        url = f"{rng.choice(replicas).url}/v1/chat/completions"
        with client.stream("POST", url, json=body, headers=retry) as answer:
            answer.read()  # a stream read to its end: the answer delivered in full
            assert answer.status_code == 200
            attempts.append((answer.headers["x-tandem-stitch"], answer.headers["x-tandem-trajectory"]))
        call = {"id": call_id, "type": "function", "function": {"name": "bash", "arguments": arguments}}
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call_id, "content": f"output of step {step}"},
        ]
    return attempts


def test_tool_loops_with_failed_attempts_on_either_replica_are_one_trajectory_each(
    make_gateway: MakeGateway, redis_url: str
) -> None:
    replicas = [make_gateway(redis_url=redis_url), make_gateway(redis_url=redis_url)]
    with httpx.Client(timeout=30) as client, concurrent.futures.ThreadPoolExecutor(RUNS) as pool:
        for fleet in range(4):
            task = [SYSTEM, {"role": "user", "content": f"Port the tests of crate_{fleet} to the new API"}]
            runs = list(
                pool.map(
                    lambda run, task=task, fleet=fleet: _tool_loop(client, replicas, task, 100 * fleet + run),
                    range(RUNS),
                )
            )
            trajectories = [{trajectory for _, trajectory in attempts} for attempts in runs]
            assert all(len(found) == 1 for found in trajectories), runs  # no run split
            assert len(set().union(*trajectories)) == RUNS, runs  # no two runs joined
            assert {"failed", "retry"} & {decision for attempts in runs for decision, _ in attempts} == {
                "failed",
                "retry",
            }  # the schedule did fail and retry attempts


async def test_a_run_is_not_taken_for_the_one_in_flight_the_mark_lists_when_more_fly(redis_url: str) -> None:
    """More runs of one task in flight than a history's mark lists: the oldest falls off the list
    (counted instead). Its answer is delivered and its next step reaches the other replica
    before its note is written, while one run is still in flight: that run is not a guess for
    it (it is another run's); the step waits for the note and continues its own run."""
    stores = [RedisStore(redis_url), RedisStore(redis_url)]
    replicas = [Stitcher(stores[0]), Stitcher(stores[1])]
    task = [SYSTEM, {"role": "user", "content": "Bump the lockfile of service_crowd"}]
    try:
        firsts = [await replicas[0].place("ns", task, False) for _ in range(12)]
        runs = [stitched.trajectory_id for stitched in firsts]
        key, anchor = firsts[0].key, firsts[0].anchor
        for _ in range(200):  # the claims' writes are off the path: until all twelve are counted
            mark = await stores[0].stitch_find("b:" + key)
            if mark is not None and mark.endswith("+4"):
                break
            await asyncio.sleep(0.01)
        assert mark is not None and mark.split()[:2] == [runs[-1], "flight"] and mark.endswith("+4"), mark
        assert runs[0] not in mark.split()
        answers = {run: identify.answer_key(f"{run}: ls", []) for run in runs}
        for run in runs[1:-1]:  # every run answered and noted but the oldest and the newest
            await replicas[0].answered(run, key, "ok", answers[run], anchor)
        assert (await stores[0].stitch_find("b:" + key) or "").split()[2:] == [runs[-1], "+1"]

        second = [*task, {"role": "assistant", "content": f"{runs[0]}: ls"}, {"role": "user", "content": "ok"}]
        placing = asyncio.create_task(replicas[1].place("ns", second, False))
        await asyncio.sleep(0.05)  # the oldest run's note, written late
        assert not placing.done()
        await replicas[0].answered(runs[0], key, "ok", answers[runs[0]], anchor)
        stitched = await asyncio.wait_for(placing, timeout=5)
        assert (stitched.trajectory_id, stitched.decision) == (runs[0], "extended")
    finally:
        for store in stores:
            await store.aclose()

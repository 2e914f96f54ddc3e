"""Runs of one task without session ids, twice in a row and twice at once, and the check that
the gateway kept them apart: each run's steps in exactly one trajectory, each trajectory one
run's steps (0 crossed runs).

The scripted model (`RunScript`, the fake upstream's `respond`) answers each run as a sampling
model would: with answers of its own. The n-th first request starts run n; a later request
belongs to the run whose tag (`run-<n>`) its history carries, in the answers the client sent
back. Every answer's usage says its run and turn (completion_tokens = 1000 * run + turn), so the
ledger's records tell which run each step was."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import orjson

from tests.clients.harness import trajectories
from tests.gateway_server import GatewayServer

TAG = re.compile(rb"run-(\d+)")
T = TypeVar("T")


class RunScript:
    """`answer(run, turn)`: the behaviour for a run's turn (how many of the request's assistant
    messages are this script's answers: a client's own, such as Aider's "Ok." after the files it
    shows, do not count), tagged with the run through its text, tool-call id or arguments."""

    def __init__(self, answer: Callable[[int, int], dict[str, Any]]) -> None:
        self.answer = answer
        self.started = 0

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        history = body.get("messages") or []
        found = TAG.search(orjson.dumps(history))
        if found is None:
            self.started += 1
            run = self.started
        else:
            run = int(found.group(1))
        turn = sum(1 for m in history if m.get("role") == "assistant" and TAG.search(orjson.dumps(m)))
        return {**self.answer(run, turn), "completion_tokens": 1000 * run + turn}


def twice_in_a_row_and_twice_at_once(start: Callable[[int], T]) -> list[T]:
    """Runs 1 and 2 one after the other, and beside them 3 and 4 at once (`start(i)` runs the
    client in a folder of its own): three runs of one task start together, one after another
    ends."""
    with ThreadPoolExecutor(3) as pool:
        in_a_row = pool.submit(lambda: [start(1), start(2)])
        at_once = [pool.submit(start, i) for i in (3, 4)]
        return [*in_a_row.result(), *(run.result() for run in at_once)]


def runs_by_trajectory(server: GatewayServer, runs: int) -> dict[str, list[tuple[int, int]]]:
    """Each trajectory's answered main steps (route `tandem`: a client's side calls on other
    routes are left out) as (run, turn), read back from their usage."""
    found = {}
    for trajectory in trajectories(server, expected=runs):
        steps = [
            divmod(r["usage"]["completion_tokens"], 1000)
            for r in trajectory["records"]
            if r["status"] == "ok" and r["usage"] and r["route"] == "tandem"
        ]
        if steps:
            found[trajectory["id"]] = sorted(steps)
    return found


def assert_uncrossed(server: GatewayServer, runs: int, turns: Sequence[int]) -> None:
    """`runs` trajectories, the n-th holding exactly run n's steps (its turns `turns`)."""
    found = runs_by_trajectory(server, runs)
    by_run = sorted(found.values())
    assert by_run == [[(run, turn) for turn in turns] for run in range(1, runs + 1)], found

"""The long-run benchmark's real runs replay as their client sent them, and its text-shaped
generated runs have the real runs' proportions (benchmarks/longrun/text_runs.py)."""

from __future__ import annotations

import itertools
import statistics

import orjson

from benchmarks.longrun.text_runs import text_run_messages
from benchmarks.longrun.trajectory import RunShape, real_body, real_runs, request_body, run_messages


def _assistant_share(messages: list[dict[str, object]]) -> float:
    sizes = [len(orjson.dumps(message)) for message in messages]
    return sum(size for size, m in zip(sizes, messages, strict=True) if m["role"] == "assistant") / sum(sizes)


def _growth(steps: list[list[dict[str, object]]], body: object) -> list[int]:
    sizes = [len(body("edge", messages)) for messages in steps]  # type: ignore[operator]
    return [after - before for before, after in itertools.pairwise(sizes)]


def test_the_real_runs_replay_each_step_with_the_messages_before_it() -> None:
    runs = real_runs()
    assert len(runs) == 5
    for name, steps in runs:
        assert len(steps) >= 100, name
        for before, after in itertools.pairwise(steps):
            assert after[: len(before)] == before  # the history only grows
            assert after[len(before)]["role"] == "assistant"  # the step answered, then its observation
        body = orjson.loads(real_body("edge", steps[-1]))
        assert list(body) == ["model", "messages", "temperature"]  # the model, the messages, then the fixed field


def test_text_shaped_runs_have_the_real_runs_proportions_where_the_tool_call_runs_do_not() -> None:
    real = [steps for _, steps in real_runs()]
    text = [list(text_run_messages(seed, RunShape())) for seed in (1, 2)]
    tools = [list(run_messages(seed, RunShape())) for seed in (1, 2)]
    real_share = [_assistant_share(steps[-1]) for steps in real]
    assert all(0.35 <= share <= 0.6 for share in real_share)
    assert all(0.35 <= _assistant_share(steps[-1]) <= 0.6 for steps in text)
    assert all(_assistant_share(steps[-1]) < 0.1 for steps in tools)
    assert all(m["role"] != "tool" for steps in text for m in steps[-1])

    def skew(growth: list[int]) -> float:  # p90 over the median of a step's new bytes
        return sorted(growth)[int(0.9 * len(growth))] / statistics.median(growth)

    assert all(skew(_growth(steps, real_body)) > 2.5 for steps in real)
    # The generated runs' outputs are this repository's own files, so one run's skew moves as the
    # code does (seed 1's crossed 2.5 when a module grew): the runs of five seeds are held to
    # the real runs' skew as a group, and each to more than any tool-call run's.
    text_skews = [skew(_growth(list(text_run_messages(seed, RunShape())), real_body)) for seed in range(1, 6)]
    assert statistics.median(text_skews) > 2.5
    assert all(value > 2.0 for value in text_skews)
    assert all(skew(_growth(steps, request_body)) < 2.0 for steps in tools)

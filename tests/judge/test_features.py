"""Step features: fixed length, deterministic, flat cost, and the signals they are meant to carry."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from judge.features import (
    DECAY,
    FEATURE_NAMES,
    HEAD_MESSAGES,
    N_FEATURES,
    TAIL_MESSAGES,
    TrajectoryCounters,
    feature_index,
    step_features,
)

TOOLS = [{"type": "function", "function": {"name": n, "parameters": {}}} for n in ("read_file", "edit_file", "bash")]


def assistant(name: str, args: Any, call_id: str) -> dict[str, Any]:
    arguments = args if isinstance(args, str) else orjson.dumps(args).decode()
    return {
        "role": "assistant",
        "content": "working",
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}],
    }


def trajectory(steps: int, last_result: str = "ok") -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Task: fix the median of even-length lists in src/stats.py"},
    ]
    for index in range(steps):
        messages.append(assistant("read_file", {"path": f"src/f{index}.py"}, f"c{index}"))
        result = last_result if index == steps - 1 else f"contents of file {index}\n" * 20
        messages.append({"role": "tool", "tool_call_id": f"c{index}", "content": result})
    return messages


def value(vector: np.ndarray, name: str) -> float:
    return float(vector[feature_index(name)])


def test_fixed_length_float32_and_deterministic() -> None:
    counters = TrajectoryCounters(step=6, cloud_steps=2, answered_steps=5, steps_since_cloud=1)
    first = step_features(trajectory(5), counters, TOOLS)
    second = step_features(trajectory(5), counters, TOOLS)
    assert first.dtype == np.float32 and first.shape == (N_FEATURES,) == (len(FEATURE_NAMES),)
    assert np.array_equal(first, second)
    assert np.all(np.isfinite(first))
    assert len(set(FEATURE_NAMES)) == N_FEATURES
    # Even the first step, with no assistant message yet, has the full vector.
    assert step_features(trajectory(0), TrajectoryCounters(step=1)).shape == (N_FEATURES,)


def test_features_do_not_depend_on_the_process_hash_seed() -> None:
    code = (
        "import sys, orjson; sys.path.insert(0, '.');"
        "from tests.judge.test_features import trajectory, TOOLS;"
        "from judge.features import step_features, TrajectoryCounters;"
        "print(orjson.dumps(step_features(trajectory(4, 'Traceback (most recent call last)'),"
        " TrajectoryCounters(5), TOOLS).tolist()).decode())"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            cwd=Path(__file__).resolve().parents[2],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1
    local = step_features(trajectory(4, "Traceback (most recent call last)"), TrajectoryCounters(5), TOOLS)
    assert orjson.loads(outputs.pop()) == local.tolist()


class CountingList(list[Any]):
    """A conversation that counts the messages read from it, and refuses to be walked whole."""

    def __init__(self, items: list[Any]) -> None:
        super().__init__(items)
        self.read = 0

    def __getitem__(self, key: Any) -> Any:
        result = super().__getitem__(key)
        self.read += len(result) if isinstance(key, slice) else 1
        return result

    def __iter__(self) -> Any:
        raise AssertionError("the features walked the whole conversation")


class Poison(dict[str, Any]):
    """A message outside the window: reading it fails the test."""

    def get(self, *args: Any) -> Any:
        raise AssertionError("a message outside the bounded window was read")

    __getitem__ = get


def test_bounded_tail_cost_is_flat() -> None:
    short, long = trajectory(8), trajectory(200)  # the short one just fills the head
    # Everything between the head and the tail of the long run is poison: never read.
    window_start = len(long) - TAIL_MESSAGES
    long = [m if i < HEAD_MESSAGES or i >= window_start else Poison(m) for i, m in enumerate(long)]
    reads = []
    for messages, step in ((short, 9), (long, 201)):
        counting = CountingList(messages)
        step_features(counting, TrajectoryCounters(step=step, answered_steps=step - 1), TOOLS)
        reads.append(counting.read)
    assert reads[0] <= HEAD_MESSAGES + TAIL_MESSAGES
    assert reads[1] == reads[0]


def test_error_signals_and_last_actions() -> None:
    messages = trajectory(3, "Traceback (most recent call last):\n  File x\nValueError: bad\n")
    vector = step_features(messages, TrajectoryCounters(step=4, answered_steps=3, steps_since_cloud=3), TOOLS)
    assert value(vector, "err_traceback") == value(vector, "err_any") == 1.0
    assert value(vector, "err_test_failure") == 0.0
    assert value(vector, "act1_read") == value(vector, "act2_read") == value(vector, "act3_read") == 1.0
    assert value(vector, "type_streak") == 3.0
    clean = step_features(trajectory(3), TrajectoryCounters(step=4), TOOLS)
    assert value(clean, "err_any") == 0.0
    # Only the latest result failed: a streak of one, one turn in three, none since.
    assert value(vector, "err_streak") == 1.0 and value(clean, "err_streak") == 0.0
    assert value(vector, "err_share_tail") == pytest.approx(1 / 3)
    assert value(vector, "turns_since_err_log") == 0.0 < value(clean, "turns_since_err_log")


def test_invalid_calls_repeats_and_cloud_counters() -> None:
    messages = trajectory(1)
    messages.append(assistant("edit_file", "{broken", "x1"))
    messages.append({"role": "tool", "tool_call_id": "x1", "content": "error: arguments are not valid JSON"})
    messages.append(assistant("apply_patch", {"patch": "..."}, "x2"))  # not among the request's tools
    messages.append({"role": "tool", "tool_call_id": "x2", "content": "error: unknown tool"})
    messages.append(assistant("apply_patch", {"patch": "..."}, "x3"))
    messages.append({"role": "tool", "tool_call_id": "x3", "content": "error: unknown tool"})
    counters = TrajectoryCounters(step=5, cloud_steps=2, answered_steps=4, steps_since_cloud=0)
    vector = step_features(messages, counters, TOOLS)
    assert value(vector, "invalid_last") == 1.0
    assert value(vector, "invalid_in_tail") == 3.0
    assert value(vector, "repeat_last") == 1.0 and value(vector, "repeat_count") == 1.0
    assert value(vector, "err_error") == 1.0 and value(vector, "err_prev") == 1.0
    assert value(vector, "err_streak") == 3.0  # three failing turns in a row
    # Where the router sent earlier steps is not a feature (version 2): counters do not move it.
    other = TrajectoryCounters(step=5, cloud_steps=0, answered_steps=4, steps_since_cloud=4)
    assert np.array_equal(step_features(messages, other, TOOLS), vector)
    # Without the request's tools, an unknown name cannot be told: only the broken JSON counts.
    assert value(step_features(messages, counters), "invalid_in_tail") == 1.0


def test_mini_swe_agent_observations_in_user_messages() -> None:
    messages = [
        {"role": "system", "content": "agent"},
        {"role": "user", "content": "Please solve this issue: the parser crashes"},
        {"role": "assistant", "content": "THOUGHT: run it\n\n```bash\npython -m pytest -q\n```"},
        {"role": "user", "content": "<returncode>1</returncode>\n<output>\n1 failed, 2 passed\n</output>"},
    ]
    vector = step_features(messages, TrajectoryCounters(step=2, answered_steps=1, steps_since_cloud=1))
    assert value(vector, "act1_test") == 1.0
    assert value(vector, "err_nonzero_exit") == value(vector, "err_test_failure") == 1.0
    assert value(vector, "last_prose") == 0.0


def test_task_features_read_the_request_not_the_boilerplate() -> None:
    reminder = "<system-reminder>" + "context " * 400 + "</system-reminder>"
    messages = [
        {"role": "user", "content": [{"type": "text", "text": reminder}, {"type": "text", "text": "fix the test"}]}
    ]
    vector = step_features(messages, TrajectoryCounters(step=1))
    assert value(vector, "task_chars_log") == pytest.approx(math.log1p(len("fix the test")))
    assert value(vector, "task_mentions_test") == 1.0 and value(vector, "task_has_code") == 0.0


def test_a_run_read_again_from_the_same_objects_gets_the_same_features() -> None:
    # A gateway reusing its last parse hands the same message objects at every step; what the
    # features keep by identity must give exactly what reading them afresh gives.
    from benchmarks.longrun.trajectory import TOOLS as RUN_TOOLS
    from benchmarks.longrun.trajectory import RunShape, run_messages
    from judge.features import clear_caches

    steps = list(run_messages(seed=7, shape=RunShape(steps=40, target_bytes=60_000)))
    kept = [
        step_features(m, TrajectoryCounters(i), orjson.loads(orjson.dumps(RUN_TOOLS))) for i, m in enumerate(steps, 1)
    ]
    for index, messages in enumerate(steps, 1):
        clear_caches()
        fresh = step_features(orjson.loads(orjson.dumps(messages)), TrajectoryCounters(index), RUN_TOOLS)
        assert np.array_equal(kept[index - 1], fresh), f"step {index}"


def test_a_message_given_new_contents_is_read_again() -> None:
    messages = trajectory(3)
    first = step_features(messages, TrajectoryCounters(4), TOOLS)
    # The same dicts, edited in place: the last call now names a tool that does not exist and
    # the task asks for tests.
    messages[-2]["tool_calls"] = [{"id": "x", "type": "function", "function": {"name": "nope", "arguments": "{}"}}]
    messages[1]["content"] = "Task: add a test for the median"
    second = step_features(messages, TrajectoryCounters(4), TOOLS)
    assert value(first, "invalid_last") == 0.0 and value(second, "invalid_last") == 1.0
    assert value(first, "task_mentions_test") == 0.0 and value(second, "task_mentions_test") == 1.0
    # A result edited in place (now a harness's error) changes the tail's record.
    before = value(second, "tail_failed_decayed")
    messages[-1]["content"] = "ERROR: No replacement was performed, old_str `x` did not appear verbatim in f.py."
    third = step_features(messages, TrajectoryCounters(4), TOOLS)
    assert value(third, "tail_failed_decayed") > before


def test_what_the_features_keep_by_identity_is_bounded_in_characters() -> None:
    from judge import features

    features.clear_caches()
    task = {"role": "user", "content": "task"}  # the same object at every step: a reused parse
    huge = "x" * 1_000_000  # over a sixteenth of the budget: read, never held
    for _ in range(2):
        step_features([task, {"role": "tool", "content": huge}], TrajectoryCounters(1))
    assert features._SIGNALS.get(huge) is None
    for run in range(400):  # 400 runs' outputs of 40 KB: 16 MB offered, at most the budget held
        output = f"run {run}\n" + "log line\n" * 4000
        step_features([task, {"role": "tool", "content": output}], TrajectoryCounters(1))
        assert features._SIGNALS._held <= features._SIGNALS._budget
    assert features._SIGNALS.get(output) is not None  # the latest is kept


def test_only_a_request_whose_objects_are_reused_keeps_them_by_identity() -> None:
    # Under IDENTITY_FROM_BYTES the gateway parses every body whole, and a larger one that does
    # not extend the last is parsed whole too: its objects are new, so keeping them would only
    # hold memory (the memory benchmark's 1,000 short runs) and cost time. Only a request whose
    # head is an object seen before (the prefix parser's reuse) keeps what it reads.
    from judge import features

    features.clear_caches()
    output = "Traceback (most recent call last):\nKeyError: 'a'\n"
    messages = [{"role": "user", "content": "task"}, assistant("bash", {"command": "ls"}, "c1")]
    messages.append({"role": "tool", "tool_call_id": "c1", "content": output})
    large = TrajectoryCounters(2, request_bytes=features.IDENTITY_FROM_BYTES)
    small = step_features(messages, TrajectoryCounters(2, request_bytes=2_000), TOOLS)
    for _ in range(3):  # parsed afresh at every step
        fresh = step_features(orjson.loads(orjson.dumps(messages)), large, TOOLS)
    assert (
        features._SIGNALS.get(output) is None and features._TURNS.get(messages[1], features.tool_names(TOOLS)) is None
    )
    first = step_features(messages, large, TOOLS)  # its head is seen for the first time here
    assert features._SIGNALS.get(output) is None
    reused = step_features(messages, large, TOOLS)  # the same objects again: kept from now on
    assert (
        features._SIGNALS.get(output) is not None
        and features._TURNS.get(messages[1], features.tool_names(TOOLS)) is not None
    )
    assert np.array_equal(fresh, first) and np.array_equal(first, reused)  # the same vector however read
    assert value(small, "err_traceback") == value(reused, "err_traceback") == 1.0


def test_the_vectors_of_the_frozen_cases_are_unchanged() -> None:
    # Computed once by the code before (feature version 4): a faster way of computing the same
    # features must give exactly these floats, read afresh or from objects seen before.
    from judge import features
    from tests.judge.feature_cases import GOLDEN, cases

    golden = orjson.loads(GOLDEN.read_bytes())
    assert golden["feature_version"] == features.FEATURE_VERSION
    assert len(golden["vectors"]) == len(cases()) >= 40
    features.clear_caches()
    for name, messages, counters, tools in cases():
        fresh = step_features(orjson.loads(orjson.dumps(messages)), counters, tools)
        step_features(messages, counters, tools)
        reused = step_features(messages, counters, tools)  # its objects seen before: kept by identity
        assert fresh.tolist() == golden["vectors"][name], name
        assert reused.tolist() == golden["vectors"][name], name


def _shell_run(outputs: list[str]) -> list[dict[str, Any]]:
    """A mini-swe-agent-style run: each turn one bash command, each result its harness's
    `<returncode>` and output (`outputs[i]`: `CODE|TEXT`)."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "agent"},
        {"role": "user", "content": "Please solve this issue: the parser crashes"},
    ]
    for index, output in enumerate(outputs):
        code, text = output.split("|", 1)
        command = "cat src/parser.py" if code == "view" else f"python run_{index}.py"
        messages.append({"role": "assistant", "content": f"THOUGHT: step {index}\n\n```bash\n{command}\n```"})
        status = "0" if code == "view" else code
        messages.append({"role": "user", "content": f"<returncode>{status}</returncode>\n<output>\n{text}</output>"})
    return messages


def test_the_outputs_sizes_are_read_against_the_runs_own_recent_outputs() -> None:
    counters = TrajectoryCounters(step=6)
    # A harness that makes every output long: the latest, as long as the others, is no news.
    steady = step_features(_shell_run(["0|" + "x\n" * 2000] * 5), counters)
    assert value(steady, "output_bytes_log") > 8.0
    assert value(steady, "output_bytes_rel") == pytest.approx(0.0, abs=1e-6)
    assert value(steady, "output_lines_rel") == pytest.approx(0.0, abs=1e-6)
    # The same latest output after short ones stands out, and one short after long ones falls.
    grown = step_features(_shell_run(["0|ok\n"] * 4 + ["0|" + "x\n" * 2000]), counters)
    shrunk = step_features(_shell_run(["0|" + "x\n" * 2000] * 4 + ["0|ok\n"]), counters)
    assert value(grown, "output_bytes_log") == value(steady, "output_bytes_log")
    assert value(grown, "output_bytes_rel") > 4.0 > -4.0 > value(shrunk, "output_bytes_rel")
    # The earlier turns' mean is decayed: the first is the start, each later one weighs 1 - DECAY.
    sizes = [math.log1p(len(f"<returncode>0</returncode>\n<output>\n{'y' * n}</output>")) for n in (10, 20, 40)]
    mean = DECAY * sizes[0] + (1 - DECAY) * sizes[1]
    run = step_features(_shell_run(["0|" + "y" * n for n in (10, 20, 40)]), TrajectoryCounters(step=4))
    assert value(run, "output_bytes_rel") == pytest.approx(sizes[2] - mean, abs=1e-5)
    # A run with one turn has nothing to compare with.
    assert value(step_features(_shell_run(["0|" + "x" * 500]), TrajectoryCounters(step=2)), "output_bytes_rel") == 0.0


def test_the_tails_record_is_the_harness_status_not_the_files_content() -> None:
    counters = TrajectoryCounters(step=5)
    traceback = 'Traceback (most recent call last):\n  File "run.py", line 1\nValueError: bad\n'
    # A file that holds a traceback, viewed without error, is no failure; a program's is.
    viewed = step_features(_shell_run(["view|" + traceback] * 4), counters)
    assert value(viewed, "tail_failed_decayed") == 0.0
    assert value(viewed, "err_traceback") == 1.0  # the error signals still see the word
    failed = step_features(_shell_run(["0|ok\n", "1|" + traceback, "0|ok\n", "0|ok\n"]), counters)
    # Failures decay a turn at a time: 1 - DECAY when failed, times DECAY for each of the two turns after.
    assert value(failed, "tail_failed_decayed") == pytest.approx((1 - DECAY) * DECAY * DECAY, abs=1e-6)
    latest = step_features(_shell_run(["0|ok\n", "0|ok\n", "0|ok\n", "1|" + traceback]), counters)
    assert value(latest, "tail_failed_decayed") == pytest.approx(1 - DECAY, abs=1e-6)  # the step just before counts
    # A turn nothing followed yet (the request ends with it) has no status.
    pending = _shell_run(["1|" + traceback])
    pending.append({"role": "assistant", "content": "THOUGHT: again\n\n```bash\npython run.py\n```"})
    assert value(step_features(pending, counters), "tail_failed_decayed") == pytest.approx(1 - DECAY, abs=1e-6)

"""The judge latency measurement: per step, the time of features and of inference, with each
step's request body size; also run as a script to measure another checkout's code
(`python measure.py ROOT STEPS PASSES MODEL`, printing JSON), for `--baseline`.

It imports only the judge (and `router.native`, for the mode), never the benchmark package, so
that a baseline checkout's judge is measured with this checkout's method and trajectory.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import Any

import orjson

Times = dict[str, list[float]]
SECTIONS = ("features", "inference", "total", "total cpu")


def mode() -> str:
    """Whether the judge modules this process imported are the compiled ones (`router.native`:
    the gateway installs their finder at `import router`, before any judge module) or Python."""
    from router.native import state

    native = state()
    loaded = [name for name in native.loaded() if not name.endswith("__mypyc")]  # not the shared helper
    if "judge.features" in loaded:
        return f"compiled: {len(loaded)} modules loaded ({', '.join(loaded)})"
    if native.modules:
        return "pure Python (judge.features was imported before router: the compiled build was not used)"
    return f"pure Python ({native.reason})"


def measure(
    model: Any, full: list[dict[str, Any]], tools: list[dict[str, Any]], steps: int, passes: int, reused: bool = False
) -> Times:
    """Per-step µs of features, inference, total and total CPU, and each step's body bytes, for
    steps 1..steps of `full`, `passes` times. `reused`: each step's messages are the objects of
    the step before plus its new ones, as the gateway's parser hands a body that extends the
    last (router/protocol/prefix.py); else each body is parsed afresh, as the gateway parses a
    body that does not extend the last one."""
    from judge.features import clear_caches, step_features

    bodies = [orjson.dumps(full[: 2 + 2 * index]) for index in range(steps)]
    times: Times = {name: [] for name in (*SECTIONS, "body bytes")}
    for _ in range(passes):
        clear_caches()
        parsed = orjson.loads(bodies[-1])
        for index, body in enumerate(bodies):
            # Afresh: no object (and no cached str hash) carries over from the step before, and
            # the parse of the whole body has just gone through the CPU caches, as it does in
            # the gateway before the judge runs.
            messages = parsed[: 2 + 2 * index] if reused else orjson.loads(body)
            counters = _counters(index + 1, len(body))
            cpu_start = time.thread_time_ns()
            start = time.perf_counter_ns()
            features = step_features(messages, counters, tools)
            middle = time.perf_counter_ns()
            model.score(features)
            end = time.perf_counter_ns()
            cpu_end = time.thread_time_ns()
            times["features"].append((middle - start) / 1000)
            times["inference"].append((end - middle) / 1000)
            times["total"].append((end - start) / 1000)
            # CPU time of this thread: what the step costs when other processes take the cores.
            times["total cpu"].append((cpu_end - cpu_start) / 1000)
            times["body bytes"].append(float(len(body)))
    return times


def _counters(step: int, body_bytes: int) -> Any:
    from judge.features import TrajectoryCounters
    from judge.record import RunRecord

    cloud = step // 3
    # The run's own record as the store keeps it (judge/record.py): a step in four failed.
    labelled = max(step - 2, 0)
    record = RunRecord.from_counts({"run_labelled_execute": labelled, "run_failed_execute": labelled // 4})
    return TrajectoryCounters(step, cloud, step - 1, (step - 1) % 3, body_bytes, record)


def run_all(model_path: Path, steps: int, passes: int, trajectory: Any, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """Every measurement the benchmark prints, in this process: the mode, then a warm-up, the
    5-step and `steps`-step trajectories parsed afresh, and the `steps`-step one reused."""
    from judge.model import JudgeModel

    model = JudgeModel.load(model_path)
    measure(model, trajectory(20), tools, 20, 1)  # warm up: first calls allocate and fill caches
    full = trajectory(steps)
    return {
        "mode": mode(),
        "short": measure(model, trajectory(5), tools, min(5, steps), passes),
        "fresh": measure(model, full, tools, steps, passes),
        "reused": measure(model, full, tools, steps, passes, reused=True),
    }


def _worker(argv: list[str]) -> int:
    """Measure the checkout at ROOT: its router (the compiled build it has, if fresh) and judge,
    this file's trajectory. Prints `run_all`'s result as JSON."""
    root, steps, passes, model_path = argv[0], int(argv[1]), int(argv[2]), Path(argv[3])
    sys.path.insert(0, root)
    import router  # noqa: F401  (installs the compiled modules' finder, as the gateway does)

    source = Path(__file__).with_name("trajectory.py")
    spec = importlib.util.spec_from_file_location("_judge_latency_trajectory", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = run_all(model_path, steps, passes, module.trajectory, module.TOOLS)
    sys.stdout.write(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(_worker(sys.argv[1:]))

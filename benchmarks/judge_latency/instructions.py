"""The features' work in instructions, which other processes do not move: run under callgrind,
collecting only inside the compiled `step_features` (user space, its callees included).

    PYTHONHASHSEED=0 valgrind --tool=callgrind --collect-atstart=no \\
      --toggle-collect=CPyDef_features___step_features \\
      python benchmarks/judge_latency/instructions.py ROOT [STEPS]
    callgrind_annotate callgrind.out.PID | head   # "PROGRAM TOTALS": instructions of all steps

ROOT is the checkout whose `router` and compiled judge run (this one, or a baseline's, built
with `router.native_build`); the trajectory is this folder's. The first STEPS (60) steps are
decided with each body parsed afresh, then with each step's earlier messages reused.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import orjson


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_judge_latency_{name}", Path(__file__).with_name(f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    root, steps = argv[0], int(argv[1]) if len(argv) > 1 else 60
    sys.path.insert(0, root)
    import router  # noqa: F401  (the compiled modules' finder, as in the gateway)

    # isort: split
    import judge.features

    if not str(judge.features.__file__).startswith(root) or not str(judge.features.__file__).endswith(".so"):
        raise SystemExit(f"judge.features is not {root}'s compiled module: {judge.features.__file__}")
    counters, trajectory = _load("measure")._counters, _load("trajectory")
    full = trajectory.trajectory(steps)
    bodies = [orjson.dumps(full[: 2 + 2 * index]) for index in range(steps)]
    judge.features.clear_caches()
    for index, body in enumerate(bodies):
        judge.features.step_features(orjson.loads(body), counters(index + 1, len(body)), trajectory.TOOLS)
    parsed = orjson.loads(bodies[-1])
    judge.features.clear_caches()
    for index, body in enumerate(bodies):
        judge.features.step_features(parsed[: 2 + 2 * index], counters(index + 1, len(body)), trajectory.TOOLS)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

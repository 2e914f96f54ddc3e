"""Judge latency per step: features + ONNX inference, over a 200-step trajectory, inline.

Every step of the trajectory is decided as the gateway would decide it (the conversation so far,
the trajectory's counters), timed with perf_counter_ns, several passes, with the modules the
gateway runs: `import router` first, which loads the compiled (mypyc) judge modules where a fresh
build exists (`router/native.py`); the header says which mode ran. It prints p50/p99/max of
features, inference and both, over the whole trajectory and by request body size (the target
names 400 KB), for bodies parsed afresh and for each step's earlier messages being the objects
of the step before (the gateway's prefix parser), the same for a 5-step trajectory, and the
model's size. Target: p99 <= 200 µs per step at 400 KB on the 2-core machine. `--profile` adds a
cProfile table of where the feature time goes; `--baseline DIR` measures the checkout in DIR
(`git archive main | tar -x -C DIR`, its compiled build made with `router.native_build`) in
alternation with this one, each in its own process, and prints both side by side.

    python -m benchmarks.judge_latency [--steps 200] [--passes 5] [--baseline DIR --rounds 3] [--json PATH]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import orjson

import router  # noqa: F401  (first, as in the gateway: the compiled judge modules where built)

# isort: split
from benchmarks.judge_latency import measure as measuring
from benchmarks.judge_latency.trajectory import TOOLS, trajectory
from benchmarks.report import figure, write_result
from judge.card import card_path
from judge.features import N_FEATURES, clear_caches, step_features
from judge.model import DEFAULT_MODEL, JudgeModel

TARGET_P99_US = 200.0
TARGET_BODY = (350_000, 450_000)  # "at 400 KB": the steps whose request body is within 50 KB of it
BANDS = (
    ("up to 100 KB", 0, 100_000),
    ("100-200 KB", 100_000, 200_000),
    ("200-350 KB", 200_000, 350_000),
    ("350-450 KB (at 400 KB)", *TARGET_BODY),
    ("450-700 KB", 450_000, 700_000),
    ("700-1,000 KB", 700_000, 1_000_000),
    ("over 1,000 KB", 1_000_000, 1 << 62),
)
ROOT = Path(__file__).resolve().parents[2]

Result = dict[str, Any]  # run_all's: mode, and the times of "short", "fresh" and "reused"


def _band(times: measuring.Times, section: str, low: int, high: int) -> list[float]:
    return [value for value, size in zip(times[section], times["body bytes"], strict=True) if low < size <= high]


def _stats(values: list[float]) -> tuple[float, float, float]:
    array = np.asarray(values)
    return float(np.percentile(array, 50)), float(np.percentile(array, 99)), float(array.max())


def _cells(values: list[float]) -> str:
    p50, p99, top = _stats(values)
    return f"p50 {p50:7.1f}  p99 {p99:7.1f}  max {top:8.1f}"


def _table(title: str, runs: dict[str, Result], key: str) -> list[str]:
    """Rows of one measurement: each section, then the total by body size, one column per code."""
    names = list(runs)
    lines = [title, f"  {'':<26}" + "".join(f"{name:<42}" for name in names)]
    for section in measuring.SECTIONS:
        lines.append(f"  {section:<26}" + "".join(f"{_cells(runs[n][key][section]):<42}" for n in names))
    first = runs[names[0]][key]
    if key == "short":
        return lines
    lines.append("  total by request body size (µs, wall | CPU p99):")
    for label, low, high in BANDS:
        if not _band(first, "total", low, high):
            continue
        cells = []
        for name in names:
            times = runs[name][key]
            p50, p99, _ = _stats(_band(times, "total", low, high))
            cpu = _stats(_band(times, "total cpu", low, high))[1]
            cells.append(f"p50 {p50:7.1f}  p99 {p99:7.1f} | {cpu:7.1f}")
        count = len(_band(first, "total", low, high))
        lines.append(f"    {label:<24}" + "".join(f"{cell:<42}" for cell in cells) + f"n={count}")
    return lines


def _merge(results: list[Result]) -> Result:
    merged: Result = {"mode": results[0]["mode"]}
    for key in ("short", "fresh", "reused"):
        merged[key] = {name: [v for result in results for v in result[key][name]] for name in results[0][key]}
    return merged


def _in_process(model_path: Path, steps: int, passes: int) -> Result:
    return measuring.run_all(model_path, steps, passes, trajectory, TOOLS)


def _model_of(root: Path, model: Path) -> Path:
    """The model a checkout is measured with: its own shipped one unless another was named (a
    checkout of another feature version refuses this one's)."""
    if model.resolve() == DEFAULT_MODEL.resolve():
        return root / DEFAULT_MODEL.resolve().relative_to(ROOT)
    return model.resolve()


def _worker(root: Path, model_path: Path, steps: int, passes: int) -> Result:
    """One measurement of the checkout at `root`, in a process of its own."""
    script = Path(measuring.__file__).resolve()
    command = [sys.executable, str(script), str(root), str(steps), str(passes), str(model_path)]
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800, env=env, cwd=root)
    if done.returncode != 0:
        raise SystemExit(f"measuring {root} failed:\n{done.stderr[-3000:]}")
    result: Result = json.loads(done.stdout)
    return result


def profile(model: JudgeModel, steps: int) -> str:
    full = trajectory(steps)
    bodies = [orjson.dumps(full[: 2 + 2 * index]) for index in range(steps)]
    profiler = cProfile.Profile()
    for _ in range(3):
        clear_caches()
        for index, body in enumerate(bodies):
            messages = orjson.loads(body)  # parsed outside the profile, as in `measure`
            profiler.enable()
            model.score(step_features(messages, measuring._counters(index + 1, len(body)), TOOLS))
            profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(12)
    return out.getvalue()


def _summary(times: measuring.Times, low: int = 0, high: int = 1 << 62) -> tuple[float, float, float] | None:
    total = _band(times, "total", low, high)
    if not total:
        return None
    p50, p99, _ = _stats(total)
    return p50, p99, _stats(_band(times, "total cpu", low, high))[1]


def _figures(runs: dict[str, Result], steps: int, mode: str) -> list[dict[str, Any]]:
    """The report's rows: at 400 KB and over the whole trajectory, afresh and reused; with a
    baseline, its figures beside (`before`)."""
    this = runs["this checkout"]
    before = runs.get("baseline")
    largest = max(this["fresh"]["body bytes"]) / 1000
    rows = []
    windows = [(f"at 400 KB (bodies 350-450 KB, {mode})", *TARGET_BODY)]
    windows.append((f"{steps}-step trajectory (bodies to {largest:,.0f} KB, {mode})", 0, 1 << 62))
    for where, low, high in windows:
        for key, how in (("fresh", "parsed afresh"), ("reused", "objects reused")):
            found = _summary(this[key], low, high)
            if found is None:
                continue
            p50, p99, cpu = found
            value = f"{p50:.0f} / {p99:.0f} us (CPU p99 {cpu:.0f})"
            if before is not None:
                old = _summary(before[key], low, high)
                if old is not None:
                    value += f"; before {old[0]:.0f} / {old[1]:.0f} us (CPU p99 {old[2]:.0f})"
            name = f"features + inference {where}, {how}, p50 / p99"
            rows.append(figure(name, value, f"p99 <= {TARGET_P99_US:.0f} us", p99 <= TARGET_P99_US))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.judge_latency", description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--baseline", type=Path, default=None, help="a checkout of the code before, measured beside")
    parser.add_argument("--rounds", type=int, default=3, help="with --baseline: measurements of each, alternating")
    parser.add_argument(
        "--json", type=Path, default=None, help="also write the figures for `python -m benchmarks.report` to this file"
    )
    args = parser.parse_args(argv)
    model = JudgeModel.load(args.model)
    size = args.model.stat().st_size
    print(
        f"judge latency: model {args.model.name} ({model.card.model.get('kind', '?')}), {size:,} bytes "
        f"(card {card_path(args.model).stat().st_size:,} bytes), {N_FEATURES} features"
    )
    print(
        f"  machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"python {platform.python_version()}, inline on one thread"
    )
    mode = measuring.mode()
    print(f"  judge modules: {mode}")
    runs: dict[str, Result] = {}
    if args.baseline is None:
        runs["this checkout"] = _in_process(args.model, args.steps, args.passes)
    else:
        measured: dict[str, list[Result]] = {"this checkout": [], "baseline": []}
        for _ in range(args.rounds):  # alternating: a noisy spell of the machine hits both
            for name, root in (("this checkout", ROOT), ("baseline", args.baseline.resolve())):
                measured[name].append(_worker(root, _model_of(root, args.model), args.steps, args.passes))
        runs = {name: _merge(results) for name, results in measured.items()}
        for name, result in runs.items():
            print(f"  {name}: {result['mode']}")
        if runs["this checkout"]["mode"].split(":")[0] != runs["baseline"]["mode"].split(":")[0]:
            print("  WARNING: the two checkouts ran in different modes (build the baseline: router.native_build)")
    rounds = f"{args.passes} passes" + (f" x {args.rounds} rounds each, alternating" if args.baseline else "")
    print()
    print("\n".join(_table(f"5-step trajectory, each body parsed afresh, {rounds}:", runs, "short")))
    print()
    print("\n".join(_table(f"{args.steps}-step trajectory, each body parsed afresh, {rounds}:", runs, "fresh")))
    print()
    title = f"{args.steps}-step trajectory, each step's earlier messages the objects of the step before, {rounds}:"
    print("\n".join(_table(title, runs, "reused")))
    this = runs["this checkout"]
    verdicts = []
    for where, low, high in (("at 400 KB (350-450 KB bodies)", *TARGET_BODY), (f"at {args.steps} steps", 0, 1 << 62)):
        for key in ("fresh", "reused"):
            found = _summary(this[key], low, high)
            if found is not None:
                met = "met" if found[1] <= TARGET_P99_US else "MISSED"
                verdicts.append(f"  {where}, {key}: {met} ({found[1]:.1f} µs wall, {found[2]:.1f} µs CPU)")
    load = f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"
    print(f"\ntarget p99 <= {TARGET_P99_US:.0f} µs per step ({load}):")
    print("\n".join(verdicts))
    print(f"model file <= 1 MB: {'met' if size <= 1 << 20 else 'MISSED'} ({size / 1024:.1f} KiB)")
    if args.profile:
        print("\nprofile (3 passes, by own time):\n" + profile(model, args.steps))
    if args.json is not None:
        figures = _figures(runs, args.steps, mode.split(":")[0].split(" (")[0])
        draft = args.model.with_name("judge-draft.onnx")
        if draft.is_file() and draft != args.model:  # the shipped pair: the state and the draft judge
            sizes = [size, draft.stat().st_size]
            value = f"{sizes[0] / 1024:.0f} / {sizes[1] / 1024:.0f} KB"
            figures.append(figure("model files (state, draft)", value, "<= 1 MB", max(sizes) <= 1 << 20))
        else:
            value = f"{size / 1024:.0f} KB"
            figures.append(figure(f"model file ({args.model.name})", value, "<= 1 MB", size <= 1 << 20))
        command = f"python -m benchmarks.judge_latency --steps {args.steps} --passes {args.passes}"
        if args.baseline is not None:
            command += f" --baseline DIR --rounds {args.rounds}"
        write_result(args.json, "judge_latency", command, figures)
        print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

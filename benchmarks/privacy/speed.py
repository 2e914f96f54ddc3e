"""Scanning speed of this checkout and others, side by side in one run, with no cache helping.

    python -m benchmarks.privacy.speed [--rounds 4] [--repeat 1] [--baseline DIR_OR_REV ...]

The texts are built once, by this checkout: typical tool output (real source, logs and tool
output, as `benchmarks.privacy.evaluate` builds it), real logs (`/var/log`), value-dense text
(the labelled public corpus: a value on almost every line) and non-ASCII text. Each round runs
every checkout in a fresh process, in turn (the order reversed each round): it scans each text
with the default detectors after emptying every cache by value and of texts, so no figure is
flattered by values seen before; value-dense text is scanned as distinct 64 KiB slices, each
once (with `--repeat N`, N times a round, the best kept: on a machine other jobs load, one scan
moves by a tenth or more). Reported per checkout: the best and the median over rounds (CPU
time). A baseline given as a revision is exported with `git archive` and, unless `TANDEM_PURE`
is set, its hot modules are compiled as this checkout's are (`router.native_build`), so that
both run in the same mode; each run's mode is printed beside its figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.report import figure, write_result

# Run in each checkout: CPU time per text, caches emptied before each scan.
_RUNNER = """
import json, sys, time
from router.privacy import detect as engine

def clear():
    for name, module in list(sys.modules.items()):
        if name.startswith("router.privacy"):
            for item in list(vars(module).values()):
                if callable(getattr(item, "cache_clear", None)):
                    item.cache_clear()
    engine._SEEN.clear()

texts = json.load(open(sys.argv[1]))
for text in texts.pop("warm-up"):  # lazily loaded data (phone metadata per region) loaded first
    engine.detect_uncached(text)
repeat = int(sys.argv[3])
out = {}
for name, parts in texts.items():
    times = []
    for _ in range(repeat):  # the best of `repeat` scans of the whole text (others' jobs move one)
        spent = 0.0
        for text in parts:
            clear()
            started = time.process_time()
            engine.detect_uncached(text)
            spent += time.process_time() - started
        times.append(spent)
    out[name] = (min(times), sum(len(t.encode()) for t in parts))
from router.native import state
out["mode"] = state().describe()
json.dump(out, open(sys.argv[2], "w"))
"""

FIGURES = (  # name, unit, scale from (seconds, bytes), target
    ("typical", "ms/MiB", 1e3 * (1 << 20), 10.0),
    ("logs", "ms/MiB", 1e3 * (1 << 20), 40.0),
    ("value-dense", "µs/KB", 1e6 * 1024, 150.0),
    ("non-ASCII", "µs/KB", 1e6 * 1024, 60.0),
)


def texts() -> dict[str, list[str]]:
    from benchmarks.privacy.public import labelled, real_text

    typical_parts = [text for _source, text in real_text(0, 1 << 20)][:400]
    typical = ("\n".join(typical_parts) * 2)[: 1 << 20]
    logs = ""
    for path in sorted(Path("/var/log").rglob("*.log")):
        try:
            logs += path.read_bytes()[: 1 << 20].decode("utf-8", "replace") + "\n"
        except OSError:
            continue
        if len(logs) >= 1 << 20:
            break
    dense = "\n".join(d.text for d in labelled(1600, 7))
    slices = [dense[i : i + (64 << 10)] for i in range(0, min(len(dense), 1 << 20) - (64 << 10) + 1, 64 << 10)]
    non_ascii = ("Заказ № 42 отправлен клиенту; 東京都の顧客データを更新しました。Größe: mittel — " * 4000)[: 256 << 10]
    non_ascii += "\nKontakt: anna.muster@example.de, Tel. +49 30 12345678\n"
    warm_up = "\n".join(d.text for d in labelled(60, 8))
    return {
        "warm-up": [warm_up],
        "typical": [typical],
        "logs": [logs[: 1 << 20] or typical],
        "value-dense": slices,
        "non-ASCII": [non_ascii],
    }


def _checkout(given: str, folder: Path, here: Path) -> Path:
    if Path(given).is_dir():
        return Path(given).resolve()
    target = folder / given.replace("/", "_")
    target.mkdir()
    archive = subprocess.run(["git", "-C", str(here), "archive", given], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    if os.environ.get("TANDEM_PURE", "") in ("", "0"):
        # Compiled as this checkout is (where it can be: a checkout older than the compiled
        # modules has nothing to build and runs pure, as its mode line then says).
        subprocess.run(
            [sys.executable, "-m", "router.native_build", "--optional", "--if-stale"],
            cwd=target,
            env={**os.environ, "PYTHONPATH": str(target)},
            check=False,
            capture_output=True,
        )
    return target


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument(
        "--repeat", type=int, default=1, help="scans of each text per round, the best kept (caches emptied before each)"
    )
    parser.add_argument("--baseline", action="append", default=[], help="another checkout (folder or revision)")
    parser.add_argument("--json", type=Path, help="write the figures there (benchmarks/results/ shape)")
    args = parser.parse_args(argv)
    here = Path(__file__).resolve().parents[2]
    results: dict[str, dict[str, list[float]]] = {}
    modes: dict[str, set[str]] = {}
    with tempfile.TemporaryDirectory(prefix="privacy-speed-") as work:
        folder = Path(work)
        checkouts = {"this checkout": here} | {b: _checkout(b, folder, here) for b in args.baseline}
        texts_file = folder / "texts.json"
        built = texts()
        texts_file.write_text(json.dumps(built))
        sizes = {name: sum(len(t.encode()) for t in parts) for name, parts in built.items() if name != "warm-up"}
        print("texts:", ", ".join(f"{name} {size / 1024:.0f} KiB" for name, size in sizes.items()))
        for round_ in range(args.rounds):
            order = list(checkouts.items())
            for label, checkout in order if round_ % 2 == 0 else reversed(order):
                out = folder / "out.json"
                env = {**os.environ, "PYTHONPATH": str(checkout)}
                subprocess.run(
                    [sys.executable, "-c", _RUNNER, str(texts_file), str(out), str(args.repeat)],
                    check=True,
                    cwd=checkout,
                    env=env,
                )
                measured = json.loads(out.read_text())
                modes.setdefault(label, set()).add(measured.pop("mode"))
                for name, (seconds, size) in measured.items():
                    scale = dict((f[0], f[2]) for f in FIGURES)[name]
                    results.setdefault(label, {}).setdefault(name, []).append(seconds * scale / size)
    print(f"\nCPU time, {args.rounds} rounds, checkouts in turn (best / median):")
    print(f"{'':16}" + "".join(f"{name + ' (' + unit + ')':>26}" for name, unit, _s, _t in FIGURES))
    for label, figures in results.items():
        cells = "".join(f"{min(figures[n]):>13.1f} / {statistics.median(figures[n]):<10.1f}" for n, *_ in FIGURES)
        print(f"{label[:16]:16}{cells}")
    print(f"{'target':16}" + "".join(f"{'<= ' + format(t, 'g'):>26}" for _n, _u, _s, t in FIGURES))
    for label, seen in modes.items():
        print(f"{label}: {'; '.join(sorted(seen))}")
    if args.json:
        rows = []
        for label, figures in results.items():
            name = "this checkout" if label == "this checkout" else f"baseline {label}"
            for figure_name, unit, _scale, target in FIGURES:
                best = min(figures[figure_name])
                median = statistics.median(figures[figure_name])
                for what, value in ((f"best of {args.rounds}", best), (f"median of {args.rounds}", median)):
                    rows.append(
                        figure(
                            f"{figure_name} ({name}), {what}",
                            f"{value:.1f} {unit}",
                            f"<= {target:g} {unit}",
                            value <= target,
                        )
                    )
        pure = os.environ.get("TANDEM_PURE", "") not in ("", "0")
        command = (
            ("TANDEM_PURE=1 " if pure else "")
            + "python -m benchmarks.privacy.speed --rounds "
            + str(args.rounds)
            + (f" --repeat {args.repeat}" if args.repeat != 1 else "")
            + "".join(f" --baseline {b}" for b in args.baseline)
        )
        write_result(args.json, "privacy.speed", command, rows)


if __name__ == "__main__":
    main()

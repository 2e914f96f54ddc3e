"""Memory a slow-reading stream costs the gateway: `python -m benchmarks.slow_streams`.

`[--streams 50] [--answer-mb 32] [--seconds 8]`: a real `tandem serve` (one worker, defaults),
an upstream on 127.0.0.1 streaming each answer as fast as the gateway reads it, and clients that
read 1 KB every 0.5 s. Prints the gateway's RSS before and at its peak while the streams run
(benchmarks/slow_streams/workload.py). Target (issue 25): 50 streams grow it by <= 50 MB.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.report import figure, write_result
from benchmarks.slow_streams.workload import measure

TARGET_MB = 50.0


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.slow_streams", description=__doc__)
    parser.add_argument("--streams", type=int, default=50)
    parser.add_argument("--answer-mb", type=float, default=32.0)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument(
        "--json", type=Path, default=None, help="also write the figures for `python -m benchmarks.report` to this file"
    )
    args = parser.parse_args()
    figures = measure(args.streams, int(args.answer_mb * 2**20), args.seconds)
    print(figures.line())
    target_mb = TARGET_MB * args.streams / 50
    ok = figures.growth_mb <= target_mb
    print(f"target: <= {target_mb:g} MB growth: {'met' if ok else 'NOT met'}")
    if args.json is not None:
        name = f"RSS growth, {args.streams} clients reading 1 KB every 0.5 s from fast {args.answer_mb:g} MB answers"
        value = f"+{figures.growth_mb:.1f} MB"
        command = f"python -m benchmarks.slow_streams --streams {args.streams} --answer-mb {args.answer_mb:g}"
        write_result(args.json, "slow_streams", command, [figure(name, value, f"<= {target_mb:g} MB", ok)])
        print(f"figures written to {args.json}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

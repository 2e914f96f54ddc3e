"""Memory a slow-reading stream costs the gateway: `python -m benchmarks.slow_streams`.

`[--streams 50] [--answer-mb 32] [--seconds 8]`: a real `tandem serve` (one worker, defaults),
an upstream on 127.0.0.1 streaming each answer as fast as the gateway reads it, and clients that
read 1 KB every 0.5 s. Prints the gateway's RSS before and at its peak while the streams run
(benchmarks/slow_streams/workload.py). Target (issue 25): 50 streams grow it by <= 50 MB.
"""

from __future__ import annotations

import argparse

from benchmarks.slow_streams.workload import measure

TARGET_MB = 50.0


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.slow_streams", description=__doc__)
    parser.add_argument("--streams", type=int, default=50)
    parser.add_argument("--answer-mb", type=float, default=32.0)
    parser.add_argument("--seconds", type=float, default=8.0)
    args = parser.parse_args()
    figures = measure(args.streams, int(args.answer_mb * 2**20), args.seconds)
    print(figures.line())
    ok = figures.growth_mb <= TARGET_MB * args.streams / 50
    print(f"target: <= {TARGET_MB * args.streams / 50:g} MB growth: {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

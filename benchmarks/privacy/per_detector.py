"""Where detection time goes: CPU time per detector, in µs per KB, on typical tool output and on
value-dense text (the same texts as `benchmarks.privacy.evaluate`'s speed figures).

    python -m benchmarks.privacy.per_detector [--repeat 3]

Each text is scanned `--repeat` times and the best time of each part is kept. Value-dense text
is scanned as distinct texts (fresh slices each round), and the caches by value are emptied
before each round, so no part is flattered by having seen the values before.
"""

from __future__ import annotations

import argparse
import collections
import time

from benchmarks.privacy.cold import clear_caches
from benchmarks.privacy.public import labelled, real_text
from router.privacy import detect as engine
from router.privacy import id_columns
from router.privacy.anchors import char_offsets, continuation_bytes, utf8
from router.privacy.secret_rules import RULES

_PROVIDER_RULES = {rule[0] for rule in RULES}


def profile(text: str) -> dict[str, float]:
    """Seconds per part of one scan of `text` (the steps of detect._own, timed apart; the
    column pass's header words are found in hyperscan's pass)."""
    assert engine._ENGINE is not None, "hyperscan is needed for this profile"
    costs: dict[str, float] = collections.Counter()
    clock = time.process_time
    started = clock()
    data = utf8(text)
    hits, column_ends = engine._ENGINE.candidates(data)
    continuation = None
    if len(data) != len(text):
        continuation = continuation_bytes(data, len(text))
        positions = [p for spans in hits.values() for span in spans for p in span]
        mapping = char_offsets(data, positions, len(text), continuation)
        hits = {i: [(mapping[s], mapping[e]) for s, e in spans] for i, spans in hits.items()}
    costs["hyperscan pass"] += clock() - started
    started = clock()
    id_columns.COLUMNS.find(text, data, column_ends, continuation)
    costs["table columns"] += clock() - started
    kept = engine._Kept()
    shared: dict[tuple[bytes, int, int], list[list[int]]] = {}
    for index in sorted(hits):
        detector = engine.DETECTORS[index]
        started = clock()
        kept.add(detector, engine.run(detector, text, hits[index], kept.taken, shared))
        name = "provider rules" if detector.rule in _PROVIDER_RULES else detector.rule or detector.type
        costs[name] += clock() - started
    return costs


def texts() -> tuple[str, list[str]]:
    typical_parts = [text for _source, text in real_text(0, 1 << 20)][:400]
    typical = ("\n".join(typical_parts) * 2)[: 1 << 20]
    dense = "\n".join(d.text for d in labelled(1600, 7))
    slices = [dense[i : i + (256 << 10)] for i in range(0, len(dense) - (256 << 10) + 1, 256 << 10)]
    return typical, slices


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    typical, slices = texts()
    rows: dict[str, dict[str, float]] = {}
    for label, chosen in (("typical", [typical] * args.repeat), ("value-dense", slices[: args.repeat])):
        best: dict[str, float] = {}
        for text in chosen:
            clear_caches()
            size_kb = len(text.encode()) / 1024
            for part, seconds in profile(text).items():
                best[part] = min(best.get(part, float("inf")), seconds * 1e6 / size_kb)
        rows[label] = best
    parts = sorted(set(rows["typical"]) | set(rows["value-dense"]), key=lambda p: -rows["value-dense"].get(p, 0.0))
    print(f"{'part':34} {'typical µs/KB':>14} {'value-dense µs/KB':>18}")
    for part in parts:
        print(f"{part:34} {rows['typical'].get(part, 0.0):>14.2f} {rows['value-dense'].get(part, 0.0):>18.1f}")
    print(f"{'total':34} {sum(rows['typical'].values()):>14.2f} {sum(rows['value-dense'].values()):>18.1f}")


if __name__ == "__main__":
    main()

"""People's data in the forms agents see: precision and recall of names, postal addresses,
phones and national ids (people_forms.py, values from people_values.py), false positives per
MiB of real text per kind, and the cost of the opt-in kinds, names and addresses timed apart.

    python -m benchmarks.privacy.people [--items 700] [--logs DIR]

The development part (seed 0, even wordings, half the name and street pools) is what the rules
were tuned on; the held-out part (seed 1, odd wordings, the other halves) is scored for the
acceptance figures. `--logs DIR`: public log files to count false positives on as well (e.g.
the `*_2k.log` samples of github.com/logpai/loghub; not shipped with Tandem).
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.privacy.people_forms import Item, items
from router.privacy import addresses
from router.privacy.detect import detect
from router.privacy.names import person

OPT_IN = frozenset({"person", "address"})
TARGETS = {"PERSON": (0.90, 0.85), "ADDRESS": (0.90, 0.80)}  # kind -> (precision, recall)
_ID = {"US_SSN": "ID", "NATIONAL_ID": "ID"}
SCORED = {"PERSON", "ADDRESS", "PHONE", "ID"}
# Real values, not false alarms: the public logs hold their clients' IP addresses and e-mail
# addresses (counted and shown, left out of the false positives per MiB).
REAL_VALUES = {"IP_ADDRESS", "EMAIL"}


def score(part_items: list[Item]) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """Per kind [TP, FP, FN] and per form [found, labelled]. A label is found when one finding of
    its kind covers it; a finding is true when it overlaps a label of its kind."""
    counts: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
    forms: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    for item in part_items:
        findings = [(_ID.get(f.type, f.type), f.start, f.end) for f in detect(item.text, OPT_IN)]
        findings = [f for f in findings if f[0] in SCORED]  # e-mail addresses are not labelled here
        truth = [(_ID.get(kind, kind), start, end) for kind, start, end in item.truth]
        for kind, start, end in truth:
            found = any(k == kind and s <= start and end <= e for k, s, e in findings)
            counts[kind][0 if found else 2] += 1
            forms[item.form][0] += found
            forms[item.form][1] += 1
        forms.setdefault(item.form, [0, 0])
        for kind, start, end in findings:
            if not any(k == kind and s < end and start < e for k, s, e in truth):
                counts[kind][1] += 1
                forms[item.form + " (false positives)"][0] += 1
    return dict(sorted(counts.items())), dict(forms)


def real_text(logs: Path | None) -> list[tuple[str, str]]:
    """(source, text) of real text with no people's data in it: this repository's code (the
    privacy tests and benchmarks, which hold made-up values, left out), tool output captured
    here, and the public logs given."""
    root = Path(__file__).resolve().parents[2]
    out = []
    for folder in ("router", "judge", "tests", "benchmarks", "deploy"):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".py", ".yaml", ".yml", ".md", ".json") or not path.is_file():
                continue
            # (The phone checks' tests, `test_phone_lengths.py`, are privacy tests by another name.)
            privacy = "privacy" in path.name or "privacy" in path.parts or path.name == "test_phone_lengths.py"
            if privacy or "fixtures" in path.parts:
                continue
            out.append(("source", path.read_text(errors="replace")[:200_000]))
    for command in (
        [sys.executable, "-m", "pip", "list", "-v"],
        [sys.executable, "-m", "pip", "show", "-f", "pip", "httpx", "starlette"],
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests/test_settings.py"],
        ["ps", "aux"],
        ["df", "-h"],
        ["ls", "-la", "/usr/lib", "/etc"],
    ):
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False, cwd=root)
            out.append(("tool output", result.stdout + result.stderr))
        except (OSError, subprocess.TimeoutExpired):
            continue
    if logs is not None:
        for path in sorted(logs.glob("*.log")):
            out.append(("public logs", path.read_text(errors="replace")))
    return out


def false_positives(texts: list[tuple[str, str]]) -> tuple[float, dict[str, dict[str, int]]]:
    """MiB scanned, and findings per source per kind (default kinds plus the opt-in ones)."""
    size = sum(len(text.encode()) for _source, text in texts) / (1 << 20)
    found: dict[str, dict[str, int]] = collections.defaultdict(collections.Counter)
    for source, text in texts:
        for finding in detect(text, OPT_IN):
            found[source][finding.type] += 1
    return size, found


def _cpu(call: object, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        call()  # type: ignore[operator]
        best = min(best, time.process_time() - started)
    return best


def speed(dense: str, typical: str) -> dict[str, tuple[float, float]]:
    """Per finder: (ms per MiB of typical text, µs per KB of value-dense text)."""
    figures = {}
    for name, finder in (("names", person.find), ("addresses", addresses.find)):
        figures[name] = (
            _cpu(lambda f=finder: f(typical)) * 1e3 * (1 << 20) / len(typical.encode()),
            _cpu(lambda f=finder: f(dense)) * 1e6 * 1024 / len(dense.encode()),
        )
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=700)
    parser.add_argument("--logs", type=Path, default=os.environ.get("TANDEM_PUBLIC_LOGS") or None)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print("people's data in agent forms (privacy_detect: [person, address]; values from our own generator)")
    for part, label in ((0, "development"), (1, "held-out")):
        part_items = items(args.items, seed=part, part=part)
        counts, forms = score(part_items)
        print(f"\n{label} part: {len(part_items)} items, {sum(len(i.truth) for i in part_items)} labels")
        print(f"  {'kind':10} {'TP':>5} {'FP':>4} {'FN':>4} {'precision':>9} {'recall':>7}  target")
        for kind, (tp, fp, fn) in counts.items():
            precision = tp / (tp + fp) if tp + fp else 1.0
            recall = tp / (tp + fn) if tp + fn else 1.0
            target = TARGETS.get(kind)
            mark = ""
            if target and part == 1 and (precision < target[0] or recall < target[1]):
                mark = "  MISSED"
            goal = f"{target[0]:.2f}/{target[1]:.2f}" if target else "-"
            print(f"  {kind:10} {tp:>5} {fp:>4} {fn:>4} {precision:>9.3f} {recall:>7.3f}  {goal}{mark}")
        print(
            "  recall by form:",
            ", ".join(f"{form} {found / total:.2f}" for form, (found, total) in forms.items() if total),
        )
        print("  false positives by form:", ", ".join(f"{f[:-18]} {n}" for f, (n, _t) in forms.items() if "false" in f))
    texts = real_text(args.logs)
    size, found = false_positives(texts)
    print(f"\nfalse positives on real text ({size:.2f} MiB; sources: {', '.join(sorted({s for s, _ in texts}))})")
    totals: collections.Counter[str] = collections.Counter()
    for source, kinds in sorted(found.items()):
        totals.update(kinds)
        print(f"  {source}: " + (", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) or "none"))
    default = sum(v for k, v in totals.items() if k not in ("PERSON", "ADDRESS") and k not in REAL_VALUES)
    print(
        f"  per MiB: default kinds but IP and e-mail addresses {default / size:.1f} (target 10), "
        f"PHONE {totals['PHONE'] / size:.1f} (target 2), NATIONAL_ID {totals['NATIONAL_ID'] / size:.1f}, "
        f"US_SSN {totals['US_SSN'] / size:.1f}, "
        f"PERSON {totals['PERSON'] / size:.1f}, ADDRESS {totals['ADDRESS'] / size:.1f}"
    )
    dense = "\n".join(i.text for i in items(300, seed=2, part=1))
    typical = "\n".join(text for _source, text in texts)[: 1 << 20]
    print("\ncost of the opt-in kinds (CPU time, best of 3)")
    for name, (typical_ms, dense_us) in speed(dense, typical).items():
        print(
            f"  {name}: {typical_ms:.1f} ms per MiB of real text, {dense_us:.0f} us per KB of agent forms "
            f"({dense_us * 32 / 1000:.2f} ms for a step with 32 KB of new text)"
        )
    print(f"(ran {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()

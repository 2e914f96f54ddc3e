"""Findings per MiB of real text with no planted values, per kind and per source: what the
detectors find in this repository's code and docs, captured tool output, the machine's logs and
public logs (loghub's `*_2k.log` samples, github.com/logpai/loghub, with `--logs DIR`).

    python -m benchmarks.privacy.false_positives [--logs DIR]

Default kinds, and the opt-in `PERSON` and `ADDRESS` apart. IP and e-mail addresses in logs and
in `git log` are mostly real values (hosts, authors), not false alarms: they are counted, and
shown apart from the total of the other default kinds.
"""

from __future__ import annotations

import argparse
import collections
import os
from pathlib import Path

from benchmarks.privacy.people import real_text
from router.privacy.detect import detect

OPT_IN = frozenset({"person", "address"})
REAL_VALUES = ("IP_ADDRESS", "EMAIL")  # mostly real values in logs and tool output


def texts(logs: Path | None) -> list[tuple[str, str]]:
    """(source, text): the people benchmark's real text plus the machine's logs."""
    out = real_text(logs)
    system = ""
    for path in sorted(Path("/var/log").rglob("*.log")):
        try:
            system += path.read_bytes()[: 1 << 20].decode("utf-8", "replace") + "\n"
        except OSError:
            continue
    if system:
        out.append(("system logs", system[: 2 << 20]))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--logs", type=Path, default=os.environ.get("TANDEM_PUBLIC_LOGS") or None)
    args = parser.parse_args(argv)
    sizes: dict[str, float] = collections.Counter()
    found: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for source, text in texts(args.logs):
        sizes[source] += len(text.encode()) / (1 << 20)
        for finding in detect(text, OPT_IN):
            found[finding.type][source] += 1
    sources = sorted(sizes)
    total = sum(sizes.values())
    print(f"findings per MiB of real text ({total:.2f} MiB: " + ", ".join(f"{s} {sizes[s]:.2f}" for s in sources) + ")")
    print(f"{'kind':18}" + "".join(f"{s:>14}" for s in sources) + f"{'all':>10}")
    for kind in sorted(found, key=lambda k: -sum(found[k].values())):
        cells = "".join(f"{found[kind][s] / sizes[s]:>14.2f}" for s in sources)
        print(f"{kind:18}{cells}{sum(found[kind].values()) / total:>10.2f}")
    default = {
        s: sum(found[k][s] for k in found if k not in REAL_VALUES and k not in ("PERSON", "ADDRESS")) for s in sources
    }
    cells = "".join(f"{default[s] / sizes[s]:>14.2f}" for s in sources)
    print(f"{'default kinds*':18}{cells}{sum(default.values()) / total:>10.2f}")
    print("* without IP and e-mail addresses (real values) and the opt-in PERSON and ADDRESS; target 10 per MiB,")
    print("  PHONE 2 per MiB")


if __name__ == "__main__":
    main()

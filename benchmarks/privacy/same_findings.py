"""Whether two checkouts find exactly the same values in the same places: the check a speed
change of the detectors must pass (same findings, span for span).

    python -m benchmarks.privacy.same_findings --baseline REV_OR_DIR [--logs DIR]

The corpus is built once, by this checkout: real text of both parts (this repository's source,
installed packages, /var/log, tool output), the labelled public corpus (both parts and the
speed figures' value-dense text), the generated corpus, the credential and people agent forms
(both parts), inputs built to stress the scanners, and with `--logs` public logs (loghub's
`*_2k.log` samples). Each checkout then scans it in its own process (default kinds, and the
opt-in `person` and `address` kinds on the people forms), and every finding is compared. A
baseline given as a revision is exported with `git archive` into a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# Run in each checkout (its own `router` on the path): findings per text as lists.
_RUNNER = """
import json, sys
from router.privacy.detect import detect
texts = json.load(open(sys.argv[1]))
out = []
for optional, text in texts:
    found = detect(text, frozenset(optional))
    out.append([[f.type, f.start, f.end, f.value, f.rule] for f in found])
json.dump(out, open(sys.argv[2], "w"))
"""


def corpus(logs: Path | None) -> list[tuple[list[str], str]]:
    """(opt-in kinds, text) to scan."""
    from benchmarks.privacy import agent_forms, corpus, people_forms, public

    default: list[str] = []
    opt_in = ["address", "person"]
    texts: list[tuple[list[str], str]] = []
    for part in (0, 1):
        texts += [(default, text) for _source, text in public.real_text(part, 1 << 20)]
        texts += [(default, d.text) for d in public.labelled(800, part)]
        texts += [(default, item.text) for item in agent_forms.items(150, part)]
        texts += [(opt_in, item.text) for item in people_forms.items(300, 11 + part, part)]
        texts += [(default, item.text) for item in people_forms.items(300, 11 + part, part)]
    texts.append((default, "\n".join(d.text for d in public.labelled(400, 7))[: 256 << 10]))
    texts += [(default, d.text) for d in corpus.generate(600, 0)]
    if logs is not None:
        texts += [(default, path.read_text(errors="replace")) for path in sorted(logs.glob("*.log"))]
    digits = "".join(str(i % 10) for i in range(20_000))
    texts += [
        (default, digits),
        (default, " ".join(digits[i : i + 4] for i in range(0, 8000, 4))),
        (default, "tel: " + "+1 415 555 2671, " * 500),
        (default, "a=" * 5000 + "password=" + "x1" * 3000),
        (default, ("QUJD" * 5000 + "\n") * 4),
        # Non-ASCII: mostly (offsets walked) and a little (continuation bytes found and counted).
        (default, "東京都の顧客 電話 03-1234-5678、メール yamada@example.jp。Größe № 42 — " * 300),
        (default, "log line ok " * 2000 + "café +44 20 7946 0958 né " + "x=1 " * 2000 + "ünï a@b.example"),
    ]
    return texts


def findings(checkout: Path, texts_file: Path, out_file: Path) -> list[list[list[object]]]:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    subprocess.run([sys.executable, "-c", _RUNNER, str(texts_file), str(out_file)], check=True, cwd=checkout, env=env)
    result: list[list[list[object]]] = json.loads(out_file.read_text())
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", required=True, help="a git revision or a checkout's folder")
    parser.add_argument("--logs", type=Path, help="a folder of public logs (*.log)")
    args = parser.parse_args(argv)
    here = Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory(prefix="same-findings-") as work:
        folder = Path(work)
        baseline = Path(args.baseline)
        if not baseline.is_dir():
            baseline = folder / "baseline"
            baseline.mkdir()
            archive = subprocess.run(
                ["git", "-C", str(here), "archive", args.baseline], capture_output=True, check=True
            )
            subprocess.run(["tar", "-x", "-C", str(baseline)], input=archive.stdout, check=True)
        texts = corpus(args.logs)
        texts_file = folder / "texts.json"
        texts_file.write_text(json.dumps(texts))
        size = sum(len(text.encode()) for _optional, text in texts) / (1 << 20)
        before = findings(baseline, texts_file, folder / "before.json")
        after = findings(here, texts_file, folder / "after.json")
    differ = [i for i, (b, a) in enumerate(zip(before, after, strict=True)) if b != a]
    total = sum(len(found) for found in after)
    kinds: dict[str, int] = {}
    for found in after:
        for finding in found:
            kinds[str(finding[0])] = kinds.get(str(finding[0]), 0) + 1
    print(f"{len(texts)} texts, {size:.1f} MiB, {total} findings ({sum(len(f) for f in before)} before)")
    print("  by kind:", ", ".join(f"{k} {v}" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])))
    for index in differ[:10]:
        gone = [f for f in before[index] if f not in after[index]]
        new = [f for f in after[index] if f not in before[index]]
        print(f"text {index}: only before {gone[:5]}, only after {new[:5]}")
    print("same findings" if not differ else f"DIFFERENT findings in {len(differ)} texts")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())

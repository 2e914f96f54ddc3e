"""Tandem's detector on a public labelled corpus: Presidio's synthetic sentences.

    python -m benchmarks.privacy.presidio_corpus --corpus PATH [--part dev|heldout|both] [--show N]

PATH: a checkout or a bare git directory of github.com/microsoft/presidio-research (MIT licence;
measured at commit 7622dec), or the file `data/synth_dataset_v2.json` itself. Not shipped
with Tandem. 1,500 sentences made from templates with Faker-like values, each value labelled
with its span and type.

The detector runs as a route with `privacy_detect: [person, address]` runs it (the default
kinds plus PERSON and ADDRESS). The corpus's types map to ours (`KINDS`); the types that are
not private values Tandem redacts (places, organisations, dates, titles, ages, nationalities,
domain names) are not scored, but a finding that lands only on one of them is a false positive
of its kind, and counted apart as well (`on unscored`). A labelled value is found when a finding
of its kind overlaps it; `chars` is the share of the labelled characters that findings of the
kind cover. A finding is true when it overlaps a labelled value of its kind. A street address
the corpus splits into spans (`20789`, `Allika 46`, `Suite 501`, then a ZIP_CODE or postcode, with
the city and country between them labelled GPE) is one address, from its first span to its last.

Parts: the development part (even `template_id`) is what the rules may be tuned on; the
held-out part (odd `template_id`) is scored only for the acceptance figures.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from router.privacy.detect import detect

OPT_IN = frozenset({"person", "address"})
FILE = "data/synth_dataset_v2.json"
# The corpus's type -> ours. US_DRIVER_LICENSE: Tandem has no driver's licence kind; the nearest
# is NATIONAL_ID (an id number of a person), scored there.
KINDS = {
    "PERSON": "PERSON",
    "STREET_ADDRESS": "ADDRESS",
    "ZIP_CODE": "ADDRESS",
    "PHONE_NUMBER": "PHONE",
    "EMAIL_ADDRESS": "EMAIL",
    "CREDIT_CARD": "CARD",
    "IBAN_CODE": "IBAN",
    "US_SSN": "US_SSN",
    "IP_ADDRESS": "IP_ADDRESS",
    "US_DRIVER_LICENSE": "NATIONAL_ID",
}
UNSCORED = ("GPE", "ORGANIZATION", "DATE_TIME", "TITLE", "AGE", "NRP", "DOMAIN_NAME")
_JOIN = re.compile(r"[\s,.;:-]*")


@dataclass(frozen=True)
class Sentence:
    text: str
    template: int
    labels: tuple[tuple[str, int, int], ...]  # (type as the corpus names it, start, end)


def load(path: Path) -> list[Sentence]:
    """The corpus's sentences from a checkout, a bare git directory or the JSON file."""
    if path.is_file():
        raw = path.read_text()
    elif (path / FILE).is_file():
        raw = (path / FILE).read_text()
    else:
        raw = subprocess.run(
            ["git", "--git-dir", str(path), "show", f"HEAD:{FILE}"], capture_output=True, text=True, check=True
        ).stdout
    return [
        Sentence(
            row["full_text"],
            int(row["template_id"]),
            tuple(sorted((s["entity_type"], int(s["start_position"]), int(s["end_position"])) for s in row["spans"])),
        )
        for row in json.loads(raw)
    ]


def part_of(sentence: Sentence) -> str:
    return "dev" if sentence.template % 2 == 0 else "heldout"


def _joined(sentence: Sentence, end: int, start: int) -> bool:
    """Whether only spaces, punctuation and place names (GPE: the city, the country) stand
    between two address spans."""
    gap = list(sentence.text[end:start])
    for kind, s, e in sentence.labels:
        if kind == "GPE" and end <= s and e <= start:
            gap[s - end : e - end] = " " * (e - s)
    return _JOIN.fullmatch("".join(gap)) is not None


def truth(sentence: Sentence) -> list[tuple[str, int, int]]:
    """Our kinds' labelled values, with address spans the corpus split merged: a STREET_ADDRESS
    and the ZIP_CODE (or further STREET_ADDRESS) separated from it only by spaces, punctuation
    and place names are one address (the places inside it). A ZIP_CODE on its own is not
    scored."""
    out: list[tuple[str, int, int]] = []
    street: list[bool] = []  # per address-like label so far: whether a street is in it
    for kind, start, end in sentence.labels:
        ours = KINDS.get(kind)
        if ours is None:
            continue
        if ours == "ADDRESS" and out and out[-1][0] == "ADDRESS" and _joined(sentence, out[-1][2], start):
            out[-1] = ("ADDRESS", out[-1][1], max(end, out[-1][2]))
            street[-1] = street[-1] or kind == "STREET_ADDRESS"
            continue
        out.append((ours, start, end))
        street.append(kind == "STREET_ADDRESS")
    return [label for label, has_street in zip(out, street, strict=True) if label[0] != "ADDRESS" or has_street]


@dataclass
class Counts:
    tp: int = 0  # labelled values found
    fn: int = 0
    true_findings: int = 0
    fp: int = 0  # findings that overlap no labelled value of their kind
    fp_unscored: int = 0  # of which on an unscored label only
    chars: int = 0
    chars_covered: int = 0


def score(
    sentences: list[Sentence],
) -> tuple[dict[str, Counts], dict[str, list[tuple[str, str, str]]], collections.Counter[str]]:
    """Per kind counts; per kind examples of misses and false positives (kind, what, sentence);
    where false positives land (our kind -> the corpus's unscored type)."""
    counts: dict[str, Counts] = collections.defaultdict(Counts)
    examples: dict[str, list[tuple[str, str, str]]] = collections.defaultdict(list)
    landed: collections.Counter[str] = collections.Counter()
    for sentence in sentences:
        labels = truth(sentence)
        findings = [(f.type, f.start, f.end) for f in detect(sentence.text, OPT_IN)]
        for kind, start, end in labels:
            mine = [(s, e) for k, s, e in findings if k == kind and s < end and start < e]
            count = counts[kind]
            count.tp += bool(mine)
            count.fn += not mine
            count.chars += end - start
            count.chars_covered += sum(1 for i in range(start, end) if any(s <= i < e for s, e in mine))
            if not mine:
                examples[kind].append(("miss", sentence.text[start:end], sentence.text))
        for kind, start, end in findings:
            count = counts[kind]
            if any(k == kind and s < end and start < e for k, s, e in labels):
                count.true_findings += 1
                continue
            count.fp += 1
            under = {k for k, s, e in sentence.labels if s < end and start < e}
            if under and under <= set(UNSCORED):
                count.fp_unscored += 1
                landed[f"{kind} on {'/'.join(sorted(under))}"] += 1
            examples[kind].append(("false", sentence.text[start:end], sentence.text))
    return dict(sorted(counts.items())), examples, landed


def table(counts: dict[str, Counts]) -> list[str]:
    lines = [
        f"  {'kind':12} {'labels':>6} {'found':>5} {'recall':>6} {'chars':>5} {'FP':>4} {'on unsc.':>8} {'precision':>9}"
    ]
    for kind, c in counts.items():
        recall = c.tp / (c.tp + c.fn) if c.tp + c.fn else float("nan")
        precision = c.true_findings / (c.true_findings + c.fp) if c.true_findings + c.fp else float("nan")
        chars = c.chars_covered / c.chars if c.chars else float("nan")
        lines.append(
            f"  {kind:12} {c.tp + c.fn:>6} {c.tp:>5} {recall:>6.3f} {chars:>5.2f} {c.fp:>4} {c.fp_unscored:>8} {precision:>9.3f}"
        )
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, required=True, help="presidio-research checkout, bare git dir or JSON")
    parser.add_argument("--part", choices=("dev", "heldout", "both"), default="both")
    parser.add_argument("--show", type=int, default=0, help="print N misses and false positives per kind")
    parser.add_argument("--json", type=Path, help="write the per kind figures here")
    args = parser.parse_args(argv)
    sentences = load(args.corpus)
    types = collections.Counter(kind for s in sentences for kind, _s, _e in s.labels)
    print(f"Presidio synthetic sentences: {len(sentences)} sentences; privacy_detect: [person, address]")
    print("  not scored (not values Tandem redacts): " + ", ".join(f"{k} {types[k]}" for k in UNSCORED))
    out: dict[str, object] = {}
    for part in ("dev", "heldout") if args.part == "both" else (args.part,):
        chosen = [s for s in sentences if part_of(s) == part]
        counts, examples, landed = score(chosen)
        label = "development part (even template_id)" if part == "dev" else "held-out part (odd template_id)"
        print(f"\n{label}: {len(chosen)} sentences")
        print("\n".join(table(counts)))
        if landed:
            print(
                "  false positives on unscored labels only: " + ", ".join(f"{k} {v}" for k, v in landed.most_common())
            )
        out[part] = {
            kind: {
                "labels": c.tp + c.fn,
                "found": c.tp,
                "false_positives": c.fp,
                "fp_on_unscored": c.fp_unscored,
                "true_findings": c.true_findings,
                "chars": c.chars,
                "chars_covered": c.chars_covered,
            }
            for kind, c in counts.items()
        }
        if args.show:
            for kind, rows in sorted(examples.items()):
                for what in ("miss", "false"):
                    for _w, value, text in [r for r in rows if r[0] == what][: args.show]:
                        print(f"    {kind} {what}: {value!r}  in  {text!r}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()

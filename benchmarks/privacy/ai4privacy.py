"""Tandem's detector on rows of ai4privacy's PII-masking datasets, as two public repositories keep them.

    python -m benchmarks.privacy.ai4privacy --openlabels DIR [--safeingest DIR] [--perturbed] [--json PATH] [--show N]

ai4privacy's datasets (huggingface.co/ai4privacy) are the most used public labelled PII corpora:
sentences of customer support, education, health and legal text written by language models
around values from a generator, each value labelled with its span. The Hugging Face hub cannot be
reached from the machines Tandem is built on, so the rows are read from two GitHub repositories
that keep some of them as test data. Nothing of them is committed here; each DIR is a checkout or
a bare git directory of the repository (files are read with `git show`), or the file itself.

- **English** (2,000 rows, 3,146 labels): github.com/chillbot-io/openlabels at commit a87031a,
  `openrisk/tests/benchmark_data/outputs/ai4privacy_samples.jsonl` (the file left the
  repository in a later commit). The repository does not say which of ai4privacy's datasets the
  rows come from (their values are those of pii-masking-200k's English part) and maps the
  dataset's labels to 11 of its own: NAME, EMAIL, PHONE, ADDRESS (a street's name), DOB, SSN,
  CREDIT_CARD, IBAN, ACCOUNT, IP and URL; other values in the text (passwords, PINs, card
  security codes, crypto wallets, user names, companies) carry no label. The data stays under
  ai4privacy's licence (its own terms, for research and evaluation); the repository's code is
  MIT and Apache-2.0.
- **French and Dutch** (250 rows): github.com/HansF/safeingest at commit e7c2ef6,
  `tests/fixtures/ai4privacy_fr_nl/subset.jsonl`: rows of open-pii-masking-500k-ai4privacy
  (CC BY 4.0, built with Llama) with only their EMAIL, TELEPHONENUM and CREDITCARDNUMBER labels.

Detector: `router.privacy.detect.detect(text, {person, address})` on the English rows (a route
with `privacy_detect: [person, address]`), the default kinds on the others. Scored: a label is
found when a finding of its kind overlaps it. NAME is PERSON, ADDRESS ADDRESS, CREDIT_CARD CARD,
SSN US_SSN or NATIONAL_ID, IBAN and ACCOUNT IBAN (Tandem's kind for a bank account), IP
IP_ADDRESS; DOB and URL are no kind of Tandem's and not scored. A finding that overlaps no label
is counted per kind as `on no label`: not all false, since the rows leave values unlabelled.

The values are the generator's, not real ones: most card numbers fail the Luhn check (22 of 188
pass it), phone numbers mix separators and country codes no plan has (`+111.752 170.7596`) and
SSNs are Swiss AVS numbers cut short (`756.4153.4317`). Tandem takes a number a sentence calls a
card's whatever its check digit, but not an unlabelled number that fails it, nor phones no
numbering plan allows. Scored blind first, then rules written from the misses: the figures
after are not blind (README.md).
"""

from __future__ import annotations

import argparse
import collections
import json
from dataclasses import dataclass
from pathlib import Path

from benchmarks.privacy.repo_files import file_at
from benchmarks.report import figure, write_result
from router.privacy.detect import detect

COMMAND = "python -m benchmarks.privacy.ai4privacy --openlabels DIR --safeingest DIR"
OPENLABELS = (
    "a87031af29c81e09742bfe4ce91c6546a7fe4c0d",
    "openrisk/tests/benchmark_data/outputs/ai4privacy_samples.jsonl",
)
# The same rows, and 723 of them perturbed by that repository (`adversarial_type`: zero-width
# characters, homoglyphs, case, delimiters, spaces inside values, partial masks).
PERTURBED = ("a87031af29c81e09742bfe4ce91c6546a7fe4c0d", "openrisk/data/ai4privacy.jsonl")
SAFEINGEST = ("e7c2ef6671e2885a521abd9ef6267f1c85794076", "tests/fixtures/ai4privacy_fr_nl/subset.jsonl")
OPT_IN = frozenset({"person", "address"})
KINDS: dict[str, frozenset[str]] = {
    "NAME": frozenset({"PERSON"}),
    "ADDRESS": frozenset({"ADDRESS"}),
    "EMAIL": frozenset({"EMAIL"}),
    "PHONE": frozenset({"PHONE"}),
    "IP": frozenset({"IP_ADDRESS"}),
    "CREDIT_CARD": frozenset({"CARD"}),
    "IBAN": frozenset({"IBAN"}),
    "ACCOUNT": frozenset({"IBAN"}),
    "SSN": frozenset({"US_SSN", "NATIONAL_ID"}),
    "TELEPHONENUM": frozenset({"PHONE"}),
    "CREDITCARDNUMBER": frozenset({"CARD"}),
}


@dataclass(frozen=True)
class Row:
    text: str
    language: str
    labels: tuple[tuple[str, int, int], ...]  # (label as the rows name it, start, end)


def _read(source: str, commit: str, path: str) -> str:
    """The file at `path` of `commit` in a checkout or bare git directory, or `source` itself."""
    place = Path(source)
    return place.read_text(encoding="utf-8") if place.is_file() else file_at(place, commit, path)


def english_rows(source: str) -> list[Row]:
    rows = []
    for line in _read(source, *OPENLABELS).splitlines():
        item = json.loads(line)
        labels = tuple((e["label"], e["start"], e["end"]) for e in item["entities"])
        rows.append(Row(item["text"], "en", labels))
    return rows


def perturbed_rows(source: str) -> list[Row]:
    """The perturbed English rows, their kind of perturbation as their language (`en unicode`)."""
    rows = []
    for line in _read(source, *PERTURBED).splitlines():
        item = json.loads(line)
        if item.get("is_adversarial"):
            labels = tuple((e["label"], e["start"], e["end"]) for e in item["entities"])
            rows.append(Row(item["text"], f"en {item['adversarial_type']}", labels))
    return rows


def other_rows(source: str) -> list[Row]:
    rows = []
    for line in _read(source, *SAFEINGEST).splitlines():
        item = json.loads(line)
        labels = tuple((m["label"], m["start"], m["end"]) for m in item["privacy_mask"])
        rows.append(Row(item["source_text"], item["language"], labels))
    return rows


@dataclass
class Score:
    found: collections.Counter[str]
    labels: collections.Counter[str]
    unlabelled: collections.Counter[str]  # findings that overlap no label, per kind
    findings: collections.Counter[str]
    missed: dict[str, list[str]]


def score(rows: list[Row], optional: frozenset[str]) -> Score:
    result = Score(collections.Counter(), collections.Counter(), collections.Counter(), collections.Counter(), {})
    for row in rows:
        findings = detect(row.text, optional)
        for label, start, end in row.labels:
            kinds = KINDS.get(label)
            if kinds is None:
                continue
            key = f"{row.language} {label}"
            result.labels[key] += 1
            if any(f.type in kinds and f.start < end and f.end > start for f in findings):
                result.found[key] += 1
            else:
                result.missed.setdefault(key, []).append(row.text[max(0, start - 50) : end + 30])
        for finding in findings:
            result.findings[finding.type] += 1
            if not any(finding.start < end and finding.end > start for _label, start, end in row.labels):
                result.unlabelled[finding.type] += 1
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--openlabels", required=True, help="checkout, bare git dir or the file (English rows)")
    parser.add_argument("--safeingest", help="checkout, bare git dir or the file (French and Dutch rows)")
    parser.add_argument("--perturbed", action="store_true", help="also the English rows the repository perturbed")
    parser.add_argument("--json", type=Path, help="write the figures there (benchmarks/results/ shape)")
    parser.add_argument("--show", type=int, default=0, help="print N missed labels of each label")
    args = parser.parse_args(argv)
    parts = [score(english_rows(args.openlabels), OPT_IN)]
    if args.safeingest:
        parts.append(score(other_rows(args.safeingest), frozenset()))
    if args.perturbed:
        parts.append(score(perturbed_rows(args.openlabels), OPT_IN))
    figures = []
    print(f"{'label':24} {'found':>12} {'recall':>7}")
    for part in parts:
        for key in sorted(part.labels):
            found, total = part.found[key], part.labels[key]
            print(f"{key:24} {found:>5} / {total:<5} {found / total:7.3f}")
            figures.append(figure(f"recall, {key}", f"{found / total:.3f} ({found} of {total})"))
            for context in part.missed.get(key, [])[: args.show]:
                print(f"    missed: {context!r}")
    english = parts[0]
    print("\nfindings on no label (English rows; the rows leave passwords, PINs, security codes unlabelled):")
    for kind in sorted(english.findings):
        print(f"  {kind:20} {english.unlabelled[kind]:>5} of {english.findings[kind]}")
    if args.json:
        write_result(args.json, "privacy.ai4privacy", COMMAND, figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Tandem's default detector on CredSweeper's test samples, against the findings its tests expect
from CredSweeper's default run.

    python -m benchmarks.privacy.credsweeper_samples --repo PATH [--show]

PATH: a checkout or a bare git directory of github.com/Samsung/CredSweeper (MIT; measured at
commit 1ed2ca5cdd480667b938024464a37589b9af8564). Not shipped with Tandem. `tests/samples/` holds
files of many formats (source files, configs, patches, logs, XML, Markdown, binaries);
`tests/data/` lists what CredSweeper reports on them in several configurations. The set used here
is `tests/data/output.json`, the one its tests expect from the default configuration (filters
and ML validation on, no `--depth`, `--doc` or `--pedantic`). Each item of it names a rule and one
or more values (`line_data_list`: path, line number, the line, the value and its offsets in that
line); a private key spread over lines, or a key id with its secret, is one item of several values.
Nothing of CredSweeper is imported or run.

Each sample file is scanned whole by `router.privacy.detect.detect` (default kinds), as a tool
result would carry it; files holding a NUL character (archives, images, documents, a UTF-16
file) are binaries, not scanned. A value is located on its line of the file by its offsets when
the line is the one the label quotes, else by searching the value in the file's line; a value
that spans lines, or is not on that line (a line CredSweeper decoded otherwise, a binary), is
not located. An expected item is found when a finding overlaps any of its located values (every
one of them: "all values", shown for items of several); items with none located are counted apart.

CredSweeper's labels are its own output, not ground truth: its misses are not Tandem's false
findings. Findings on a file, or on lines, it expects nothing from are counted apart as "findings
on no label" (by Tandem rule; `--show` lists them with the misses).
"""

from __future__ import annotations

import argparse
import bisect
import collections
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.privacy.repo_files import files_under
from router.privacy.detect import Finding, detect

_SAMPLES = "tests/samples"
_DATA = "tests/data"
_LABELS = "output.json"  # the default configuration's expected findings (tests/data/__init__.py)
_PREFIX = "./tests/samples/"


@dataclass(frozen=True)
class Value:
    line: int  # 1-based, as the label numbers it
    text: str
    span: tuple[int, int] | None  # character offsets in the file's text; None: not located


@dataclass(frozen=True)
class Expected:
    rule: str
    path: str  # relative to tests/samples
    values: tuple[Value, ...]

    @property
    def located(self) -> tuple[Value, ...]:
        return tuple(v for v in self.values if v.span is not None)


class Sample:
    """A sample file's text and where its lines start."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

    def line(self, number: int) -> str | None:
        """Line `number` (1-based) without its line break, None past the end."""
        if not 0 < number <= len(self.starts):
            return None
        start = self.starts[number - 1]
        end = self.starts[number] - 1 if number < len(self.starts) else len(self.text)
        return self.text[start:end].removesuffix("\r")

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)


def samples(repo: Path) -> tuple[dict[str, Sample], list[str]]:
    """Sample path -> text for the text files, and the binaries' paths."""
    texts, binaries = {}, []
    for name, text in files_under(repo, _SAMPLES).items():
        if "\0" in text:
            binaries.append(name)
        else:
            texts[name] = Sample(text)
    return texts, binaries


def _locate(sample: Sample | None, item: dict[str, Any]) -> tuple[int, int] | None:
    value: str = item["value"]
    if sample is None or not value or "\n" in value:
        return None
    line = sample.line(item["line_num"])
    if line is None:
        return None
    start = sample.starts[item["line_num"] - 1]
    first, last = item["value_start"], item["value_end"]
    if line == item["line"] and line[first:last] == value:
        return start + first, start + last
    at = line.find(value)
    return (start + at, start + at + len(value)) if at >= 0 else None


def expected(repo: Path, texts: dict[str, Sample]) -> list[Expected]:
    """The items of the default run's labels, their values located in the samples' texts."""
    labels = json.loads(files_under(repo, _DATA)[_LABELS])
    out = []
    for label in labels:
        values = []
        path = ""
        for item in label["line_data_list"]:
            path = item["path"].removeprefix(_PREFIX)
            if item["value"]:  # a blank line inside a key block quotes no value
                values.append(Value(item["line_num"], item["value"], _locate(texts.get(path), item)))
        out.append(Expected(label["rule"], path, tuple(values)))
    return out


def _overlaps(value: Value, findings: list[Finding]) -> bool:
    assert value.span is not None
    start, end = value.span
    return any(f.start < end and f.end > start for f in findings)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repo", type=Path, required=True, help="CredSweeper checkout or bare git dir")
    parser.add_argument("--show", action="store_true", help="print the misses and the findings on no label")
    args = parser.parse_args(argv)
    texts, binaries = samples(args.repo)
    items = expected(args.repo, texts)
    findings = {name: detect(sample.text) for name, sample in texts.items()}

    rows: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    shown: list[str] = []
    labelled: dict[str, set[int]] = collections.defaultdict(set)
    several = several_whole = 0
    for item in items:
        for value in item.values:
            labelled[item.path].update(range(value.line, value.line + value.text.count("\n") + 1))
        row = rows[item.rule]
        row["expected"] += 1
        located = item.located
        if not located:
            row["not located"] += 1
            first = item.values[0] if item.values else None
            where = f"{item.path}:{first.line}" if first else item.path
            shown.append(f"  unlocated  {where} {item.rule}: {(first.text if first else '')[:160]!r}")
            continue
        hits = [_overlaps(v, findings[item.path]) for v in located]
        row["found"] += any(hits)
        if len(item.values) > 1:
            several += 1
            several_whole += all(hits) and len(located) == len(item.values)
        if not any(hits):
            sample = texts[item.path]
            line = sample.line(located[0].line) or ""
            shown.append(f"  miss   {item.path}:{located[0].line} {item.rule}: {line.strip()[:160]!r}")

    other: collections.Counter[str] = collections.Counter()
    for name, found in findings.items():
        sample = texts[name]
        for f in found:
            lines = range(sample.line_of(f.start), sample.line_of(max(f.start, f.end - 1)) + 1)
            if not labelled[name].intersection(lines):
                other[f.rule] += 1
                shown.append(f"  other  {name}:{lines[0]} {f.rule}: {f.value[:60]!r}")

    print(
        f"CredSweeper samples: {len(texts)} text files scanned, {len(binaries)} binaries not; "
        f"{len(items)} expected items ({_LABELS}, default run)"
    )
    print(f"  {'rule':40} {'expected':>8} {'unlocated':>9} {'found':>6}")
    total: collections.Counter[str] = collections.Counter()
    for rule in sorted(rows, key=str.lower):
        row = rows[rule]
        total.update(row)
        print(f"  {rule:40} {row['expected']:>8} {row['not located']:>9} {row['found']:>6}")
    print(f"  {'all':40} {total['expected']:>8} {total['not located']:>9} {total['found']:>6}")
    located_total = total["expected"] - total["not located"]
    print(
        f"  recall {total['found'] / max(located_total, 1):.3f} of those located "
        f"({total['found'] / max(total['expected'], 1):.3f} of all); "
        f"items of several values with all values overlapped: {several_whole} of {several}"
    )
    listed = ", ".join(f"{rule} {n}" for rule, n in other.most_common())
    print(f"  findings on no label: {sum(other.values())} ({listed})")
    if args.show:
        print("\n".join(shown))


if __name__ == "__main__":
    main()

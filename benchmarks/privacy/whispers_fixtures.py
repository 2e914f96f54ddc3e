"""Tandem's default detector on whispers' test fixtures: secrets in config files, scripts and
build files as they are written.

    python -m benchmarks.privacy.whispers_fixtures --repo PATH [--show]

PATH: a checkout or a bare git directory of github.com/adeptex/whispers (BSD-3-Clause; the commit
measured is named in benchmarks/privacy/README.md). Not shipped with Tandem. Its fixtures
(`tests/fixtures/`: YAML, JSON, XML, .properties, .npmrc, .pypirc, Dockerfile, nginx.conf, shell
scripts, Gradle, Jenkins, CloudFormation, source files of 15 languages…) mark every secret they
hold by the word `hardcoded` inside its value (`YXNkZmZmZmZm_HARDcoded`, `hardcoded01`,
`6c141bb5-5b6d-1311-98dc-hardcoded`), beside compliant look-alikes (references, placeholders,
empty values). Each file is scanned whole, as a tool result would carry it.

A marked value is found when a finding overlaps its `hardcoded`. Findings that overlap no mark
are counted apart: they are either values of a known shape the fixtures do not mark (AWS keys,
private keys, cards) or false findings (`--show` lists them).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from benchmarks.privacy.repo_files import files_under
from router.privacy.detect import detect_uncached

_DIR = "tests/fixtures"
_MARK = re.compile(r"(?i)hardcoded")


def fixtures(repo: Path) -> dict[str, str]:
    """Fixture path (under tests/fixtures) -> text, from a checkout or a bare git directory."""
    return files_under(repo, _DIR)


def score(text: str) -> tuple[int, int, list[str], list[str]]:
    """(marked values, found, the lines of those missed, the findings on no mark)."""
    findings = detect_uncached(text)
    marks = [m.span() for m in _MARK.finditer(text)]
    missed = []
    found = 0
    for start, end in marks:
        if any(f.start < end and f.end > start for f in findings):
            found += 1
        else:
            line_start = text.rfind("\n", 0, start) + 1
            line_end = text.find("\n", end)
            missed.append(text[line_start : line_end if line_end >= 0 else len(text)].strip()[:140])
    other = [
        f"{f.rule}: {f.value[:60]!r}"
        for f in findings
        if not any(f.start < end and f.end > start for start, end in marks)
    ]
    return len(marks), found, missed, other


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repo", type=Path, required=True, help="whispers checkout or bare git dir")
    parser.add_argument("--show", action="store_true", help="print the misses and the findings on no mark")
    args = parser.parse_args(argv)
    files = fixtures(args.repo)
    total = found = other = 0
    shown: list[str] = []
    for name, text in files.items():
        marks, hits, missed, unmarked = score(text)
        total += marks
        found += hits
        other += len(unmarked)
        shown += [f"  miss   {name}: {line!r}" for line in missed]
        shown += [f"  other  {name}: {finding}" for finding in unmarked]
    print(f"whispers fixtures: {len(files)} files, {total} marked secrets")
    print(f"  found {found} of {total} ({found / max(total, 1):.3f}); findings on no mark: {other}")
    if args.show:
        print("\n".join(shown))


if __name__ == "__main__":
    main()

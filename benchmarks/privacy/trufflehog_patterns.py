"""Tandem's default secret detection on trufflehog's detector pattern tests.

    python -m benchmarks.privacy.trufflehog_patterns --trufflehog DIR [--json PATH] [--list]

DIR is a checkout (work tree) of github.com/trufflesecurity/trufflehog (AGPL-3.0); nothing of it
is committed here and none of its code is run: its test files are read as data. Each detector
package's `*_test.go` (integration tests aside) lists cases of an `input` text and the secrets the
detector must `want` from it. Over 800 providers, mostly service keys with no fixed prefix that
trufflehog finds by a keyword near a value of the right shape: a corpus of how other people write
provider keys in code, configs and logs, which this project's rules were not drawn from (gitleaks'
are, `benchmarks.privacy.gitleaks_examples`).

Read: cases whose `input` and `want` are Go string literals, names bound to literals earlier in
the file, `+` of those, `fmt.Sprintf` with `%s`/`%v`/`%q`/`%d` verbs, and `strings.Repeat`;
other cases are counted as skipped. Only positive cases (a non-empty `want`) are scored: a
trufflehog negative is usually a value one character short or a keyword too far away, still a
secret to a privacy filter, so it measures nothing here.

A wanted secret that appears in the input is found when a credential finding of
`router.privacy.detect.detect(text)` (default kinds; every kind but EMAIL, PHONE, CARD, IBAN,
US_SSN, NATIONAL_ID, IP_ADDRESS, PERSON and ADDRESS) overlaps it. A wanted value the detector
builds from several parts (`id:secret`) is scored on its longest part of 8 characters or more
that appears in the input (usually the secret); a want with no such part is not scored. A case is
found when all its wanted secrets are; a provider when all its cases are. Each case is scored
(a) alone and (b) inside a JSON tool result, `json.dumps({"output": input})`.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from benchmarks.privacy.gitleaks_examples import NOT_CREDENTIALS, share
from benchmarks.privacy.go_literals import go_string, go_tokens
from benchmarks.report import figure, write_result
from router.privacy.detect import detect

DETECTORS_DIR = Path("pkg/detectors")
COMMAND = "python -m benchmarks.privacy.trufflehog_patterns --trufflehog DIR"
_VERB = re.compile(r"%[-+# 0-9.]*([svqdx%])")
_PART = re.compile(r"[^:;|,\s]{8,}")

Token = tuple[str, str, int]


class Unreadable(Exception):
    """An expression this reader does not evaluate."""


@dataclass(frozen=True)
class Case:
    provider: str
    name: str
    text: str
    wants: tuple[str, ...]


def _sprintf(form: str, args: list[str]) -> str:
    values = iter(args)

    def one(match: re.Match[str]) -> str:
        if match.group(1) == "%":
            return "%"
        value = next(values, None)
        if value is None:
            raise Unreadable("too few arguments")
        return json.dumps(value) if match.group(1) == "q" else value

    return _VERB.sub(one, form)


class _Reader:
    """Go expressions over one file's tokens: string values, names bound to them, a few calls."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.names: dict[str, str] = {}

    def value(self, i: int) -> tuple[str, int]:
        """The string value of the expression at token i (terms joined by `+`); and where it ends."""
        parts: list[str] = []
        while True:
            text, i = self._term(i)
            parts.append(text)
            if i >= len(self.tokens) or self.tokens[i][1] != "+":
                return "".join(parts), i
            i += 1

    def _arguments(self, i: int) -> tuple[list[str], int]:
        """The values of a call's arguments from the `(` at i; and the index after its `)`."""
        return self.values(i, "(", ")")

    def values(self, i: int, opening: str, closing: str) -> tuple[list[str], int]:
        """The values listed between `opening` at i and its `closing`; and the index after it."""
        if self.tokens[i][1] != opening:
            raise Unreadable(f"not {opening}")
        args: list[str] = []
        j = i + 1
        while self.tokens[j][1] != closing:
            value, j = self.value(j)
            args.append(value)
            if self.tokens[j][1] == ",":
                j += 1
            elif self.tokens[j][1] != closing:
                raise Unreadable(self.tokens[j][1])
        return args, j + 1

    def _term(self, i: int) -> tuple[str, int]:
        kind, text, _ = self.tokens[i]
        if kind == "str":
            return go_string(text), i + 1
        if kind == "name" and text.isdigit():
            return text, i + 1
        following = [t[1] for t in self.tokens[i + 1 : i + 3]]
        if text == "fmt" and following[:1] == ["."] and following[1:] in (["Sprintf"], ["Sprint"]):
            args, after = self._arguments(i + 3)
            if following[1] == "Sprint":
                return "".join(args), after
            return _sprintf(args[0], args[1:]), after
        if text == "strings" and following == [".", "Repeat"]:
            args, after = self._arguments(i + 3)
            return args[0] * int(args[1]), after
        if text in ("string", "[]") and following[:1] in (["("], ["byte"]):  # conversions: string(x), []byte(x)
            at = i + 1 if text == "string" else i + 2
            args, after = self._arguments(at)
            return args[0], after
        if kind == "name" and text in self.names:
            return self.names[text], i + 1
        raise Unreadable(text)

    def bind(self, start: int, upto: int) -> None:
        """Bind the names assigned string values from token `start` to `upto` (in file order)."""
        tokens = self.tokens
        for i in range(max(start, 1), min(upto, len(tokens) - 2)):
            if tokens[i][0] == "name" and tokens[i + 1][1] in ("=", ":=") and tokens[i - 1][1] != ".":
                try:
                    self.names[tokens[i][1]] = self.value(i + 2)[0]
                except (Unreadable, IndexError, ValueError):
                    self.names.pop(tokens[i][1], None)


def _wants(reader: _Reader, i: int) -> list[str]:
    """The wanted values of a `want:` at token i: `[]string{...}`, `nil` or one string value."""
    tokens = reader.tokens
    if [t[1] for t in tokens[i : i + 2]] == ["[]", "string"]:
        return reader.values(i + 2, "{", "}")[0]
    if tokens[i][1] == "nil":
        return []
    return [reader.value(i)[0]]


def cases_in(source: str, provider: str) -> tuple[list[Case], int]:
    """The readable positive cases of one test file, and the cases skipped as unreadable."""
    reader = _Reader(go_tokens(source))
    tokens = reader.tokens
    found: list[Case] = []
    skipped = 0
    bound = 1
    pending: dict[str, object] = {}
    for i in range(len(tokens) - 2):
        field, colon = tokens[i][1], tokens[i + 1][1]
        if colon != ":" or field not in ("name", "input", "want"):
            continue
        reader.bind(bound, i)
        bound = i
        try:
            if field == "name":
                pending = {"name": reader.value(i + 2)[0]}
            elif field == "input":
                pending["input"] = reader.value(i + 2)[0]
            else:
                wants = _wants(reader, i + 2)
                text = pending.get("input")
                if isinstance(text, str) and wants:
                    found.append(Case(provider, str(pending.get("name", "")), text, tuple(wants)))
                pending = {}
        except (Unreadable, IndexError, ValueError):
            if field != "name":
                skipped += 1
            pending = {}
    return found, skipped


def read_cases(root: Path) -> tuple[list[Case], int, int]:
    """Every detector test file's positive cases; the cases skipped and the files read."""
    cases: list[Case] = []
    skipped = files = 0
    for path in sorted((root / DETECTORS_DIR).rglob("*_test.go")):
        if "integration" in path.name:
            continue
        provider = str(path.parent.relative_to(root / DETECTORS_DIR))
        found, skip = cases_in(path.read_text(encoding="utf-8", errors="replace"), provider)
        files += 1
        cases += found
        skipped += skip
    return cases, skipped, files


def secret_spans(text: str, wants: tuple[str, ...]) -> Iterator[tuple[int, int] | None]:
    """Per wanted value, where it (or its longest part in the text) is; None when nowhere."""
    for want in wants:
        at = text.find(want)
        if at >= 0 and want.strip():
            yield at, at + len(want)
            continue
        parts = sorted((p for p in _PART.findall(want) if p in text), key=len, reverse=True)
        if parts:
            at = text.find(parts[0])
            yield at, at + len(parts[0])
        else:
            yield None


def _found(text: str, spans: list[tuple[int, int]]) -> bool:
    findings = [f for f in detect(text) if f.type not in NOT_CREDENTIALS]
    return all(any(f.start < end and start < f.end for f in findings) for start, end in spans)


def _escaped_span(text: str, start: int, end: int) -> tuple[int, int]:
    prefix = len(json.dumps({"output": text[:start]})) - 2  # the escaped text before the secret
    return prefix, prefix + len(json.dumps(text[start:end])) - 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trufflehog", type=Path, required=True, help="a checkout of trufflesecurity/trufflehog")
    parser.add_argument("--json", type=Path, help="write the figures in the shape of benchmarks/results")
    parser.add_argument("--list", action="store_true", help="print every missed case, not only a sample")
    args = parser.parse_args()
    if not (args.trufflehog / DETECTORS_DIR).is_dir():
        parser.error(f"{args.trufflehog / DETECTORS_DIR} is not a directory: give a checkout of trufflehog")
    done = subprocess.run(["git", "-C", str(args.trufflehog), "rev-parse", "HEAD"], capture_output=True, text=True)
    cases, skipped, files = read_cases(args.trufflehog)
    scored = unscored = alone = in_json = 0
    providers: dict[str, list[bool]] = {}
    missed: list[tuple[Case, str]] = []
    for case in cases:
        located = list(secret_spans(case.text, case.wants))
        spans = [s for s in located if s is not None]
        if len(spans) < len(located):
            unscored += 1
            continue
        scored += 1
        found_alone = _found(case.text, spans)
        wrapped = json.dumps({"output": case.text})
        found_json = _found(wrapped, [_escaped_span(case.text, s, e) for s, e in spans])
        alone += found_alone
        in_json += found_json
        providers.setdefault(case.provider, []).append(found_alone)
        if not (found_alone and found_json):
            missed.append((case, "json" if found_alone else "alone" if found_json else "both"))
    whole = sum(all(flags) for flags in providers.values())
    results = [
        ("cases found alone", alone, scored),
        ("cases found in a JSON tool result", in_json, scored),
        ("providers with every case found alone", whole, len(providers)),
    ]
    commit = done.stdout.strip()[:12] or "(commit unknown)"
    print(f"trufflehog {commit}: {files} detector test files, {len(cases)} positive cases read", end=" ")
    print(f"({scored} scored, {unscored} whose wanted value is not in the input; {skipped} cases unreadable)")
    for label, count, total in results:
        print(f"  {label:40} {share(count, total)}")
    shown = missed if args.list else missed[:40]
    print(f"\nmissed cases ({len(missed)}; where missed{'' if args.list else ', first 40'}):")
    for case, where in shown:
        print(f"  {case.provider:28} {where:5} {case.text.strip()[:90]!r}")
    if args.json:
        figures = [
            figure(f"trufflehog detector tests: {label}", share(count, total)) for label, count, total in results
        ]
        write_result(args.json, "privacy.trufflehog_patterns", COMMAND, figures)


if __name__ == "__main__":
    main()

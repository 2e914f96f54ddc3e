"""Tandem's default secret detection on gitleaks' own labelled rule examples.

    python -m benchmarks.privacy.gitleaks_examples --gitleaks DIR [--json PATH]

DIR is a checkout (work tree) of github.com/gitleaks/gitleaks (MIT licence, Copyright (c) 2019
Zachary Rice); nothing of it is committed here. Each rule's source in
`cmd/generate/config/rules/*.go` lists true-positive examples (`tps`) and false-positive ones
(`fps`). Only literal examples are taken: Go string literals (interpreted "..." with Go's
escapes, or raw `...`) written directly in a `tps := []string{...}` / `fps := []string{...}`
block or a `tps = append(tps, ...)` call; elements built by function calls (generated samples,
`secrets.NewSecret`) and `map[string]string` examples are skipped. Each example keeps the rule id
of the nearest `RuleID:` above it in its file (else the file's name).

Detector: `router.privacy.detect.detect(text)` with the default kinds. A credential kind is any
kind but EMAIL, PHONE, CARD, IBAN, US_SSN, NATIONAL_ID, IP_ADDRESS, PERSON and ADDRESS. For a
true-positive example the secret is the span of the rule's own secret group (the regex of
`router.privacy.secret_rules.RULES`; the first participating group when the given one did not
take part), else the whole example; it is found when a credential finding overlaps the secret,
(a) in the example alone and (b) in a JSON tool result `json.dumps({"output": example})` (the
secret's span there: its JSON-escaped form after the escaped text before it). A false-positive
example is flagged when any finding is made in it (its kinds are listed).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from benchmarks.privacy.go_literals import go_string, go_tokens
from benchmarks.report import figure, write_result
from router.privacy.detect import detect
from router.privacy.secret_rules import RULES

NOT_CREDENTIALS = frozenset(
    ("EMAIL", "PHONE", "CARD", "IBAN", "US_SSN", "NATIONAL_ID", "IP_ADDRESS", "PERSON", "ADDRESS")
)
RULES_DIR = Path("cmd/generate/config/rules")
COMMAND = "python -m benchmarks.privacy.gitleaks_examples --gitleaks DIR"

_PATTERNS: dict[str, tuple[re.Pattern[str], int]] = {}
for _id, _kind, _regex, _keywords, _group, *_rest in RULES:
    with contextlib.suppress(re.error):  # a Go regex Python does not read: the whole example is the secret
        _PATTERNS[_id] = (re.compile(_regex), _group)


@dataclass(frozen=True)
class Example:
    rule: str
    positive: bool
    text: str


def examples_in(source: str, fallback: str) -> tuple[list[Example], int]:
    """The literal examples of one rule file and the number of elements skipped (not literals)."""
    tokens = go_tokens(source)
    rule_ids = [
        (tokens[i][2], go_string(tokens[i + 2][1]))
        for i in range(len(tokens) - 2)
        if tokens[i][1] == "RuleID" and tokens[i + 1][1] == ":" and tokens[i + 2][0] == "str"
    ]
    found: list[Example] = []
    skipped = 0
    for i, (_kind, value, pos) in enumerate(tokens):
        head = [t[1] for t in tokens[i + 1 : i + 6]]
        if value not in ("tps", "fps") or len(head) < 5 or head[0] not in (":=", "="):
            continue
        if head[1:4] == ["[]", "string", "{"]:
            j, close = i + 5, "}"
        elif head[1:5] == ["append", "(", value, ","]:
            j, close = i + 6, ")"
        else:
            continue
        rule = next((r for p, r in reversed(rule_ids) if p < pos), fallback)
        element: list[tuple[str, str]] = []
        depth = 0
        for kind, text, _pos in tokens[j:]:
            if depth == 0 and text in (",", close):  # an element ends: a literal when "..." [+ "..."]*
                literal = len(element) % 2 and all(k == "str" for k, _t in element[::2])
                if literal and all(t == "+" for _k, t in element[1::2]):
                    example = "".join(go_string(t) for _k, t in element[::2])
                    if example.strip():
                        found.append(Example(rule, value == "tps", example))
                elif element:
                    skipped += 1
                element = []
                if text == close:
                    break
            else:
                depth += (text in ("(", "{", "[")) - (text in (")", "}", "]"))
                element.append((kind, text))
    return found, skipped


def read_examples(root: Path) -> tuple[list[Example], int]:
    """Every rule file's literal examples, each (rule, role, text) once, and the elements skipped."""
    examples: dict[Example, None] = {}
    skipped = 0
    for path in sorted((root / RULES_DIR).glob("*.go")):
        found, skip = examples_in(path.read_text(encoding="utf-8"), path.stem)
        examples.update(dict.fromkeys(found))
        skipped += skip
    return list(examples), skipped


def secret_span(rule: str, text: str) -> tuple[int, int]:
    """Where the rule's own regex puts the secret in `text`; the whole text when it cannot say."""
    if rule in _PATTERNS:
        pattern, group = _PATTERNS[rule]
        match = pattern.search(text)
        if match:
            for g in ([group] if group else []) + list(range(1, pattern.groups + 1)):
                if match.group(g):
                    return match.span(g)
            return match.span()
    return 0, len(text)


def credential_found(text: str, start: int, end: int) -> bool:
    return any(f.type not in NOT_CREDENTIALS and f.start < end and start < f.end for f in detect(text))


def share(count: int, total: int) -> str:
    return f"{count} of {total} ({100 * count / max(1, total):.1f}%)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gitleaks", type=Path, required=True, help="a checkout of github.com/gitleaks/gitleaks")
    parser.add_argument("--json", type=Path, help="write the figures in the shape of benchmarks/results")
    args = parser.parse_args()
    if not (args.gitleaks / RULES_DIR).is_dir():
        parser.error(f"{args.gitleaks / RULES_DIR} is not a directory: give a checkout of gitleaks")
    done = subprocess.run(["git", "-C", str(args.gitleaks), "rev-parse", "HEAD"], capture_output=True, text=True)
    examples, skipped = read_examples(args.gitleaks)
    positives = [e for e in examples if e.positive]
    negatives = [e for e in examples if not e.positive]
    missed: list[tuple[Example, str]] = []
    alone = in_json = 0
    for example in positives:
        start, end = secret_span(example.rule, example.text)
        found_alone = credential_found(example.text, start, end)
        prefix = len(json.dumps({"output": example.text[:start]})) - 2  # the escaped text before the secret
        escaped = len(json.dumps(example.text[start:end])) - 2
        found_json = credential_found(json.dumps({"output": example.text}), prefix, prefix + escaped)
        alone += found_alone
        in_json += found_json
        if not (found_alone and found_json):
            missed.append((example, "alone" if not found_alone and found_json else "json" if found_alone else "both"))
    flagged = [(e, sorted({f.type for f in findings})) for e in negatives if (findings := detect(e.text))]
    results = [
        ("credentials found alone", alone, len(positives)),
        ("credentials found in a JSON tool result", in_json, len(positives)),
        ("false-positive examples flagged", len(flagged), len(negatives)),
    ]
    print(f"gitleaks {done.stdout.strip()[:12] or '(commit unknown)'}: {len(examples)} literal examples", end=" ")
    print(
        f"({len(positives)} true-positive, {len(negatives)} false-positive; {skipped} elements not literals, skipped)"
    )
    for label, count, total in results:
        print(f"  {label:42} {share(count, total)}")
    print(f"\nmissed true positives ({len(missed)}; where missed):")
    for example, where in missed:
        print(f"  {example.rule:40} {where:5} {example.text[:80]!r}")
    print(f"\nflagged false positives ({len(flagged)}):")
    for example, kinds in flagged:
        print(f"  {example.rule:40} {', '.join(kinds)}")
    if args.json:
        figures = [figure(f"gitleaks rule examples: {label}", share(count, total)) for label, count, total in results]
        write_result(args.json, "privacy.gitleaks_examples", COMMAND, figures)


if __name__ == "__main__":
    main()

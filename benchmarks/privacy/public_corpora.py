"""Tandem's default detection on three public labelled corpora of personal values.

    python -m benchmarks.privacy.public_corpora --recognizers DIR --datafog DIR --scrubadub DIR
        [--json PATH] [--show N]

Each DIR is a checkout (work tree) of the project named below; nothing of them is committed
here, and none of their code runs: their files are read as data.

- **Recognizers-Text**: github.com/microsoft/Recognizers-Text (MIT licence, Copyright (c)
  Microsoft Corporation; measured at commit 90e968e). `Specs/Sequence/<language>/` of the
  models `PhoneNumberModel.json`, `EmailModel.json` and `IpAddressModel.json`, in every language
  that has them (Chinese and Japanese write a value right against their own text:
  `我的电话号是+1 541-754-3010.`). Each case is an `Input` and the `Results` the specification
  expects of it; a result's `Text` is placed at its `Start` where the case gives one that
  matches, else at its first occurrence not taken by another result. `phonenumber` is PHONE,
  `email` EMAIL, `ip…` IP_ADDRESS. Cases marked `NotSupported` (a port of the library fails
  them) are kept: they are what the specification expects.
- **DataFog**: github.com/DataFog/datafog-python (MIT licence, Copyright (c) DataFog; measured at
  commit b34c04c). `tests/corpus/*.json`: each case an `input` and its `expected_entities`
  with offsets. EMAIL, PHONE, SSN (US_SSN), CREDIT_CARD (CARD), IP_ADDRESS and IBANs are scored;
  PERSON, ADDRESS, LOCATION, DATE, ORGANIZATION, ZIP_CODE and the rest are not (opt-in kinds, or
  no kind of Tandem's).
- **scrubadub**: github.com/LeapBeyond/scrubadub (Apache-2.0; measured at commit 53772cb).
  `tests/test_*.py`, read with `ast`: every string constant holding `BEFORE:` and `AFTER:` (a
  test's docstring), each `{{TYPE}}` of its AFTER text aligned with the text of BEFORE it stands
  for; and the numbers of each `check_phone_numbers(...)` call, in the test's own sentence `My
  phone number is …`. EMAIL, PHONE, CREDIT_CARD (CARD), SOCIAL_SECURITY_NUMBER (US_SSN),
  NATIONAL_INSURANCE_NUMBER (NATIONAL_ID) and PASSWORD (any credential kind) are scored; NAME,
  ADDRESS, URL, USERNAME, TWITTER, SKYPE, DATE_OF_BIRTH, DRIVERS_LICENCE and
  TAX_REFERENCE_NUMBER are not.

Detector: `router.privacy.detect.detect(text)`, the default kinds (no opt-in kind).

Scoring: a scored label is found when findings of its kind (for a password, of any credential
kind) cover 80 % or more of its characters other than spaces: a phone found without its
extension counts, the last seven digits of a longer number do not. A negative (a case with no
label at all) is flagged when any finding is made in it. A finding in a labelled case that
overlaps none of its labels, scored or not, is a false finding; both are counted per kind.
Every case of the three corpora is scored (no part is held out): rules were written from what
they missed, so after 2026-12-07 the figures are a development set's (benchmarks/privacy/README.md).
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.report import figure, write_result
from router.privacy.detect import detect
from router.privacy.detector import Finding

COMMAND = "python -m benchmarks.privacy.public_corpora --recognizers DIR --datafog DIR --scrubadub DIR"
COVER = 0.8  # the share of a label's characters (spaces aside) that findings of its kind cover
NOT_CREDENTIALS = frozenset(
    ("EMAIL", "PHONE", "CARD", "IBAN", "US_SSN", "NATIONAL_ID", "IP_ADDRESS", "PERSON", "ADDRESS")
)
CREDENTIAL = "credential"  # a password label: any credential kind finds it

RECOGNIZERS_MODELS = {"PhoneNumberModel": "PHONE", "EmailModel": "EMAIL", "IpAddressModel": "IP_ADDRESS"}
DATAFOG_KINDS = {"EMAIL": "EMAIL", "PHONE": "PHONE", "SSN": "US_SSN", "CREDIT_CARD": "CARD", "IP_ADDRESS": "IP_ADDRESS"}
SCRUBADUB_KINDS = {
    "EMAIL": "EMAIL",
    "PHONE": "PHONE",
    "CREDIT_CARD": "CARD",
    "SOCIAL_SECURITY_NUMBER": "US_SSN",
    "NATIONAL_INSURANCE_NUMBER": "NATIONAL_ID",
    "PASSWORD": CREDENTIAL,
}


@dataclass(frozen=True)
class Label:
    start: int
    end: int
    kind: str | None  # Tandem's kind, CREDENTIAL, or None: not scored
    group: str  # the row it is counted in (`PHONE`, `PHONE Chinese`)


@dataclass
class Case:
    source: str  # where it is read from (file and index), for the lists of misses
    text: str
    labels: list[Label] = field(default_factory=list)


def _place(text: str, value: str, taken: set[tuple[int, int]], start: int | None = None) -> tuple[int, int] | None:
    """Where `value` is in `text`: at `start` when it is there, else its first occurrence not
    taken, in any case (Recognizers-Text writes its results in lower case: `dave@abc.com`)."""
    if start is not None and text[start : start + len(value)] == value and (start, start + len(value)) not in taken:
        taken.add((start, start + len(value)))
        return start, start + len(value)
    for match in re.finditer(re.escape(value), text, re.IGNORECASE):
        if match.span() not in taken:
            taken.add(match.span())
            return match.span()
    return None


def recognizers_cases(root: Path) -> list[Case]:
    """The phone, e-mail and IP specifications of every language, one case each."""
    cases: list[Case] = []
    for path in sorted((root / "Specs" / "Sequence").glob("*/*.json")):
        kind = RECOGNIZERS_MODELS.get(path.stem)
        if kind is None:
            continue
        language = path.parent.name
        for index, spec in enumerate(json.loads(path.read_text(encoding="utf-8-sig"))):
            case = Case(f"{language}/{path.name}#{index}", spec["Input"])
            taken: set[tuple[int, int]] = set()
            for result in spec.get("Results", []):
                span = _place(case.text, result["Text"], taken, result.get("Start"))
                if span is not None:
                    case.labels.append(Label(*span, kind, f"{kind} {language}"))
            cases.append(case)
    return cases


def datafog_cases(root: Path) -> list[Case]:
    """DataFog's corpus: each case with its entities' offsets."""
    cases: list[Case] = []
    for path in sorted((root / "tests" / "corpus").glob("*.json")):
        for spec in json.loads(path.read_text(encoding="utf-8")):
            case = Case(f"{path.stem}:{spec['id']}", spec["input"])
            taken: set[tuple[int, int]] = set()
            for entity in spec["expected_entities"]:
                span = _place(case.text, entity["text"], taken, entity.get("start"))
                if span is None:
                    continue  # (a label whose text the input does not hold: none at the commit measured)
                kind = "IBAN" if entity["type"].endswith("IBAN") else DATAFOG_KINDS.get(entity["type"])
                case.labels.append(Label(*span, kind, kind or entity["type"]))
            cases.append(case)
    return cases


_PLACEHOLDER = re.compile(r"\{\{([A-Z_+\-0-9]+)\}\}")


def _aligned(before: str, after: str) -> list[tuple[int, int, str]] | None:
    """Each `{{TYPE}}` of `after` as the span of `before` it replaced, or None when they differ."""
    parts: list[str] = []
    types: list[str] = []
    last = 0
    for match in _PLACEHOLDER.finditer(after):
        parts += [re.escape(after[last : match.start()]), "(.+?)"]
        types.append(re.sub(r"[-0-9]+$", "", match.group(1)))  # `{{NAME-1}}`, `{{PHONE+…}}`
        last = match.end()
    parts.append(re.escape(after[last:]))
    matched = re.fullmatch("".join(parts), before, re.DOTALL)
    if matched is None:
        return None
    return [(matched.start(i + 1), matched.end(i + 1), kind) for i, kind in enumerate(types)]


def scrubadub_cases(root: Path) -> tuple[list[Case], int]:
    """scrubadub's BEFORE/AFTER texts and the numbers its phone tests check; and how many texts
    could not be aligned (skipped)."""
    cases: list[Case] = []
    unaligned = 0
    for path in sorted((root / "tests").glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            where = f"{path.name}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                doc = node.value
                if "BEFORE:" not in doc or "AFTER:" not in doc or "%s" in doc:
                    continue  # (`%s`: a template the test fills, read below for the phones)
                before, after = (part.strip() for part in doc.split("BEFORE:", 1)[1].split("AFTER:", 1))
                spans = _aligned(before, after)
                if spans is None:
                    unaligned += 1
                    continue
                labels = [Label(s, e, SCRUBADUB_KINDS.get(t), SCRUBADUB_KINDS.get(t) or t) for s, e, t in spans]
                cases.append(Case(where, before, labels))
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "check_phone_numbers":
                for argument in node.args:
                    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                        text = "My phone number is " + argument.value
                        cases.append(Case(where, text, [Label(19, len(text), "PHONE", "PHONE")]))
    return cases, unaligned


def _found(text: str, label: Label, findings: Iterable[Finding]) -> bool:
    wanted = [i for i in range(label.start, label.end) if not text[i].isspace()]
    covered: set[int] = set()
    for finding in findings:
        kind_matches = finding.type not in NOT_CREDENTIALS if label.kind == CREDENTIAL else finding.type == label.kind
        if kind_matches and finding.start < label.end and label.start < finding.end:
            covered.update(range(max(label.start, finding.start), min(label.end, finding.end)))
    return sum(i in covered for i in wanted) >= COVER * len(wanted)


@dataclass
class Score:
    found: collections.Counter[str] = field(default_factory=collections.Counter)
    total: collections.Counter[str] = field(default_factory=collections.Counter)
    negatives: int = 0
    flagged: int = 0
    false_findings: collections.Counter[str] = field(default_factory=collections.Counter)
    missed: list[tuple[Case, Label]] = field(default_factory=list)
    wrong: list[tuple[Case, Finding]] = field(default_factory=list)


def score(cases: list[Case]) -> Score:
    out = Score()
    for case in cases:
        findings = detect(case.text)
        for label in case.labels:
            if label.kind is None:
                continue
            out.total[label.group] += 1
            if _found(case.text, label, findings):
                out.found[label.group] += 1
            else:
                out.missed.append((case, label))
        if not case.labels:
            out.negatives += 1
            out.flagged += bool(findings)
        for finding in findings:
            if not case.labels or not any(f.start < finding.end and finding.start < f.end for f in case.labels):
                out.false_findings[finding.type] += 1
                out.wrong.append((case, finding))
    return out


def share(count: int, total: int) -> str:
    return f"{count}/{total} ({count / max(1, total):.3f})"


def _commit(root: Path) -> str:
    done = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else "not a git checkout"


def _kind_totals(result: Score) -> dict[str, tuple[int, int]]:
    """Per kind, the languages of a kind added up (`PHONE Chinese` and `PHONE English`: PHONE)."""
    totals: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    for group, total in result.total.items():
        kind = group.split()[0]
        totals[kind][0] += result.found[group]
        totals[kind][1] += total
    return {kind: (found, total) for kind, (found, total) in totals.items()}


def report(name: str, root: Path, cases: list[Case], show: int) -> list[dict[str, object]]:
    """Prints one corpus's figures; returns them as result rows."""
    result = score(cases)
    print(f"\n{name} ({_commit(root)}): {len(cases)} cases, {sum(result.total.values())} scored labels")
    rows = []
    for group in sorted(result.total):
        print(f"  recall {group:28} {share(result.found[group], result.total[group])}")
    kinds = _kind_totals(result)
    if any(len([g for g in result.total if g.split()[0] == kind]) > 1 for kind in kinds):
        for kind, (found, total) in sorted(kinds.items()):
            print(f"  recall {kind + ' (all)':28} {share(found, total)}")
    for kind, (found, total) in sorted(kinds.items()):
        rows.append(figure(f"{name}: {kind} recall", share(found, total)))
    found_all, total_all = sum(result.found.values()), sum(result.total.values())
    print(f"  recall {'all':28} {share(found_all, total_all)}")
    rows.append(figure(f"{name}: recall", share(found_all, total_all)))
    print(f"  negatives flagged              {share(result.flagged, result.negatives)}")
    rows.append(figure(f"{name}: negatives flagged", share(result.flagged, result.negatives)))
    wrong = ", ".join(f"{kind} {count}" for kind, count in sorted(result.false_findings.items())) or "none"
    print(f"  false findings                 {wrong}")
    rows.append(figure(f"{name}: false findings", str(sum(result.false_findings.values()))))
    for case, label in result.missed[:show]:
        context = case.text[max(0, label.start - 40) : label.end + 40]
        print(f"    missed {label.group:22} {case.text[label.start : label.end]!r} in {context!r} ({case.source})")
    for case, finding in result.wrong[:show]:
        context = case.text[max(0, finding.start - 40) : finding.end + 40]
        print(f"    false  {finding.type:22} {finding.value!r} in {context!r} ({case.source})")
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recognizers", type=Path, help="a checkout of github.com/microsoft/Recognizers-Text")
    parser.add_argument("--datafog", type=Path, help="a checkout of github.com/DataFog/datafog-python")
    parser.add_argument("--scrubadub", type=Path, help="a checkout of github.com/LeapBeyond/scrubadub")
    parser.add_argument("--json", type=Path, help="write the figures in the shape of benchmarks/results")
    parser.add_argument("--show", type=int, default=0, help="list up to N misses and false findings per corpus")
    args = parser.parse_args(argv)
    if not (args.recognizers or args.datafog or args.scrubadub):
        parser.error("give at least one of --recognizers, --datafog, --scrubadub")
    checks = (
        (args.recognizers, Path("Specs/Sequence")),
        (args.datafog, Path("tests/corpus")),
        (args.scrubadub, Path("tests")),
    )
    for root, inside in checks:
        if root is not None and not (root / inside).is_dir():
            parser.error(f"{root / inside} is not a directory: give a checkout of the project")
    rows: list[dict[str, object]] = []
    if args.recognizers:
        rows += report("Recognizers-Text", args.recognizers, recognizers_cases(args.recognizers), args.show)
    if args.datafog:
        rows += report("DataFog", args.datafog, datafog_cases(args.datafog), args.show)
    if args.scrubadub:
        cases, unaligned = scrubadub_cases(args.scrubadub)
        rows += report("scrubadub", args.scrubadub, cases, args.show)
        print(f"  ({unaligned} BEFORE/AFTER texts whose placeholders could not be aligned, skipped)")
    if args.json:
        write_result(args.json, "privacy.public_corpora", COMMAND, rows)


if __name__ == "__main__":
    main()

"""Tandem's default detector on the labelled cases of detect-secrets' plugin tests.

    python -m benchmarks.privacy.detect_secrets_cases --repo PATH [--show]

PATH: a checkout or a bare git directory of github.com/Yelp/detect-secrets (Apache-2.0; the
commit measured is named in benchmarks/privacy/README.md). Not shipped with Tandem. Each plugin's
tests (`tests/plugins/<name>_test.py`) list cases in `pytest.mark.parametrize`: a line and whether
the plugin flags it (`should_flag`), and for the keyword plugin a file type, a line and the
secret it holds (or None). The cases are built by evaluating those literals and the test
module's constant assignments (their `.format()` calls included: run it on a checkout you
trust); nothing of detect-secrets is imported or run.

A case is a text. It is a positive when its plugin flags it, and found when any default finding
lies in it (for a keyword case, a finding that overlaps the secret named). A negative is false
when any finding lies in it. The keyword plugin's verdict depends on the file's type (a C file
requires double quotes, Go's `password: x` is a struct field): a line flagged in one type and
not in another counts as a positive (Tandem does not know the file type), and its refusals in
the other types are counted apart, as "refused only for the file's type", not scored.
"""

from __future__ import annotations

import argparse
import ast
import base64
import collections
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.privacy.repo_files import files_under
from router.privacy.detect import detect_uncached

_DIR = "tests/plugins"
_TEXT_ARGS = ("payload", "line")
_FLAG_ARGS = ("should_flag",)


@dataclass(frozen=True)
class Case:
    plugin: str
    text: str
    secret: str | None  # the value a positive holds, where the test names it
    positive: bool


def _sources(repo: Path) -> dict[str, str]:
    """Test module name -> source, from a checkout or a bare git directory."""
    return {
        name: text for name, text in files_under(repo, _DIR).items() if name.endswith("_test.py") and "/" not in name
    }


def _constants(tree: ast.Module) -> dict[str, Any]:
    """The module's (and its classes') plain assignments, evaluated in order; those that need
    anything else (imports, calls of the module's own) are left out."""
    namespace: dict[str, Any] = {"base64": base64, "randint": lambda low, _high: low, "textwrap": textwrap}
    nodes = list(tree.body) + [n for c in tree.body if isinstance(c, ast.ClassDef) for n in c.body]
    for node in nodes:
        if isinstance(node, ast.Assign):
            try:
                exec(compile(ast.Module([node], []), "<constants>", "exec"), namespace)
            except Exception:  # a constant built from what is not here (an import)
                continue
    return namespace


def _parametrized(tree: ast.Module) -> list[tuple[list[str], ast.expr]]:
    """(argument names, the expression listing the cases) of every parametrize decorator."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            if (
                isinstance(decorator, ast.Call)
                and isinstance(decorator.func, ast.Attribute)
                and decorator.func.attr == "parametrize"
                and len(decorator.args) >= 2
                and isinstance(decorator.args[0], ast.Constant)
                and isinstance(decorator.args[0].value, str)
            ):
                names = [n.strip() for n in decorator.args[0].value.split(",")]
                found.append((names, decorator.args[1]))
    return found


def cases(repo: Path) -> tuple[list[Case], int]:
    """The cases, and the keyword plugin's lines refused only for their file's type."""
    out: list[Case] = []
    keyword: dict[str, set[str | None]] = collections.defaultdict(set)
    namespace_of_keyword: dict[str, Any] = {}
    for name, source in _sources(repo).items():
        plugin = name.removesuffix("_test.py")
        tree = ast.parse(source)
        namespace = _constants(tree)
        for names, listing in _parametrized(tree):
            try:
                values = eval(compile(ast.Expression(listing), "<cases>", "eval"), namespace)
            except Exception:  # cases built by the test's own helpers
                continue
            if plugin == "keyword" and names == ["file_extension", "line", "expected_secret"]:
                continue  # built by parse_test_cases from the lists below
            text_arg = next((n for n in _TEXT_ARGS if n in names), None)
            flag_arg = next((n for n in _FLAG_ARGS if n in names), None)
            if text_arg is None or flag_arg is None:
                continue
            for row in values:
                item = dict(zip(names, row, strict=False))
                if isinstance(item[text_arg], str):
                    out.append(Case(plugin, item[text_arg], None, bool(item[flag_arg])))
        if plugin == "keyword":
            namespace_of_keyword = namespace
            for constant, value in namespace.items():
                if constant.endswith("_TEST_CASES") and isinstance(value, list):
                    for line, secret in value:
                        if len(line) < 1000:  # the long-line case is a speed test
                            keyword[line].add(secret)
    # The keyword tests' own secrets (with a letter or digit: a value of symbols alone is no
    # secret to them in any file type).
    own = [v for k, v in namespace_of_keyword.items() if k.endswith("_SECRET") and isinstance(v, str)]
    own = [v for v in own if any(c.isalnum() for c in v)]
    refused_for_type = 0
    for line, secrets in keyword.items():
        named = sorted(s for s in secrets if s)
        if named:
            out.append(Case("keyword", line, named[0], True))
        elif any(secret in line for secret in own):
            refused_for_type += 1  # `api_key = '…';` in C, which wants double quotes
        else:
            out.append(Case("keyword", line, None, False))
    return out, refused_for_type


def found(case: Case) -> bool:
    findings = detect_uncached(case.text)
    if case.secret is None:
        return bool(findings)
    start = case.text.find(case.secret)
    end = start + len(case.secret)
    return any(f.start < end and f.end > start for f in findings)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repo", type=Path, required=True, help="detect-secrets checkout or bare git dir")
    parser.add_argument("--show", action="store_true", help="print the misses and the false findings")
    args = parser.parse_args(argv)
    all_cases, refused_for_type = cases(args.repo)
    rows: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    shown: list[str] = []
    for case in all_cases:
        hit = found(case)
        row = rows[case.plugin]
        if case.positive:
            row["positives"] += 1
            row["found"] += hit
            if not hit:
                shown.append(f"  miss   {case.plugin}: {case.text[:160]!r}")
        else:
            row["negatives"] += 1
            row["flagged"] += hit
            if hit:
                shown.append(f"  false  {case.plugin}: {case.text[:160]!r}")
    print(f"detect-secrets plugin tests: {len(all_cases)} cases from {len(rows)} plugins")
    print(f"  {'plugin':20} {'positives':>9} {'found':>6} {'negatives':>9} {'flagged':>7}")
    total: collections.Counter[str] = collections.Counter()
    for plugin in sorted(rows):
        row = rows[plugin]
        total.update(row)
        print(f"  {plugin:20} {row['positives']:>9} {row['found']:>6} {row['negatives']:>9} {row['flagged']:>7}")
    print(f"  {'all':20} {total['positives']:>9} {total['found']:>6} {total['negatives']:>9} {total['flagged']:>7}")
    recall = total["found"] / total["positives"] if total["positives"] else 0.0
    print(f"  recall {recall:.3f}; keyword lines refused only for their file's type (not scored): {refused_for_type}")
    if args.show:
        print("\n".join(shown))


if __name__ == "__main__":
    main()

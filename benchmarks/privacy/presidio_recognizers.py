"""Tandem's default detector on the labelled cases of Presidio's recognizer tests.

    python -m benchmarks.privacy.presidio_recognizers --repo PATH [--show]

PATH: a checkout or a bare git directory of github.com/microsoft/presidio (MIT licence; the
commit measured is named in benchmarks/privacy/README.md). Not shipped with Tandem. Each
predefined recognizer's tests (`presidio-analyzer/tests/test_<name>_recognizer.py`) list cases
as `pytest.mark.parametrize` literals: a text and how many values of the recognizer's entity it
holds (0: a look-alike). They are read with `ast.literal_eval` (nothing of Presidio runs) for the
recognizers whose entity is a kind Tandem redacts by default (`KINDS` below).

A case with N values counts N positives, found up to the number of findings of the mapped kinds
in the text; a case with none counts one negative, false when any such finding is in it.
Presidio takes many bare values on their shape alone and scores them low without context; Tandem
takes digit-only ids with weak checks only beside a label (docs/privacy.md), and test numbers
that fail their check (temporary Finnish ids, Woolworth's SSN) are not ids to it: the figures
say how far the two designs agree, not which is right.
"""

from __future__ import annotations

import argparse
import ast
import collections
import subprocess
from pathlib import Path

from router.privacy.detect import detect_uncached

_ID = frozenset({"NATIONAL_ID"})
# Presidio's recognizer (its test file's name) -> the finding types that count for it.
KINDS: dict[str, frozenset[str]] = {
    "credit_card": frozenset({"CARD"}),
    "email": frozenset({"EMAIL"}),
    "iban": frozenset({"IBAN"}),
    "ip": frozenset({"IP_ADDRESS"}),
    "phone": frozenset({"PHONE"}),
    "tr_phone_number": frozenset({"PHONE"}),
    "ph_mobile_number": frozenset({"PHONE"}),
    "us_ssn": frozenset({"US_SSN", "NATIONAL_ID"}),
    "us_itin": frozenset({"US_SSN", "NATIONAL_ID"}),
    **{
        name: _ID
        for name in [
            "uk_nino",
            "uk_nhs",
            "es_nif",
            "es_nie",
            "it_fiscal_code",
            "in_aadhaar",
            "in_pan",
            "au_tfn",
            "ca_sin",
            "pl_pesel",
            "se_personnummer",
            "fi_personal_identity_code",
            "kr_rrn",
            "kr_frn",
            "th_tnin",
            "tr_national_id",
            "de_tax_id",
            "us_passport",
            "us_driver_license",
            "uk_passport",
            "es_passport",
            "it_passport",
            "in_passport",
            "de_passport",
            "kr_passport",
            "ng_nin",
            "de_id_card",
            "it_identity_card",
            "de_social_security",
            "uk_driving_licence",
            "it_driver_license",
            "kr_driver_license",
            "de_fuehrerschein",
            "ph_tin",
            "in_voter",
            "sg_fin",
        ]
    },
}
_TESTS = "presidio-analyzer/tests"


def _sources(repo: Path) -> dict[str, str]:
    """Each mapped recognizer's test file's text, from a checkout or a bare git directory."""
    out: dict[str, str] = {}
    for name in KINDS:
        relative = f"{_TESTS}/test_{name}_recognizer.py"
        if (repo / relative).is_file():
            out[name] = (repo / relative).read_text()
            continue
        shown = subprocess.run(
            ["git", "--git-dir", str(repo), "show", f"HEAD:{relative}"], capture_output=True, text=True
        )
        if shown.returncode == 0:
            out[name] = shown.stdout
    return out


def cases(source: str) -> list[tuple[str, int]]:
    """(text, values it holds) of every parametrize literal with `text` and `expected_len`."""
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "parametrize" and len(node.args) >= 2):
            continue
        try:
            names = [n.strip() for n in ast.literal_eval(node.args[0]).split(",")]
            rows = ast.literal_eval(node.args[1])
        except (ValueError, SyntaxError, AttributeError):
            continue  # built in code, not a literal
        if "text" not in names or "expected_len" not in names:
            continue
        text_at, count_at = names.index("text"), names.index("expected_len")
        found.extend((row[text_at], int(row[count_at])) for row in rows)
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, required=True, help="a checkout or bare git dir of microsoft/presidio")
    parser.add_argument("--show", action="store_true", help="print each miss and false finding")
    args = parser.parse_args(argv)
    sources = _sources(args.repo)
    if not sources:
        raise SystemExit(f"no recognizer tests under {args.repo}/{_TESTS}")
    rows: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0, 0])  # pos, found, neg, false
    for name, source in sorted(sources.items()):
        for text, expected in cases(source):
            findings = detect_uncached(text)
            mine = [f for f in findings if f.type in KINDS[name]]
            row = rows[name]
            if expected > 0:
                row[0] += expected
                row[1] += min(expected, len(mine))
                if args.show and len(mine) < expected:
                    print(f"MISS  {name}: {text!r} {[(f.type, f.value) for f in findings]}")
            else:
                row[2] += 1
                row[3] += bool(mine)
                if args.show and mine:
                    print(f"FALSE {name}: {text!r} {[(f.type, f.value) for f in mine]}")
    print(f"{'recognizer':28} {'values':>6} {'found':>5} {'recall':>6} {'look-alikes':>11} {'false':>5}")
    total = [0, 0, 0, 0]
    for name, row in sorted(rows.items()):
        recall = f"{row[1] / row[0]:.2f}" if row[0] else "-"
        print(f"{name:28} {row[0]:6d} {row[1]:5d} {recall:>6} {row[2]:11d} {row[3]:5d}")
        total = [a + b for a, b in zip(total, row, strict=True)]
    print(f"{'all':28} {total[0]:6d} {total[1]:5d} {total[1] / total[0]:6.3f} {total[2]:11d} {total[3]:5d}")


if __name__ == "__main__":
    main()

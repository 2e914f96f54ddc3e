"""The tools the deploy checks need. A missing one fails the test (never a skip): `make test`
installs promtool (Debian's prometheus package) and the Python packages (the test extra)."""

from __future__ import annotations

import importlib
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
CHART = ROOT / "helm" / "tandem"
RULES = DEPLOY / "prometheus" / "rules.yaml"

# Grafana's variables, replaced by values PromQL accepts before an expression is parsed.
GRAFANA_VARIABLES = {
    "$__rate_interval": "5m",
    "$__interval": "1m",
    "$__range": "1h",
    "$route": ".*",
    "$namespace": ".*",
    "$job": ".*",
    "$instance": ".*",
}


def promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        pytest.fail("promtool is not installed: `make test` installs it (apt-get install prometheus)")
    return path


def run_promtool(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([promtool(), *args], capture_output=True, text=True, cwd=cwd, timeout=60)


def helm() -> Any:
    try:
        import helm_python
    except ImportError as exc:  # pragma: no cover - the message is the point
        pytest.fail(f"helm-python-sdk is not installed ({exc}): `make test` installs the test extra")
    return helm_python


@cache
def generator() -> ModuleType:
    """tools/dashboards.py, imported when a test needs it (grafana-foundation-sdk is a test extra)."""
    return importlib.import_module("tools.dashboards")


def grafana_to_promql(expr: str) -> str:
    for variable, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(variable, value)
    return expr


def metric_names(expr: str) -> set[str]:
    """Every metric an expression selects, from its parsed tree (fails on a syntax error)."""
    import promql_parser

    names: set[str] = set()

    def visit(node: Any) -> bool:
        if isinstance(node, promql_parser.VectorSelector) and node.name:
            names.add(node.name)
        return True

    promql_parser.walk(promql_parser.parse(grafana_to_promql(expr)), visit)
    return names


_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{.*\})? \S+$")


def exposed(text: str) -> tuple[set[str], set[str]]:
    """(names declared with # TYPE and their sample names, names that have samples)."""
    declared: set[str] = set()
    sampled: set[str] = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            declared.add(name)
            if kind == "histogram":
                declared.update({f"{name}_bucket", f"{name}_sum", f"{name}_count"})
        elif match := _SAMPLE.match(line):
            sampled.add(match.group(1))
    return declared, sampled


def missing_metrics(exprs: list[str], declared: set[str]) -> dict[str, set[str]]:
    """Expression -> the metrics it uses that /metrics does not declare."""
    missing = {}
    for expr in exprs:
        absent = metric_names(expr) - declared
        if absent:
            missing[expr] = absent
    return missing

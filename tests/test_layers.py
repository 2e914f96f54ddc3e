"""The layer contracts (pyproject's `[tool.importlinter]`, also run by `make lint`) hold, and
they catch a break; no module imports itself back at runtime (an import cycle through module-level
imports: imports inside functions and under `if TYPE_CHECKING:` run later or never)."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("router", "judge", "sim")
LINT_IMPORTS = [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()"]


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([*LINT_IMPORTS, "--no-cache"], cwd=root, env=env, capture_output=True, text=True, timeout=180)


def test_the_layer_contracts_hold() -> None:
    done = _lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout
    assert "No matches for ignored import" not in done.stdout + done.stderr  # every listed exception is real


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("router/ledger.py", "import starlette.responses", "bottom: plain types"),
        ("judge/features.py", "import router.errors", "judge is a library"),
        ("router/metrics.py", "import sim.tasks", "never imports the simulator"),
        ("router/protocol/sse.py", "import router.engine", "gateway layers"),
        ("router/upstream.py", "import starlette.responses", "no HTTP framework below"),
        ("router/engine.py", "from fastapi import FastAPI", "no HTTP framework below"),
    ],
)
def test_a_contract_catches_a_break(tmp_path: Path, module: str, line: str, contract: str) -> None:
    for name in (*PACKAGES, "pyproject.toml"):
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "data", "models"))
        else:
            shutil.copy2(source, tmp_path / name)
    target = tmp_path / module
    target.write_text(target.read_text() + f"\n{line}\n")
    done = _lint_imports(tmp_path)
    assert done.returncode != 0
    broken = [text for text in done.stdout.splitlines() if "BROKEN" in text]
    assert any(contract in text for text in broken), done.stdout


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_imports(tree: ast.Module, name: str, is_package: bool, known: set[str]) -> set[str]:
    """Modules this one imports while it is being imported: module-level statements, including
    inside `try`/`if` blocks at module level, but not `if TYPE_CHECKING:` blocks."""
    found: set[str] = set()
    package = name if is_package else name.rpartition(".")[0]

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    base = f"{anchor}.{base}" if base else anchor
                found.add(base)
                found.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known)
            elif isinstance(node, ast.If):
                test = ast.unparse(node.test)
                if "TYPE_CHECKING" not in test:
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                    visit(block)

    visit(tree.body)
    return found & known


def runtime_cycles() -> list[list[str]]:
    files = {
        _module_name(p): p for package in PACKAGES for p in (ROOT / package).rglob("*.py") if "vllm" not in p.parts
    }
    known = set(files)
    edges = {
        name: _runtime_imports(ast.parse(path.read_text()), name, path.name == "__init__.py", known)
        for name, path in files.items()
    }
    # Tarjan's strongly connected components; a component of two or more modules is a cycle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in edges[node]:
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in edges[node]:
                cycles.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(edges):
        if node not in index:
            connect(node)
    return cycles


def test_no_import_cycle_at_runtime() -> None:
    assert runtime_cycles() == []


def test_the_cycle_check_sees_a_cycle(monkeypatch: pytest.MonkeyPatch) -> None:
    # The same walk over a module that imports its importer: router.ledger <- router.step.
    original = ast.parse
    ledger = ROOT / "router" / "ledger.py"

    def parse(source: str | bytes, *args: object, **kwargs: object) -> ast.Module:
        tree = original(source, *args, **kwargs)  # type: ignore[arg-type]
        if isinstance(source, str) and source == ledger.read_text():
            tree.body.append(ast.parse("import router.engine").body[0])
        return tree

    monkeypatch.setattr(ast, "parse", parse)
    assert any("router.ledger" in cycle for cycle in runtime_cycles())


WITHOUT_SIM = """
import sys


class NoSimulator:
    # As in the gateway's image, which leaves the simulator out: `sim` is not there.

    def find_spec(self, name, path=None, target=None):
        if name == "sim" or name.startswith("sim."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NoSimulator())
from router.app import create_app
from router.cli import main
from router.settings import load_settings
create_app(load_settings())
sys.exit(main(["demo"]))
"""


def test_the_gateway_runs_without_the_simulator() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", WITHOUT_SIM], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "the demo needs the simulator package `sim`" in done.stderr


def test_a_gateway_without_a_judge_route_never_loads_onnxruntime() -> None:
    # onnxruntime costs ~30 MB of resident memory: only a judge route's policy may import it.
    code = "import sys, router.app, router.cli; print('onnxruntime' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"

"""The layer contracts (pyproject's `[tool.importlinter]`, also run by `make lint`) hold, and
they catch a break; no module imports itself back at runtime (an import cycle through module-level
imports: imports inside functions and under `if TYPE_CHECKING:` run later or never); in the
gateway, not even through type-only imports; and no package of the gateway imports one that
imports it back (tests/import_graph.py reads the graph)."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.import_graph import cycles, import_graph, package_graph, two_way

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
        ("router/metrics/core.py", "import sim.tasks", "never imports the simulator"),
        ("router/protocol/sse.py", "import router.engine", "gateway layers"),
        ("router/upstream.py", "import starlette.responses", "no HTTP framework below"),
        ("router/engine.py", "from fastapi import FastAPI", "no HTTP framework below"),
        # The middle layer is ordered: trajectories sit below privacy, the series below strategies.
        ("router/trajectory/tracker.py", "import router.privacy.guard", "gateway layers"),
        ("router/metrics/route_series.py", "import router.policies.base", "gateway layers"),
        ("router/config/routes.py", "import router.settings", "gateway layers"),
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


def runtime_cycles() -> list[list[str]]:
    return cycles(import_graph(ROOT, PACKAGES))


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


def test_no_import_circle_in_the_gateway_even_through_type_only_imports() -> None:
    # A module imported only for its types (`if TYPE_CHECKING:`) still ties the two designs
    # together: the config types sit at the bottom so that no such circle is needed.
    assert cycles(import_graph(ROOT, ["router"], type_only=True)) == []


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def test_the_circle_check_finds_a_circle_through_a_type_only_import(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "toy/__init__.py": "",
            "toy/a.py": "from toy.b import B\n",
            "toy/b.py": """
                from typing import TYPE_CHECKING
                if TYPE_CHECKING:
                    from toy.a import A
                class B: ...
            """,
            "toy/c.py": "import toy.a\n",
        },
    )
    assert cycles(import_graph(root, ["toy"])) == []  # at runtime there is none
    assert cycles(import_graph(root, ["toy"], type_only=True)) == [["toy.a", "toy.b"]]


def test_no_package_of_the_gateway_imports_one_that_imports_it_back() -> None:
    packages = package_graph(import_graph(ROOT, ["router"], type_only=True))
    assert two_way(packages) == []
    # Nor round a longer circle: the packages (and top-level modules) of router/ form levels.
    assert cycles({name: set(targets) for name, targets in packages.items()}) == []


def test_the_package_check_finds_packages_that_import_each_other(tmp_path: Path) -> None:
    # No module circle here: x.low <- y.high and y.low <- x.high, a circle of packages only.
    root = _package(
        tmp_path,
        {
            "toy/__init__.py": "",
            "toy/x/__init__.py": "",
            "toy/x/low.py": "",
            "toy/x/high.py": "import toy.y.low\n",
            "toy/y/__init__.py": "",
            "toy/y/low.py": "",
            "toy/y/high.py": "import toy.x.low\n",
        },
    )
    edges = import_graph(root, ["toy"])
    assert cycles(edges) == []
    (pair,) = two_way(package_graph(edges))
    assert (
        pair.startswith("toy.x <-> toy.y") and "toy.x.high -> toy.y.low" in pair and "toy.y.high -> toy.x.low" in pair
    )


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
    # onnxruntime costs ~30 MB of resident memory: only a judge route's policy may import it
    # (building the routes imports every strategy's module, the judge's among them).
    code = (
        "import sys, router.app, router.cli; from router.engine import build_routes;"
        " from router.settings import load_settings; build_routes(load_settings());"
        " print('onnxruntime' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"

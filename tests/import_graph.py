"""The import graph of our packages, read from the source with `ast` (nothing is imported):
which module imports which, at runtime only or counting type-only imports too, its cycles, and
which packages depend on each other both ways. tests/test_layers.py holds the gateway to them."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

Graph = dict[str, set[str]]


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(tree: ast.Module, name: str, is_package: bool, known: set[str], type_only: bool) -> set[str]:
    """Modules this one imports while it is being imported: module-level statements, including
    inside `try`/`if` blocks at module level; `if TYPE_CHECKING:` blocks only with `type_only`
    (never run, but a type checker follows them, and a circle through them still ties the
    modules' designs together). Imports inside functions run later and are not counted."""
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
                if type_only or "TYPE_CHECKING" not in ast.unparse(node.test):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                    visit(block)

    visit(tree.body)
    return (found & known) - {name}


def import_graph(root: Path, packages: Iterable[str], type_only: bool = False) -> Graph:
    """Module -> the modules of `packages` it imports (see `imports_of`)."""
    files = {
        module_name(root, p): p for package in packages for p in (root / package).rglob("*.py") if "vllm" not in p.parts
    }
    known = set(files)
    return {
        name: imports_of(ast.parse(path.read_text()), name, path.name == "__init__.py", known, type_only)
        for name, path in files.items()
    }


def cycles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """The graph's cycles: each strongly connected component of two or more nodes (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(edges.get(node, ())):
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
            if len(component) > 1 or node in edges.get(node, ()):
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(edges):
        if node not in index:
            connect(node)
    return found


def package_of(module: str, depth: int = 2) -> str:
    """The package (or top-level module) a module belongs to: `router.trajectory.store` ->
    `router.trajectory`, `router.ledger` -> `router.ledger`."""
    return ".".join(module.split(".")[:depth])


def package_graph(edges: Mapping[str, set[str]]) -> dict[str, dict[str, list[str]]]:
    """Package -> package it imports -> the module imports that make the dependency."""
    packages: dict[str, dict[str, list[str]]] = {}
    for source, targets in edges.items():
        for target in targets:
            outer, inner = package_of(source), package_of(target)
            if outer != inner:
                packages.setdefault(outer, {}).setdefault(inner, []).append(f"{source} -> {target}")
    return packages


def two_way(packages: Mapping[str, Mapping[str, list[str]]]) -> list[str]:
    """Each pair of packages that import each other, with the imports of both directions."""
    pairs = []
    for outer, targets in sorted(packages.items()):
        for inner, because in sorted(targets.items()):
            back = packages.get(inner, {}).get(outer)
            if back and outer < inner:
                pairs.append(f"{outer} <-> {inner}: {sorted(because)} / {sorted(back)}")
    return pairs

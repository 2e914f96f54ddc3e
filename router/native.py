"""Compiled hot modules: load the mypyc-built extension modules of a few strictly typed modules
when a build of exactly these sources exists, the pure-Python modules otherwise.

`make install` runs `python -m router.native_build` where a C compiler and Python's headers
exist; it writes the extension modules and a manifest under `build/compiled/` beside the
`router` package (never inside the package folders: an extension module there would be
imported before the `.py` beside it, an edited `.py` hidden by a stale build). At import of
`router`, `install()` reads the manifest and puts a finder first on `sys.meta_path` only when
every source the build read (the compiled modules and the project modules they import) still
has the hash it had at build time and the Python is the one it was built for; any difference,
or `TANDEM_PURE=1` in the environment, and nothing compiled is loaded. It is all or nothing:
compiled modules call each other natively, so one stale module cannot be swapped out alone.

`state()` says which mode the process is in (`tandem --version` and `tandem check` print it).
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

PURE_ENV = "TANDEM_PURE"
ROOT = Path(__file__).resolve().parent.parent  # the folder holding the router and judge packages
BUILD_DIR = ROOT / "build" / "compiled"
MANIFEST = "manifest.json"
MANIFEST_SCHEMA = "tandem.compiled/1"


def source_hash(path: Path) -> str:
    """The sha256 of a source file's bytes (what the manifest keeps for each source it read)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def extension_suffix() -> str:
    """This Python's suffix for extension modules (`.cpython-311-x86_64-linux-gnu.so`)."""
    return importlib.machinery.EXTENSION_SUFFIXES[0]


@dataclass
class NativeState:
    """Which mode this process is in: the modules the finder serves compiled (empty: pure), and
    why it is pure when it is."""

    modules: dict[str, Path] = field(default_factory=dict)
    reason: str = ""

    def loaded(self) -> list[str]:
        """The compiled modules this process has imported so far (those served by the finder)."""
        return sorted(
            name for name, path in self.modules.items() if getattr(sys.modules.get(name), "__file__", None) == str(path)
        )

    def describe(self) -> str:
        """One line: `compiled: N modules (…)`, or `compiled: 0 modules (pure: why)`."""
        if not self.modules:
            return f"compiled: 0 modules (pure Python: {self.reason})"
        names = sorted(name for name in self.modules if not name.endswith("__mypyc"))
        return f"compiled: {len(names)} modules ({', '.join(names)})"


class _Finder(importlib.abc.MetaPathFinder):
    """Serves the listed modules from their extension files; every other module falls through."""

    def __init__(self, modules: dict[str, Path]) -> None:
        self.modules = modules

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        extension = self.modules.get(fullname)
        if extension is None:
            return None
        loader = importlib.machinery.ExtensionFileLoader(fullname, str(extension))
        return importlib.util.spec_from_file_location(fullname, extension, loader=loader)


def _read(build: Path, root: Path) -> tuple[dict[str, Path], str]:
    """The modules of the build in `build` when it fits these sources and this Python, else
    ({}, why not)."""
    try:
        manifest = json.loads((build / MANIFEST).read_text())
    except FileNotFoundError:
        return {}, "not built (make compile)"
    except (OSError, ValueError) as error:
        return {}, f"unreadable build manifest ({error})"
    if not isinstance(manifest, dict) or manifest.get("schema") != MANIFEST_SCHEMA:
        return {}, "a build manifest of another version (make compile)"
    if manifest.get("suffix") != extension_suffix():
        return {}, f"built for another Python ({manifest.get('suffix')}; make compile)"
    for relative, digest in manifest.get("sources", {}).items():
        source = root / relative
        try:
            fresh = source_hash(source) == digest
        except OSError:
            fresh = False
        if not fresh:
            return {}, f"stale build: {relative} changed since (make compile)"
    modules = {name: build / relative for name, relative in manifest.get("modules", {}).items()}
    missing = [name for name, path in modules.items() if not path.is_file()]
    if missing:
        return {}, f"incomplete build: {missing[0]} missing (make compile)"
    return modules, ""


STATE = NativeState(reason="not installed")


def install(build: Path = BUILD_DIR, root: Path = ROOT) -> NativeState:
    """Put the compiled modules' finder first on `sys.meta_path` when the build fits (once per
    process); the state either way. A module imported before this stays as it was imported."""
    global STATE
    if any(isinstance(finder, _Finder) for finder in sys.meta_path):
        return STATE
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        STATE = NativeState(reason=f"{PURE_ENV}={os.environ[PURE_ENV]}")
        return STATE
    modules, reason = _read(build, root)
    STATE = NativeState(modules, reason)
    if modules:
        sys.meta_path.insert(0, _Finder(modules))
    return STATE


def state() -> NativeState:
    """This process's mode (`install` ran at import of `router`)."""
    return STATE

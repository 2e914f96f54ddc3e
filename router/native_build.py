"""Build the compiled hot modules (`router.native`) with mypyc: `python -m router.native_build`.

Writes the extension modules and `manifest.json` under `build/compiled/` (beside the packages,
never inside them) and records the hash of every source the build read: the compiled modules and
the project modules they import, whose types and constants the compiled code was built against.
With `--optional` (what `make install` runs, with `--if-stale`: nothing to do when the build in
place is fresh) a machine without mypyc, a C compiler or Python's
headers gets one line saying so and the pure-Python modules; without it that is an error.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import json
import os
import shutil
import sys
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from router.native import BUILD_DIR, MANIFEST, MANIFEST_SCHEMA, PURE_ENV, ROOT, _read, extension_suffix, source_hash

# Chosen by profile (`benchmarks.stages`, cProfile of the chain): pure functions over strings,
# dicts and lists that run on every step, with no monkeypatched names in the tests, no
# subclassing from interpreted code and no pydantic model. Each measured by `benchmarks.cpu`.
MODULES = (
    "judge/status.py",  # the record's failure reason of the last action, every step
    "judge/signals.py",  # the error signals of tool results (features and status)
    "judge/actions.py",  # an action's type, for the judge's features
    "judge/features.py",  # the judge route's feature vector
    "judge/trees.py",  # the judge's trees walked for one step's score
    "router/protocol/chat.py",  # the chat body's checks
    "router/protocol/prefix.py",  # a body parsed from the trajectory's last one (new bytes only)
    "router/protocol/prefix_store.py",  # the known prefixes a body is split on
    "router/privacy/taken.py",  # the kept findings' spans, asked of every privacy candidate
    "router/privacy/windows.py",  # the exact search around each candidate (value-dense text)
    "router/privacy/spans.py",  # hyperscan's match handler and the candidates' character offsets
    "router/privacy/validators.py",  # check digits, checksums and entropy of candidates
    "router/privacy/label_window.py",  # a label word before a value (phones, national ids)
    "router/privacy/phones.py",  # a phone candidate's context rules
    "router/privacy/phone_lengths.py",  # a phone candidate's validity from the metadata
)


def _module_name(relative: str) -> str:
    return relative.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _file_of(module: str, root: Path) -> Path | None:
    base = root / module.replace(".", "/")
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def read_sources(modules: tuple[str, ...], root: Path) -> list[str]:
    """The compiled modules and the project modules (router, judge) they import directly, as
    paths relative to `root`, sorted."""
    found = set(modules)
    for relative in modules:
        tree = ast.parse((root / relative).read_text(), relative)
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            for name in names:
                if name.split(".")[0] not in ("router", "judge"):
                    continue
                path = _file_of(name, root)
                if path is not None:
                    found.add(path.relative_to(root).as_posix())
    return sorted(found)


def missing_tools() -> str | None:
    """Why this machine cannot build (no mypyc, no C compiler, no Python headers), or None."""
    try:
        import mypyc.build  # noqa: F401
    except ImportError:
        return "mypyc is not installed (pip install mypy)"
    compiler = str(sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        return f"no C compiler ({compiler})"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file():
        return "no Python headers (Python.h; the python3-dev package)"
    return None


def without_warnings(output: str) -> str:
    """mypyc's messages less its warnings ("judge/x.py:12: warning: Treating generator
    comprehension as list"): they say how it compiled a line, nothing for whoever installs."""
    return "".join(line for line in output.splitlines(keepends=True) if ": warning: " not in line)


def _mypycify_quietly(mypycify: Callable[..., list[Any]], modules: list[str], target_dir: str) -> list[Any]:
    """mypycify, its printed warnings dropped when it succeeds; when it fails, everything it
    printed (its errors) is shown, and its exit becomes an error `main` reports."""
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            extensions = mypycify(modules, opt_level="3", target_dir=target_dir)
    except SystemExit as stop:  # mypyc exits on a type error after printing it
        sys.stdout.write(printed.getvalue())
        raise RuntimeError("mypyc stopped on the errors above") from stop
    except BaseException:
        sys.stdout.write(printed.getvalue())
        raise
    sys.stdout.write(without_warnings(printed.getvalue()))
    return extensions


def build(out: Path = BUILD_DIR, root: Path = ROOT, modules: tuple[str, ...] = MODULES) -> dict[str, object]:
    """Compile `modules` into `out` and write its manifest; the manifest."""
    from mypyc.build import mypycify
    from setuptools import Distribution  # type: ignore[import-untyped]
    from setuptools.command.build_ext import build_ext  # type: ignore[import-untyped]

    # A failed build must leave no manifest behind: the old one may name extension files the
    # build is about to overwrite.
    (out / MANIFEST).unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    sources = read_sources(modules, root)
    digests = {relative: source_hash(root / relative) for relative in sources}
    here = Path.cwd()
    os.chdir(root)  # mypyc names modules by their path from the current folder
    try:
        extensions = _mypycify_quietly(mypycify, list(modules), str(out / "c"))
        command = build_ext(Distribution({"name": "tandem-compiled", "ext_modules": extensions}))
        command.build_lib = str(out)
        command.build_temp = str(out / "tmp")
        command.inplace = False
        command.ensure_finalized()
        command.run()
    finally:
        os.chdir(here)
    suffix = extension_suffix()
    built = {extension.name: (Path(*extension.name.split(".")).as_posix() + suffix) for extension in extensions}
    manifest: dict[str, object] = {
        "schema": MANIFEST_SCHEMA,
        "suffix": suffix,
        "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "modules": built,
        "sources": digests,
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=BUILD_DIR, help="where the extension modules and manifest go")
    parser.add_argument(
        "--optional", action="store_true", help="a machine that cannot build says so and exits 0 (pure Python)"
    )
    parser.add_argument("--if-stale", action="store_true", help="build only when no fresh build is there")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    # Fresh only when it fits these sources and holds every module listed now (a module added
    # to MODULES changes no source the old build read).
    if args.if_stale and {_module_name(m) for m in MODULES} <= set(_read(out, ROOT)[0]):
        print(f"tandem: the compiled modules in {args.out} are up to date")
        return 0
    why = missing_tools()
    if why is None and os.environ.get(PURE_ENV, "") not in ("", "0"):
        why = f"{PURE_ENV} is set"
    if why is not None:
        print(f"tandem: compiled modules not built ({why}); the pure-Python modules are used")
        return 0 if args.optional else 1
    print(
        f"tandem: compiling {len(MODULES)} hot modules with mypyc into {args.out} (about a minute; "
        "optional: skipped without a C compiler, then the pure-Python modules are used)",
        flush=True,
    )
    started = time.monotonic()
    try:
        manifest = build(out)
    except Exception as error:  # a compiler's or mypyc's failure: pure Python still works
        print(f"tandem: compiled modules not built ({type(error).__name__}: {error}); pure Python is used")
        return 0 if args.optional else 1
    modules = [name for name in manifest["modules"] if not name.endswith("__mypyc")]  # type: ignore[attr-defined]
    print(f"tandem: compiled {len(modules)} modules in {time.monotonic() - started:.0f} s into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Compiled hot modules (router/native.py): a fresh build is loaded, an edited source or
`TANDEM_PURE=1` turns the whole build off (never a stale extension module hiding an edit), and a
build of another Python, an incomplete one or none at all leaves the pure-Python modules.

The tests that load extension modules use this checkout's own build (`make compile`, which
`make install` runs where a C compiler exists), copied with its sources into a temporary folder;
without a build they are skipped (in CI, where the machine can build, they fail) and the manifest
checks still run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from router.native import BUILD_DIR, MANIFEST, MANIFEST_SCHEMA, PURE_ENV, ROOT, _read, extension_suffix, source_hash
from router.native_build import MODULES, _mypycify_quietly, missing_tools, read_sources, without_warnings

# Run in a fresh interpreter whose `router` import found no build (TANDEM_PURE=1), then install
# the build under test by hand and import a compiled module.
PROBE = """
import os, sys
from pathlib import Path
from router.native import install  # router's own install: pure (TANDEM_PURE=1)
os.environ.pop("TANDEM_PURE")
state = install(Path(sys.argv[1]), Path(sys.argv[2]))
import judge.status
print(judge.status.__file__)
print(state.describe())
"""


def _probe(build: Path, root: Path) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), PURE_ENV: "1"}
    command = [sys.executable, "-c", PROBE, str(build), str(root)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def _no_build(why: str) -> None:
    # In CI (`make test` ran `make compile`) on a machine that can build, a missing build is a
    # broken install step, not a reason to skip: say so loudly.
    if os.environ.get("CI") and missing_tools() is None:
        pytest.fail(f"CI can build the compiled modules but this checkout has none fresh: {why}")
    pytest.skip(why)


def _fresh_build() -> dict[str, object]:
    try:
        modules, reason = _read(BUILD_DIR, ROOT)
    except OSError as error:
        _no_build(f"no compiled build: {error}")
        raise
    if not modules:
        _no_build(f"no fresh compiled build of this checkout ({reason})")
    manifest: dict[str, object] = json.loads((BUILD_DIR / MANIFEST).read_text())
    return manifest


def _copy(manifest: dict[str, object], tmp_path: Path) -> tuple[Path, Path]:
    build, root = tmp_path / "build", tmp_path / "root"
    shutil.copytree(BUILD_DIR, build, ignore=shutil.ignore_patterns("c", "tmp"))
    for relative in manifest["sources"]:  # type: ignore[attr-defined]
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / relative, root / relative)
    return build, root


def test_a_fresh_build_is_loaded(tmp_path: Path) -> None:
    build, root = _copy(_fresh_build(), tmp_path)
    module_file, said = _probe(build, root)
    assert module_file == str(build / "judge" / f"status{extension_suffix()}")
    assert said.startswith(f"compiled: {len(MODULES)} modules (") and "judge.status" in said


def test_an_edited_source_turns_the_whole_build_off(tmp_path: Path) -> None:
    build, root = _copy(_fresh_build(), tmp_path)
    # An edit to a module the compiled code was built against (not itself compiled) counts too.
    imported = next(relative for relative in read_sources(MODULES, ROOT) if relative not in MODULES)
    with (root / imported).open("a") as source:
        source.write("\n# an edit after the build\n")
    module_file, said = _probe(build, root)
    assert module_file == str(ROOT / "judge" / "status.py")
    assert said == f"compiled: 0 modules (pure Python: stale build: {imported} changed since (make compile))"


def test_tandem_pure_keeps_the_pure_modules() -> None:
    _fresh_build()
    code = (
        "import router, judge.status; from router.native import state; print(judge.status.__file__, state().describe())"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), PURE_ENV: "1"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.split(" ", 1) == [
        str(ROOT / "judge" / "status.py"),
        "compiled: 0 modules (pure Python: TANDEM_PURE=1)\n",
    ]


def _manifest(tmp_path: Path, **changes: object) -> tuple[Path, Path]:
    """A manifest for one module over a copy of judge/status.py, with `changes` to its fields."""
    build, root = tmp_path / "build", tmp_path / "root"
    (root / "judge").mkdir(parents=True)
    shutil.copy2(ROOT / "judge" / "status.py", root / "judge" / "status.py")
    (build / "judge").mkdir(parents=True)
    extension = build / "judge" / f"status{extension_suffix()}"
    extension.write_bytes(b"")
    manifest = {
        "schema": MANIFEST_SCHEMA,
        "suffix": extension_suffix(),
        "modules": {"judge.status": f"judge/status{extension_suffix()}"},
        "sources": {"judge/status.py": source_hash(root / "judge" / "status.py")},
        **changes,
    }
    (build / MANIFEST).write_text(json.dumps(manifest))
    return build, root


def test_the_manifest_decides_and_says_why_not(tmp_path: Path) -> None:
    build, root = _manifest(tmp_path / "fits")
    modules, reason = _read(build, root)
    assert list(modules) == ["judge.status"] and reason == ""
    assert _read(tmp_path / "none", root) == ({}, "not built (make compile)")
    build, root = _manifest(tmp_path / "other", suffix=".cpython-312-x86_64-linux-gnu.so")
    assert _read(build, root)[1] == "built for another Python (.cpython-312-x86_64-linux-gnu.so; make compile)"
    build, root = _manifest(tmp_path / "gone")
    (build / "judge" / f"status{extension_suffix()}").unlink()
    assert _read(build, root)[1] == "incomplete build: judge.status missing (make compile)"
    build, root = _manifest(tmp_path / "deleted")
    (root / "judge" / "status.py").unlink()
    assert _read(build, root)[1] == "stale build: judge/status.py changed since (make compile)"


def test_the_build_hashes_the_project_modules_the_compiled_ones_import() -> None:
    sources = read_sources(("judge/status.py",), ROOT)
    assert sources[0] == "judge/signals.py" or "judge/status.py" in sources
    assert "judge/status.py" in sources
    text = (ROOT / "judge" / "status.py").read_text()
    for relative in sources:
        if relative != "judge/status.py":
            module = relative.removesuffix(".py").replace("/", ".")
            assert module in text or module.rsplit(".", 1)[0] in text


def test_the_build_hides_mypycs_warnings_but_shows_its_errors(capsys: pytest.CaptureFixture[str]) -> None:
    warning = "judge/features.py:12: warning: Treating generator comprehension as list\n"

    def compiles(modules: list[str], **_: object) -> list[str]:
        print(warning + "judge/features.py:12: note: a note stays", end="")
        return modules

    def fails(modules: list[str], **_: object) -> list[str]:
        print(warning + "judge/x.py:3: error: Name 'y' is not defined")
        sys.exit(1)

    assert without_warnings(warning + "other\n") == "other\n"
    assert _mypycify_quietly(compiles, ["judge/status.py"], "c") == ["judge/status.py"]
    assert capsys.readouterr().out == "judge/features.py:12: note: a note stays"
    with pytest.raises(RuntimeError, match="mypyc stopped"):
        _mypycify_quietly(fails, ["judge/x.py"], "c")
    printed = capsys.readouterr().out
    assert "error: Name 'y' is not defined" in printed and "warning" in printed

"""The docs site builds with `mkdocs build --strict` (as `make lint` does): a broken link, a
missing page or a page left out of the nav fails the build, and so this test."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(root / "mkdocs.yml"),
            "--site-dir",
            str(site),
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    done = build(ROOT, tmp_path / "site")
    assert done.returncode == 0, done.stdout + done.stderr
    built = {p.relative_to(tmp_path / "site").as_posix() for p in (tmp_path / "site").rglob("index.html")}
    for page in (
        "getting-started/index.html",
        "clients/codex/index.html",
        "configuration/index.html",
        "status/index.html",
    ):
        assert page in built
    # The notes other work drops for the docs are not part of the site.
    assert not any(name.startswith("_incoming") for name in built)


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir(parents=True)
    shutil.copy2(ROOT / "mkdocs.yml", root / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", root / "docs")
    return root


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    page = root / "docs" / "getting-started.md"
    page.write_text(page.read_text() + "\nSee [the missing page](no-such-page.md).\n")
    done = build(root, tmp_path / "site")
    assert done.returncode != 0
    assert "no-such-page.md" in done.stdout + done.stderr


def test_a_broken_anchor_and_a_page_outside_the_nav_fail_the_build(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    page = root / "docs" / "getting-started.md"
    page.write_text(page.read_text() + "\nSee [nowhere](concepts.md#no-such-heading).\n")
    done = build(root, tmp_path / "site")
    assert done.returncode != 0 and "no-such-heading" in done.stdout + done.stderr
    root = _copy(tmp_path / "again")
    (root / "docs" / "orphan.md").write_text("# Orphan\n")
    done = build(root, tmp_path / "site2")
    assert done.returncode != 0 and "orphan.md" in done.stdout + done.stderr

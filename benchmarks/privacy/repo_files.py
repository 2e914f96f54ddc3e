"""Files of a public repository a benchmark reads as data: from a checkout, or from a bare git
directory as `fetch` brings it."""

from __future__ import annotations

import subprocess
from pathlib import Path


def files_under(repo: Path, folder: str) -> dict[str, str]:
    """Path relative to `folder` -> text (undecodable bytes replaced), every file below it."""
    if (repo / folder).is_dir():
        root = repo / folder
        return {str(p.relative_to(root)): p.read_text(errors="replace") for p in sorted(root.rglob("*")) if p.is_file()}
    git = ["git", "--git-dir", str(repo)]
    listed = subprocess.run([*git, "ls-tree", "-r", "--name-only", "HEAD", folder], capture_output=True, text=True)
    listed.check_returncode()
    out = {}
    for name in filter(None, listed.stdout.split("\n")):
        raw = subprocess.run([*git, "show", f"HEAD:{name}"], capture_output=True, check=True).stdout
        out[name.removeprefix(folder + "/")] = raw.decode(errors="replace")
    return out


def file_at(repo: Path, commit: str, path: str) -> str:
    """The text of `path` at `commit` of a checkout or a bare git directory (a file a repository
    dropped later is still read at the commit that holds it)."""
    git = ["git", "-C", str(repo)] if (repo / ".git").exists() else ["git", "--git-dir", str(repo)]
    return subprocess.run([*git, "show", f"{commit}:{path}"], check=True, capture_output=True, text=True).stdout

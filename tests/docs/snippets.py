"""The fenced blocks of the README and the docs site, as the doc tests read them.

Fence info strings (the docs' own convention, see docs/testing.md):
- ```yaml / ```json: a Tandem configuration (the whole file or some of its top-level keys);
  validated against the settings models.
- ```yaml {.not-config} / ```json {.not-config}: YAML or JSON that is not Tandem's (a Compose
  file, Helm values, a client's config, an API body); checked to parse, nothing more.
- ```toml: parsed. ```python: compiled.
- ```bash {.run}: run by the tests against a live gateway (127.0.0.1:8080 is replaced by its
  address), from the repository root with the project's Python on PATH.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+)(?P<info>[^`]*)$")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    language: str
    classes: frozenset[str]
    text: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def pages() -> list[Path]:
    """The README and every page of the site (the notes under docs/_incoming are not pages)."""
    found = [ROOT / "README.md"]
    found += sorted(p for p in DOCS.rglob("*.md") if "_incoming" not in p.relative_to(DOCS).parts)
    return found


def _info(info: str) -> tuple[str, frozenset[str]]:
    info = info.strip()
    classes: set[str] = set()
    attrs = re.search(r"\{([^}]*)\}", info)
    if attrs:
        classes = {part[1:] for part in attrs.group(1).split() if part.startswith(".")}
        info = info[: attrs.start()].strip()
    language = info.split()[0] if info else ""
    if language.startswith("."):  # ```{.yaml .not-config}
        language = ""
    if not language and attrs:
        names = [part[1:] for part in attrs.group(1).split() if part.startswith(".")]
        language = names[0] if names else ""
    return language, frozenset(classes)


def blocks(path: Path) -> list[Block]:
    found: list[Block] = []
    lines = path.read_text().splitlines()
    index = 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        indent, fence = len(match.group("indent")), match.group("fence")
        language, classes = _info(match.group("info"))
        body: list[str] = []
        start = index + 1
        index += 1
        while index < len(lines) and lines[index].strip() != fence:
            body.append(lines[index][indent:])
            index += 1
        found.append(Block(path, start, language, classes, "\n".join(body) + "\n"))
        index += 1
    return found


def other_docs() -> list[Path]:
    """Documentation outside the site whose snippets hold to the code too: the packages' and the
    benchmarks' READMEs and the changelog."""
    found = [ROOT / "CHANGELOG.md", ROOT / "judge" / "README.md", ROOT / "sim" / "README.md"]
    found += sorted((ROOT / "deploy").rglob("README.md")) + sorted((ROOT / "benchmarks").glob("*/README.md"))
    return [path for path in found if path.is_file()]


def all_blocks() -> list[Block]:
    return [block for path in pages() + other_docs() for block in blocks(path)]

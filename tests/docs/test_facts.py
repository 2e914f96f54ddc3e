"""Figures and claims the docs state that the shipped files can contradict: the judge's held-out
figures are its model cards', and the simulator's README says what the shipped judge is trained on."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _row(page: str, model_file: str) -> list[str]:
    for line in page.splitlines():
        if line.startswith("|") and f"`judge/models/{model_file}`" in line:
            return [cell.strip() for cell in line.strip("|").split("|")]
    raise AssertionError(f"docs/judge.md has no row for {model_file}")


@pytest.mark.parametrize("name", ["judge", "judge-draft"])
def test_the_judge_page_states_the_model_cards_figures(name: str) -> None:
    card = json.loads((ROOT / "judge" / "models" / f"{name}.card.json").read_text())["evaluation"]
    _, auc, share, caught = _row((ROOT / "docs" / "judge.md").read_text(), f"{name}.onnx")
    assert abs(float(auc) - card["auc"]) <= 0.0011, (auc, card["auc"])
    assert abs(float(share.rstrip("%")) - 100 * card["cloud_share"]) <= 0.11, (share, card["cloud_share"])
    assert abs(float(caught.rstrip("%")) - 100 * card["recall"]) <= 0.11, (caught, card["recall"])
    size_kb = (ROOT / "judge" / "models" / f"{name}.onnx").stat().st_size / 1000
    stated = re.search(rf"`judge/models/{re.escape(name)}\.onnx`, (\d+) KB", (ROOT / "docs" / "judge.md").read_text())
    assert stated is not None and abs(int(stated.group(1)) - size_kb) <= 2


def test_the_simulator_readme_says_the_judge_is_trained_on_real_runs() -> None:
    card = json.loads((ROOT / "judge" / "models" / "judge.card.json").read_text())
    assert "real agent runs" in card["training_data"]["description"]
    readme = (ROOT / "sim" / "README.md").read_text()
    assert "trained on real agent runs" in readme
    assert not re.search(r"shipped\s+model,\s+trained on this simulation", readme)


# Files the docs name that are made at run time, not checked in.
MADE_LATER = {"deploy/.env"}
PATH_IN_CODE = re.compile(r"`((?:router|judge|sim|tests|benchmarks|deploy|helm)/[A-Za-z0-9_./-]+)`")


def test_every_file_the_docs_name_exists() -> None:
    from tests.docs.snippets import pages

    # The changelog names files as they were; judge/README.md names other projects' files too.
    missing = []
    for page in pages() + sorted((ROOT / "benchmarks").glob("*/README.md")):
        for match in PATH_IN_CODE.finditer(page.read_text()):
            path = match.group(1).rstrip(".")
            if path not in MADE_LATER and not (ROOT / path).exists():
                missing.append(f"{page.relative_to(ROOT)}: {path}")
    assert missing == [], "the docs name files that are not in the repository: " + ", ".join(missing)

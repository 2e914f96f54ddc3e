"""docs/performance.md is the table `python -m benchmarks.report` makes from the recorded figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import report

ROOT = Path(__file__).resolve().parents[2]


def test_the_checked_in_page_equals_the_report() -> None:
    page = (ROOT / "docs" / "performance.md").read_text()
    assert page == report.render(report.recorded()), (
        "docs/performance.md is stale: run `python -m benchmarks.report > docs/performance.md`"
    )


def test_every_recorded_figure_is_in_the_table_with_its_date_and_commit() -> None:
    page = report.render(report.recorded())
    assert len(report.recorded()) >= 2
    for path in report.recorded():
        data = json.loads(path.read_text())
        assert f"{data['date']} at commit `{data['commit']}`: {data['machine']}" in page
        for bench in data["benchmarks"]:
            # `privacy.evaluate`: a module of the benchmark package `privacy`.
            assert (ROOT / "benchmarks" / bench["name"].split(".")[0]).is_dir(), bench["name"]
            for figure in bench["figures"]:
                assert f"| {figure['figure']} | {figure['value']} |" in page


def test_a_benchmark_writes_its_figures_for_the_report(tmp_path: Path) -> None:
    path = tmp_path / "judge.json"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.judge_latency", "--steps", "10", "--passes", "1", "--json", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    written = json.loads(path.read_text())
    [bench] = written["benchmarks"]
    # Parsed afresh and reused over the 10 steps (their bodies stay under 400 KB), the model file.
    assert bench["name"] == "judge_latency" and len(bench["figures"]) == 3
    assert bench["figures"][-1]["met"] is True  # the model file is under 1 MB
    page = report.render([report.RESULTS, path])
    assert f"{written['date']}, `{written['commit']}`" in page
    assert "10-step trajectory" in page and "200-step trajectory" not in page


def test_a_later_run_replaces_a_benchmarks_figures(tmp_path: Path) -> None:
    later = {
        "schema": report.SCHEMA,
        "date": "2027-01-01",
        "commit": "0000000",
        "machine": "elsewhere",
        "benchmarks": [
            {
                "name": "metrics",
                "command": "python -m benchmarks.metrics",
                "figures": [{"figure": "per step", "value": "99 us", "target": "<= 50 us", "met": False}],
            }
        ],
    }
    path = tmp_path / "later.json"
    path.write_text(json.dumps(later))
    page = report.render([report.RESULTS, path])
    assert "| `metrics` | per step | 99 us | <= 50 us | **missed** | 2027-01-01, `0000000` |" in page
    assert "12.9 / 19.4 us" not in page and "2027-01-01 at commit `0000000`: elsewhere." in page
    path.write_text(json.dumps({**later, "schema": "other"}))
    with pytest.raises(ValueError, match="schema"):
        report.render([path])

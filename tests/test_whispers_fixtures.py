"""The whispers benchmark counts a fixture's marked secrets and what is found on no mark."""

from __future__ import annotations

from pathlib import Path

from benchmarks.privacy.whispers_fixtures import fixtures, score


def test_marked_secrets_are_counted_found_or_missed(tmp_path: Path) -> None:
    root = tmp_path / "tests" / "fixtures"
    (root / "nested").mkdir(parents=True)
    (root / "script.sh").write_text(
        "# Compliant\nexport API_TOKEN=$token\n# Noncompliant\nexport API_TOKEN=YXNkZmZmZmZm_HARDcoded\n"
    )
    (root / "nested" / ".pypirc").write_text("[pypi]\npassword: hardcoded\n")
    files = fixtures(tmp_path)
    assert set(files) == {"script.sh", "nested/.pypirc"}
    marks, found, missed, other = score(files["script.sh"])
    assert (marks, found, missed, other) == (1, 1, [], [])
    # A password of letters alone is not taken (a schema's `password: string` is no secret).
    marks, found, missed, other = score(files["nested/.pypirc"])
    assert (marks, found, missed) == (1, 0, ["password: hardcoded"])

"""Configs that `tandem serve` refused with a message naming the wrong thing, or started with
without a word: each now says what is wrong in one line that names the setting."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLOUD = "  cloud: {base_url: 'http://127.0.0.1:9/v1', model: big}\n"


@pytest.mark.parametrize(
    ("case", "text", "named"),
    [
        # Before: "upstreams.edge.base_url: Field required", a key the operator left out on purpose.
        (
            "an empty pool",
            "upstreams:\n  edge: {endpoints: [], model: small}\n" + CLOUD,
            "upstreams.edge: endpoints is empty: list the base URL of each replica, or set base_url",
        ),
    ],
)
def test_serve_refuses_the_config_naming_the_setting(case: str, text: str, named: str, tmp_path: Path) -> None:
    folder = str(tmp_path)
    config = tmp_path / "tandem.yaml"
    config.write_text(text.replace("FOLDER", folder))
    done = subprocess.run(
        [sys.executable, "-m", "router.cli", "serve", "--config", str(config), "--port", "1"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if not k.startswith("TANDEM_")},
    )
    assert done.returncode == 2, f"{case}: {done.stdout}{done.stderr}"
    assert named.replace("FOLDER", folder) in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_serve_warns_of_an_audit_log_it_cannot_write(tmp_path: Path) -> None:
    """As `tandem check` does (tests/test_cli_check.py): the gateway still starts. Before, it
    started without a word, and every audit line failed, retried for ever."""
    config = tmp_path / "tandem.yaml"
    config.write_text(
        "upstreams:\n  edge: {base_url: 'http://127.0.0.1:8/v1', model: small}\n"
        + CLOUD
        + f"audit: {{mode: metadata, path: '{tmp_path}'}}\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "router.cli", "serve", "--config", str(config), "--port", "0"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if not k.startswith("TANDEM_")},
    )
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert first == f"tandem: warning: audit.path {tmp_path} is a folder, not a file; its lines will be dropped\n"

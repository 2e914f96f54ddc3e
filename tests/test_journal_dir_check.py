"""An unusable `trajectories.outage_journal_dir` stops `tandem check` and `tandem serve` (exit 2,
naming the key) and a worker's start, instead of keeping the outage journal in memory only."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from router.cli import main
from router.config.base import ConfigError
from router.trajectory.journal_file import JournalFile
from router.trajectory.redis_store import RedisStore
from router.trajectory.resilient import ResilientStore
from router.trajectory.store import MemoryStore
from tests.fake_upstream import free_port

KEY = "trajectories.outage_journal_dir"


@pytest.fixture(autouse=True)
def vault_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TANDEM_VAULT_KEY", base64.b64encode(os.urandom(32)).decode())


def config_with(tmp_path: Path, folder: Path, redis: bool = True) -> Path:
    config = tmp_path / "tandem.yaml"
    config.write_text(
        f"""
upstreams:
  edge: {{base_url: "http://127.0.0.1:1/v1", model: e}}
  cloud: {{base_url: "http://127.0.0.1:2/v1", model: c}}
{"redis_url: redis://127.0.0.1:1/0" if redis else ""}
trajectories: {{outage_journal_dir: '{folder}'}}
"""
    )
    return config


@pytest.fixture()
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "not-a-folder"
    path.write_text("")
    return path


@pytest.mark.parametrize("under", [False, True])
def test_check_and_serve_refuse_a_journal_folder_that_is_a_file(
    tmp_path: Path, a_file: Path, under: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    config = config_with(tmp_path, a_file / "journal" if under else a_file)
    assert main(["check", "--config", str(config)]) == 2
    said = capsys.readouterr()
    assert KEY in said.err and f"{a_file} is not a folder" in said.err, said.err
    assert "config ok" not in said.out
    assert main(["serve", "--config", str(config), "--port", str(free_port())]) == 2
    assert KEY in capsys.readouterr().err


def test_check_refuses_a_journal_folder_it_cannot_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder no file can be made in, whoever runs it (`/proc`: root too, which a read-only
    mode would not stop)."""
    assert main(["check", "--config", str(config_with(tmp_path, Path("/proc")))]) == 2
    assert KEY in capsys.readouterr().err


def test_check_accepts_a_folder_made_at_start_and_makes_nothing(
    tmp_path: Path, a_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "journal" / "worker"
    assert main(["check", "--config", str(config_with(tmp_path, folder))]) == 0, capsys.readouterr().err
    assert not (tmp_path / "journal").exists()
    existing = tmp_path / "existing"
    existing.mkdir()
    assert main(["check", "--config", str(config_with(tmp_path, existing))]) == 0, capsys.readouterr().err
    assert list(existing.iterdir()) == []
    # Without Redis the folder is not used: not checked.
    assert main(["check", "--config", str(config_with(tmp_path, a_file, redis=False))]) == 0


async def test_a_worker_does_not_start_on_a_journal_folder_it_cannot_use(a_file: Path) -> None:
    journal = JournalFile(a_file, os.urandom(32), 1 << 20, 0.001)
    store = ResilientStore(RedisStore("redis://127.0.0.1:1/0"), MemoryStore(), "degrade", journal_file=journal)
    try:
        with pytest.raises(ConfigError, match=KEY):
            await store.start()
    finally:
        await store.primary.aclose()

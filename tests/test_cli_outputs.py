"""A command that fails, or is stopped with Ctrl-C, leaves no output file that looks finished, and
never truncates the file a previous run wrote at its output path: `trajectories export`,
`judge import`, `judge label` and `audit expand` write beside the output and rename at the end."""

from __future__ import annotations

import asyncio
import gzip
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from aiohttp import web

from judge.cli import main as judge_main
from judge.rows import write_rows
from judge.written import replaced_on_success
from router.cli import main as tandem_main
from tests.fake_upstream import free_port
from tests.raw_upstream import RawUpstream

ROOT = Path(__file__).resolve().parents[1]
TRAJECTORIES = ROOT / "tests" / "judge" / "trajectories"
EARLIER = b'{"an earlier run": "its rows"}\n'


def _left(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


def test_an_export_from_a_gateway_that_is_not_there_keeps_the_earlier_file(tmp_path: Path) -> None:
    out = tmp_path / "steps.jsonl"
    out.write_bytes(EARLIER)
    code = tandem_main(["trajectories", "export", "--url", f"http://127.0.0.1:{free_port()}", "--out", str(out)])
    assert code == 1
    assert out.read_bytes() == EARLIER  # was emptied before the gateway was asked
    assert _left(tmp_path) == ["steps.jsonl"]


def test_an_export_never_made_leaves_no_empty_file(tmp_path: Path) -> None:
    out = tmp_path / "steps.jsonl"
    assert tandem_main(["trajectories", "export", "--url", f"http://127.0.0.1:{free_port()}", "--out", str(out)]) == 1
    assert _left(tmp_path) == []


def test_an_import_that_reads_nothing_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "notes.json"
    bad.write_text("a,b,c\n1,2,3\n")
    out = tmp_path / "rows.jsonl"
    assert judge_main(["import", str(bad), "--out", str(out)]) == 2
    assert _left(tmp_path) == ["notes.json"]  # an empty rows.jsonl was left
    (tmp_path / "empty").mkdir()
    out.write_bytes(EARLIER)
    assert judge_main(["import", str(tmp_path / "empty"), "--out", str(out)]) == 2  # no trajectory in it
    assert out.read_bytes() == EARLIER


def test_an_import_still_writes_its_rows_compressed_and_reproducible(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl.gz"
    assert judge_main(["import", str(TRAJECTORIES / "mini.traj.json"), "--out", str(out), "--no-text"]) == 0
    first = out.read_bytes()
    assert gzip.decompress(first).count(b"\n") > 0
    assert judge_main(["import", str(TRAJECTORIES / "mini.traj.json"), "--out", str(out), "--no-text"]) == 0
    assert out.read_bytes() == first
    assert _left(tmp_path) == ["rows.jsonl.gz"]
    assert oct(out.stat().st_mode & 0o777) != oct(0o600)  # not the temporary file's private mode


def test_rows_cut_short_by_ctrl_c_leave_the_earlier_file(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    out.write_bytes(EARLIER)

    def rows() -> object:
        yield {"a": 1}
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_rows(out, rows())  # type: ignore[arg-type]
    assert out.read_bytes() == EARLIER
    assert _left(tmp_path) == ["rows.jsonl"]


def test_a_failed_rename_is_named_by_the_output(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "inside").write_text("x")
    with pytest.raises(OSError) as caught, replaced_on_success(tmp_path / "taken") as stream:
        stream.write(b"rows\n")
    assert caught.value.filename == str(tmp_path / "taken")
    assert _left(tmp_path) == ["taken"]


def test_an_audit_expand_of_a_bad_file_keeps_the_earlier_output(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    audit.write_text("a,b,c\n")
    out = tmp_path / "expanded.jsonl"
    out.write_bytes(EARLIER)
    assert tandem_main(["audit", "expand", str(audit), "--only", "--out", str(out)]) == 2
    assert out.read_bytes() == EARLIER
    assert _left(tmp_path) == ["audit.jsonl", "expanded.jsonl"]


def test_ctrl_c_during_an_export_keeps_the_earlier_file(tmp_path: Path) -> None:
    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(30)  # the gateway takes its time: the user presses Ctrl-C
        return web.json_response({"data": []})

    gateway = RawUpstream({("GET", "/v1/trajectories"): slow}).start()
    out = tmp_path / "steps.jsonl"
    out.write_bytes(EARLIER)
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TANDEM_")}
    environment["PYTHONPATH"] = str(ROOT)
    url = f"http://127.0.0.1:{gateway.port}"
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "router.cli", "trajectories", "export", "--url", url, "--out", str(out)],
            stderr=subprocess.PIPE,
            text=True,
            env=environment,
        )
        deadline = time.monotonic() + 30
        # Until the export has started (the temporary file is there), then Ctrl-C.
        while len(_left(tmp_path)) < 2 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    finally:
        gateway.stop()
    assert process.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    assert out.read_bytes() == EARLIER
    assert _left(tmp_path) == ["steps.jsonl"]

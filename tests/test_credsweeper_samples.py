"""The CredSweeper benchmark locates each expected value in its sample file and counts an item
found when a finding overlaps it."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.privacy.credsweeper_samples import expected, samples
from router.privacy.detect import detect

_KEY = "ghp_" + "Zk3Qw7Rt9Yp2Ls5Dn8Hm1Vc4Xb6Ja0Ue3Gi"


def _label(path: str, line_num: int, line: str, value: str) -> dict[str, object]:
    start = line.find(value)
    return {
        "rule": "Github Classic Token",
        "line_data_list": [
            {
                "path": f"./tests/samples/{path}",
                "line_num": line_num,
                "line": line,
                "value": value,
                "value_start": start,
                "value_end": start + len(value),
            }
        ],
    }


def test_values_are_located_and_binaries_left_out(tmp_path: Path) -> None:
    root = tmp_path / "tests"
    (root / "samples").mkdir(parents=True)
    (root / "data").mkdir()
    (root / "samples" / "env").write_text(f"HOME=/root\nTOKEN={_KEY}\n")
    (root / "samples" / "blob.bin").write_text("\0\0binary")
    labels = [
        _label("env", 2, f"TOKEN={_KEY}", _KEY),
        # A line that is not the one quoted: located by searching the value in the file's line.
        _label("env", 2, f"token = {_KEY}", _KEY),
        _label("env", 1, "HOME=/root", "/root"),
        _label("missing", 1, "x", "x"),
    ]
    (root / "data" / "output.json").write_text(json.dumps(labels))
    texts, binaries = samples(tmp_path)
    assert set(texts) == {"env"} and binaries == ["blob.bin"]
    items = expected(tmp_path, texts)
    start = len("HOME=/root\nTOKEN=")
    assert [v.span for item in items for v in item.values] == [
        (start, start + len(_KEY)),
        (start, start + len(_KEY)),
        (5, 10),
        None,
    ]
    findings = detect(texts["env"].text)
    assert any(f.start <= start < f.end for f in findings)
    assert texts["env"].line_of(start) == 2

"""A py-spy profile of the gateway under load, summarised as where its time goes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path


def py_spy() -> str | None:
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.exists() else shutil.which("py-spy")


def start(binary: str, pid: int, duration_s: float, out: Path) -> subprocess.Popen[bytes]:
    """Sample `pid` without pausing it (--nonblocking), as collapsed stacks in `out`."""
    out.parent.mkdir(parents=True, exist_ok=True)
    command = [binary, "record", "--pid", str(pid), "--duration", str(max(1, round(duration_s)))]
    command += ["--rate", "250", "--format", "raw", "--nolineno", "--nonblocking", "-o", str(out)]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _short(frame: str) -> str:
    # "func (path/to/site-packages/pkg/mod.py)" -> "func (pkg/mod.py)"
    name, _, where = frame.partition(" (")
    where = where.rstrip(")")
    for marker in ("site-packages/", "lib/python3.11/"):
        if marker in where:
            where = where.split(marker, 1)[1]
            break
    else:
        parts = Path(where).parts
        where = "/".join(parts[-2:])
    return f"{name} ({where})"


def summarise(collapsed: Path, top: int = 15) -> list[str]:
    """Top frames by own time and by time including callees, as percentages of all samples."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in collapsed.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [_short(f) for f in stack.split(";")]
        total += count
        own[frames[-1]] += count
        for frame in set(frames):
            inclusive[frame] += count
    if total == 0:
        return ["(no samples)"]
    lines = [f"{total} samples; own time (the frame itself):"]
    lines += [f"  {100 * n / total:5.1f}%  {frame}" for frame, n in own.most_common(top)]
    lines.append("time including callees:")
    lines += [f"  {100 * n / total:5.1f}%  {frame}" for frame, n in inclusive.most_common(top * 2)]
    return lines


def gc_pauses(probe_file: Path, began: float, ended: float) -> list[str]:
    """Garbage-collection pauses of at least 1 ms during [began, ended] (unix time), by generation."""
    try:
        data = json.loads(probe_file.read_text())
    except (OSError, ValueError):
        return ["(no garbage-collection figures: the probe wrote nothing)"]
    lines = []
    window = ended - began
    for generation in (0, 1, 2):
        pauses = [p for at, g, p in data["long"] if g == generation and began <= at <= ended]
        if not pauses:
            continue
        total = sum(pauses)
        lines.append(
            f"GC generation {generation}: {len(pauses)} pauses >= 1 ms in {window:.1f} s, "
            f"{1e3 * total:.0f} ms in all ({100 * total / window:.1f}% of the time), "
            f"longest {1e3 * max(pauses):.1f} ms"
        )
    return lines or [f"GC: no pause of 1 ms or more in {window:.1f} s"]

"""Run outcomes kept apart from the trajectories (a benchmark's report), joined by run id."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from judge.importers import TrajectoryFormatError


def read_outcomes(path: Path) -> dict[str, bool]:
    """Run id -> success, from a SWE-bench report (`resolved_ids` with `completed_ids` or
    `unresolved_ids`), a list of `{instance_id, resolved}` (also under `instances`), or a plain
    `{id: bool}` mapping."""
    try:
        data: Any = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise TrajectoryFormatError(path, None, f"cannot read the outcomes file ({exc.strerror})") from exc
    except orjson.JSONDecodeError as exc:
        raise TrajectoryFormatError(
            path, getattr(exc, "lineno", None), f"the outcomes file is not valid JSON ({exc})"
        ) from exc
    listed = data.get("resolved_ids", data.get("resolved")) if isinstance(data, dict) else None
    if isinstance(listed, list):  # (`resolved`: Multi-SWE-bench's reports name the list so)
        resolved = {str(i) for i in listed}
        others = {str(i) for key in ("completed_ids", "unresolved_ids", "submitted_ids") for i in data.get(key) or []}
        return {run: run in resolved for run in resolved | others}
    entries = data.get("instances") if isinstance(data, dict) and isinstance(data.get("instances"), list) else data
    if isinstance(entries, list):
        outcomes = {}
        for index, entry in enumerate(entries):
            if not isinstance(entry, dict) or not isinstance(entry.get("resolved"), bool) or "instance_id" not in entry:
                raise TrajectoryFormatError(
                    path, None, "each entry needs an instance_id and a boolean resolved", f"[{index}]"
                )
            outcomes[str(entry["instance_id"])] = entry["resolved"]
        return outcomes
    if isinstance(data, dict) and all(isinstance(v, bool) for v in data.values()):
        return {str(k): v for k, v in data.items()}
    raise TrajectoryFormatError(path, 1, "not an outcomes file (resolved_ids, instances, or {id: true/false})")

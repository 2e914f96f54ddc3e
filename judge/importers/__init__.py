"""Trajectory files of real agents, read into one shape: a `Run`, the chat conversation the agent's
model saw (OpenAI chat messages, tool calls included), so that `judge.replay` can compute every
step's features with the very `step_features` the gateway runs.

Formats (and the versions the readers were written against, from the formats' public docs and
source):

| family | file | versions |
|---|---|---|
| `mini-swe-agent` | `*.traj.json` (`trajectory_format` `mini-swe-agent-1`, `-1.1`) | mini-swe-agent 1.x, 2.x |
| `swe-agent` | `*.traj` (`history` and/or `trajectory`) | SWE-agent 0.7, 1.0–1.1 |
| `openhands` | event stream: a JSON list of events, an object with `history`, `output.jsonl` | OpenHands 0.x (V0) |
| `openhands` | the same, of OpenHands agent-SDK events (`kind`: `ActionEvent`, …): `openhands-1` | agent SDK (V1) |
| `claude-code` | session `*.jsonl` (`type` user/assistant lines) | Claude Code 1.x, 2.x |
| `codex` | rollout `*.jsonl` (`session_meta` / `response_item` lines, or the older bare items) | Codex CLI 0.x |
| `terminus-2` | harbor trajectory JSON (ATIF `schema_version` `ATIF-v1.*`) | harbor Terminus-2, ATIF v1.0–1.5 |
| `openai-chat` | plain OpenAI chat logs: `.jsonl` of message lists, a JSON array, one per file | any |
| `tau-bench-tool-calling` | tau-bench results: a JSON list of `{task_id, reward, traj}` | tau-bench |
| `tau2-bench-1` | tau2-bench results: an object of `info`, `tasks`, `simulations` | tau2-bench 0.x–1.x |

A file that is none of these, or is broken, raises `TrajectoryFormatError` naming the file, the
line (of a JSON-lines file, or of a JSON syntax error; the JSON path otherwise) and the problem.
In a file of several runs, a run with no step to read (a conversation without an assistant turn,
an instance whose history is empty) is left out and said (`read_runs`' `skipped`), not an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Message = dict[str, Any]

FAMILIES = ("mini-swe-agent", "swe-agent", "openhands", "claude-code", "codex", "terminus-2", "openai-chat")


class TrajectoryFormatError(ValueError):
    """A trajectory file that cannot be read: the file, the line and the problem."""

    def __init__(self, path: Path | str, line: int | None, problem: str, where: str = "") -> None:
        self.path, self.line, self.problem = str(path), line, problem
        place = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{place}: {problem}" + (f" (at {where})" if where else ""))


@dataclass
class Run:
    """One agent run as its model saw it."""

    trajectory_id: str
    family: str
    messages: list[Message]
    tools: list[dict[str, Any]] | None = None
    outcome: dict[str, Any] | None = None  # {"success": bool, …} when the file or an outcomes file says
    source: str = ""  # the file it came from
    meta: dict[str, Any] = field(default_factory=dict)  # model, agent version: for the card's counts


def as_dict(value: Any) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one (optional fields of loose formats)."""
    return value if isinstance(value, dict) else {}


def family_of(run: Run) -> str:
    """The run's agent family: its harness and major version (`mini-swe-agent-1`), or the harness
    alone when the file does not say its version; `meta["family"]` (`--family`) overrides."""
    chosen = run.meta.get("family")
    if isinstance(chosen, str) and chosen:
        return chosen
    version = str(run.meta.get("version") or "").lstrip("v")
    major = version.split(".", 1)[0]
    if not major.isdecimal():
        major = _ONLY_MAJOR.get(run.family, "")
    return f"{run.family}-{major}" if major else run.family


# Formats whose importer reads one major version only: the family says it when the file does not.
_ONLY_MAJOR = {"openhands": "0"}


def read_run(path: Path) -> Run:
    """The run in one trajectory file, whatever its format (detected from its content)."""
    from judge.importers.detect import read_any

    return read_any(path)


def read_runs(path: Path, skipped: list[str] | None = None) -> list[Run]:
    """The runs in one file: a trajectory file holds one, a chat log one per conversation. A run
    of a file of several that has no step to read is left out, and said in `skipped` (where
    given): the file, its line or place, the run's id and why."""
    from judge.importers.detect import read_all

    return read_all(path, skipped)


def empty_run(path: Path | str, line: int | None, run_id: str, why: str) -> str:
    """What `read_runs` says of a run it left out: the file, the line (or place), the id, why."""
    place = f"{path}:{line}" if line is not None else str(path)
    return f"{place}: run {run_id!r} left out: {why}"

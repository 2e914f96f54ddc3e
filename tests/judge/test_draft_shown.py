"""`draft_creates_shown` and its floor (0.5): an editor's `create` of a path that a recent tool
result showed (listed it, viewed it, created it) is refused when the file exists; a path only the
task or the user names is the file the agent is asked to create, not one known to exist."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from judge.draft import DRAFT_FEATURE_NAMES, SLIP_FLOORS, draft_features, floored
from judge.features import N_FEATURES
from judge.importers import read_runs
from judge.replay import replay

SHOWN = DRAFT_FEATURE_NAMES.index("draft_creates_shown")
EDITOR = [{"type": "function", "function": {"name": "str_replace_editor", "parameters": {"type": "object"}}}]
PATH = "/workspace/calc/test_round.py"
TASK = {"role": "user", "content": f"Fix round_half in /workspace/calc/calc.py and add a regression test in {PATH}."}


def _call(arguments: dict[str, Any], call_id: str = "c1") -> dict[str, Any]:
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": "str_replace_editor", "arguments": json.dumps(arguments)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


CREATE = _call({"command": "create", "path": PATH, "file_text": "def test_half():\n    assert True\n"})


def _result(text: str, call_id: str = "c0") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def _shown(messages: list[Any]) -> float:
    return float(draft_features(CREATE, messages, EDITOR)[SHOWN])


def _served(messages: list[Any], score: float = 0.1) -> float:
    """A draft judge's score `score` of the state and this draft, as the gateway serves it."""
    vector = np.concatenate([np.zeros(N_FEATURES, dtype=np.float32), draft_features(CREATE, messages, EDITOR)])
    return floored(score, vector)


def test_a_path_only_the_task_names_is_not_shown() -> None:
    assert _shown([TASK]) == 0.0
    # nor where the user says it again, or a system prompt does
    again = {"role": "user", "content": f"Remember: the test goes in {PATH}."}
    system = {"role": "system", "content": f"Write tests next to the code, e.g. {PATH}."}
    assert _shown([system, TASK, again]) == 0.0
    assert _served([system, TASK, again]) == 0.1  # no floor


def test_a_path_a_tool_result_showed_is_shown() -> None:
    listing = _call({"command": "view", "path": "/workspace/calc"})
    for result in (
        f"Here's the files and directories up to 2 levels deep in /workspace/calc:\n/workspace/calc/calc.py\n{PATH}",
        f"File created successfully at: {PATH}",
        f"Here's the result of running `cat -n` on {PATH}:\n     1\tdef test_half():",
    ):
        assert _shown([TASK, listing, _result(result)]) == 1.0
        assert _served([TASK, listing, _result(result)]) == SLIP_FLOORS["draft_creates_shown"]


def test_a_result_that_says_the_path_is_missing_does_not_show_it() -> None:
    view = _call({"command": "view", "path": PATH})
    for missing in (
        f"Invalid `path` parameter: {PATH}. The path {PATH} does not exist. Please provide a valid path.",
        f"ls: cannot access '{PATH}': No such file or directory\n[Command finished with exit code 2]",
    ):
        assert _shown([TASK, view, _result(missing)]) == 0.0
    # ... unless another line of a result lists it
    both = f"ls: cannot access '/workspace/calc/x.py': No such file or directory\n{PATH}"
    assert _shown([TASK, view, _result(both)]) == 1.0


def test_an_imported_create_of_the_file_the_task_names_is_not_floored() -> None:
    """The OpenHands SDK instance's step 3 creates the test file its instruction names: it
    succeeded, and its draft value is 0 (no floor)."""
    run = next(run for run in read_runs(Path(__file__).parent / "formats" / "openhands-sdk-output.jsonl"))
    rows = list(replay(run))
    assert PATH in run.messages[0]["content"] and rows[2]["action_failed"] == 0
    assert [row["draft_features"][SHOWN] for row in rows] == [0.0] * len(rows)

"""OpenHands' completion logs (`log_completions`): one JSON file per call to the model, holding the
whole chat it was sent in OpenAI function-calling form (`fncall_messages`) and its answer
(`fncall_response`, a chat completion). The last call of a run holds the run: its messages and
its answer are the chat the model saw, step by step.

Written against the Multi-SWE-bench experiments layout (`trajs/<instance_id>/<model>-<time>.json`,
one file per instance: the run's last call), CodeActAgent of OpenHands 0.x; the family is
`openhands-0`, the run id the instance folder's name and the file's (an outcomes file is joined
by the instance).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judge.importers import Message, Run, TrajectoryFormatError
from judge.importers import as_dict as _dict
from judge.importers.chats import _chat_message

FAMILY = "openhands-0"


def is_completion_log(document: Any) -> bool:
    return isinstance(document, dict) and isinstance(document.get("fncall_messages"), list)


def read_completion_log(path: Path, document: dict[str, Any]) -> Run:
    raw = document["fncall_messages"]
    messages: list[Message] = [
        m for i, e in enumerate(raw) if (m := _chat_message(e, path, f"fncall_messages[{i}]")) is not None
    ]
    choices = _dict(document.get("fncall_response")).get("choices")
    answer = _dict(choices[0]).get("message") if isinstance(choices, list) and choices else None
    if isinstance(answer, dict):
        last = _chat_message({**answer, "role": answer.get("role") or "assistant"}, path, "fncall_response")
        if last is not None:
            messages.append(last)
    if not any(m["role"] == "assistant" for m in messages):
        raise TrajectoryFormatError(path, None, "a completion log with no assistant message: no step to read")
    model = _dict(document.get("fncall_response")).get("model") or _dict(document.get("kwargs")).get("model")
    # The run is the instance's, by this model at this time: the instance alone would name runs of
    # other agents on the same task too; outcomes files name the instance (`instance_id`).
    meta = {"family": FAMILY, "model": model, "format": "openhands completion log", "instance_id": path.parent.name}
    return Run(f"{path.parent.name}.{path.stem}", "openhands", messages, None, None, str(path), meta)

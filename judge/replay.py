"""A run replayed step by step into judge rows (`tandem.judge-row/1`), through `step_features`,
the function the gateway calls on every request: a feature cannot differ between training and
serving.

Step k is the k-th assistant turn. Its state is the conversation before that turn (what the
gateway would have received); its action is the turn; what follows it up to the next assistant
turn is what the action produced. A row carries the features of the state, the action's type and
command, the real task, an excerpt of the latest tool output, the error signals of what the
action produced and `action_failed`: 1 when the harness reported that the action failed
(judge/status.py: exit codes, tool errors, harness messages; never file content), null when
nothing followed. Each step is judged with the run's own record of the labels before the
previous step (judge/record.py), as the gateway keeps it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from judge.actions import classify_message, content_text, most_consequential
from judge.draft import draft_features
from judge.features import FEATURE_VERSION, TrajectoryCounters, step_features
from judge.importers import Message, Run, family_of
from judge.record import LaggedRecord
from judge.rows import ROW_SCHEMA
from judge.signals import error_signals
from judge.status import command_of, failure_reason
from judge.task import real_task

EXCERPT_CHARS = 400  # of the latest tool output: what a teacher is shown about the state
COMMAND_CHARS = 300
DECIMALS = 5


def _command(message: Message) -> str:
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        parts = []
        for call in calls:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                parts.append(f"{function.get('name', '')}({str(function.get('arguments', ''))[:COMMAND_CHARS]})")
        return "; ".join(parts)[:COMMAND_CHARS]
    return content_text(message)[-COMMAND_CHARS:]


def _observed(messages: list[Message], after: int) -> tuple[list[str], bool]:
    """The texts that followed message `after` up to the next assistant turn; whether any did."""
    texts: list[str] = []
    for message in messages[after + 1 :]:
        if message.get("role") == "assistant":
            return texts, True
        texts.append(content_text(message))
    return texts, bool(texts)


def replay(run: Run) -> Iterator[dict[str, Any]]:
    """One row per assistant turn of the run."""
    messages = run.messages
    step = 0
    task = ""
    record = LaggedRecord()
    for index, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        step += 1
        state = messages[:index]
        if step == 1:
            task = real_task(state)
        # No body size: the features are the messages' alone, as the gateway computes them.
        counters = TrajectoryCounters(
            step=step, answered_steps=step - 1, steps_since_cloud=step - 1, record=record.record
        )
        features = step_features(state, counters, run.tools)
        # What a `sees: draft` judge reads of the action: here the action the run really took.
        draft = draft_features(message, state, run.tools, record.record)
        texts, followed = _observed(messages, index)
        signals = sorted({name for text in texts for name in error_signals(text)})
        command, shell = command_of(message)
        reason = failure_reason(command, shell, texts) if followed else None
        action = most_consequential(classify_message(message))
        record.labelled(action, reason is not None if followed else None)
        latest = next((content_text(m) for m in reversed(state) if m.get("role") in ("tool", "user")), "")
        yield {
            "schema": ROW_SCHEMA,
            "trajectory_id": run.trajectory_id,
            "step": step,
            "feature_version": FEATURE_VERSION,
            "features": [round(float(v), DECIMALS) for v in features],
            "draft_features": [round(float(v), DECIMALS) for v in draft],
            "target": "cloud",  # one model ran the whole run; the labels say which steps needed help
            "replayed": True,  # so the target is no routing choice (judge/labels.py)
            "family": family_of(run),
            "action": action.value,
            "command": _command(message),
            "task": task[:500],
            "excerpt": latest[-EXCERPT_CHARS:],
            "next_signals": signals,
            # The harness-status label (judge/status.py); `signals_failed`: the older error-signal
            # one, kept to compare the two.
            "action_failed": int(reason is not None) if followed else None,
            "failure": reason,
            "signals_failed": int(bool(signals)) if followed else None,
            "outcome": run.outcome,
            "edge_wrong": None,
            "teacher_label": None,
        }
